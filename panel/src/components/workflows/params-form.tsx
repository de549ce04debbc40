/**
 * A node's params as a form generated from its type's JSON Schema (GET …/node-types), with
 * react-jsonschema-form and a theme of the panel's own (Tailwind, no Bootstrap). Every text field
 * may hold `{{ … }}` JSONata expressions (so numbers are typed as text, and selects and checkboxes
 * can switch to an expression); a field that holds one shows its result through `preview`, which the
 * editor wires to the server's evaluate route. The validator interprets schemas without compiling
 * code (param-validator.ts), so nothing here needs `unsafe-eval`.
 */
import { useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
// The Form itself, not the package index: the index also exports a test registry that imports
// @rjsf/validator-ajv8 (ajv compiles validators with `new Function`, which the panel's CSP refuses).
import Form from '@rjsf/core/lib/components/Form.js';
import {
  ADDITIONAL_PROPERTY_FLAG,
  getUiOptions,
  type ArrayFieldItemTemplateProps,
  type ArrayFieldTemplateProps,
  type DescriptionFieldProps,
  type ErrorSchema,
  type FieldErrorProps,
  type FieldProps,
  type FieldTemplateProps,
  type IconButtonProps,
  type MultiSchemaFieldTemplateProps,
  type ObjectFieldTemplateProps,
  type RegistryFieldsType,
  type RegistryWidgetsType,
  type RJSFSchema,
  type TemplatesType,
  type TitleFieldProps,
  type UiSchema,
  type WidgetProps,
  type WrapIfAdditionalTemplateProps,
} from '@rjsf/utils';
import { hasExpression, paramsValidator } from './param-validator';

export type Params = Record<string, unknown>;

/** What the form's fields can reach (rjsf's formContext). */
export interface ParamsFormContext {
  /** The result of an expression as the server evaluates it (null: nothing to show). */
  preview?: (expression: string, param: string) => ReactNode;
}

const input =
  'block w-full rounded-md border-0 px-2.5 py-1.5 text-sm text-slate-900 ring-1 ring-inset ring-slate-300 placeholder:text-slate-400 focus:ring-2 focus:ring-indigo-600 aria-[invalid=true]:ring-red-500 disabled:bg-slate-100';
const smallButton =
  'inline-flex items-center rounded px-1.5 py-0.5 text-xs font-medium text-slate-600 ring-1 ring-slate-300 hover:bg-slate-50 disabled:opacity-50';

// ——— Schemas as the form draws them ———

const ANY_VALUE = 'any JSON value';

const isObjectSchema = (s: unknown): s is Record<string, unknown> => Boolean(s) && typeof s === 'object' && !Array.isArray(s);

const WORDS: Record<string, string> = { url: 'URL', id: 'ID', ids: 'IDs', ms: '(ms)', cron: 'Cron', ai: 'AI' };

/** A param's label from its name: `leadId` → "Lead ID", `timeoutMs` → "Timeout (ms)". */
export function humanize(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
  const text = words.map((w, i) => WORDS[w] ?? (i === 0 ? w.charAt(0).toUpperCase() + w.slice(1) : w)).join(' ');
  return text || name;
}

function titled(schema: unknown, name: string): unknown {
  return isObjectSchema(schema) && !schema.title ? { title: humanize(name), ...schema } : schema;
}

/**
 * The schema the form is drawn from: the node type's own, with choices written as `anyOf` of
 * constants typed (so they draw as a select), a choice between plain values (text or a boolean)
 * left untyped (drawn as one "JSON value" field), and the branches of a choice between objects
 * titled by what tells them apart.
 */
export function formSchemaOf(schema: unknown): RJSFSchema {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!isObjectSchema(node)) return node;
    let out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === 'properties' && isObjectSchema(value)) out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, titled(walk(v), k)]));
      else if (['patternProperties', '$defs', 'definitions'].includes(key) && isObjectSchema(value))
        out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]));
      else out[key] = walk(value);
    }
    for (const key of ['anyOf', 'oneOf'] as const) {
      const options = out[key];
      if (!Array.isArray(options) || options.length === 0) continue;
      if (options.every((o) => isObjectSchema(o) && 'const' in o)) {
        // An `enum`, not an `anyOf`: rjsf would fill an optional choice with its first branch.
        const values = options.map((o) => (o as { const: unknown }).const);
        const types = new Set(values.map((v) => typeof v));
        const { [key]: _options, ...rest } = out;
        out = { ...rest, ...(!out.type && types.size === 1 ? { type: [...types][0] } : {}), enum: values };
      } else if (options.every((o) => isObjectSchema(o) && o.type !== 'object' && o.type !== 'array' && !o.properties)) {
        const { [key]: _options, ...rest } = out;
        out = rest;
      } else {
        out[key] = options.map((o, i) => {
          if (!isObjectSchema(o) || o.title) return o;
          const properties = isObjectSchema(o.properties) ? o.properties : {};
          const constant = Object.entries(properties).find(([, p]) => isObjectSchema(p) && 'const' in p);
          const required = Array.isArray(o.required) ? o.required : [];
          const title = constant
            ? `${constant[0]}: ${String((constant[1] as { const: unknown }).const)}`
            : required.length
              ? `With ${required.join(', ')}`
              : `Form ${i + 1}`;
          return { ...o, title };
        });
      }
    }
    // rjsf draws nothing for an empty schema: mark "any value" so it is drawn (as a JSON value field).
    if (Object.keys(out).length === 0) out.$comment = ANY_VALUE;
    return out;
  };
  const drawn = walk(schema);
  return (isObjectSchema(drawn) ? drawn : { type: 'object' }) as RJSFSchema;
}

/** Params whose text is itself an expression (no braces), by node type: they always show their result. */
const BARE_EXPRESSIONS: Record<string, Record<string, string>> = {
  'flow.if': { condition: 'A JSONata condition on the item, e.g. score >= 70 — or a {{ … }} expression, or true/false.' },
};

/** Long texts get a text area; bare expressions their hint. */
export function uiSchemaOf(type: string, schema: RJSFSchema): UiSchema {
  const ui: UiSchema = { 'ui:submitButtonOptions': { norender: true } };
  const properties = isObjectSchema(schema.properties) ? schema.properties : {};
  for (const [name, property] of Object.entries(properties)) {
    if (!isObjectSchema(property)) continue;
    if (property.type === 'string' && typeof property.maxLength === 'number' && property.maxLength >= 3000 && !property.enum)
      ui[name] = { 'ui:widget': 'textarea' };
  }
  for (const [name, help] of Object.entries(BARE_EXPRESSIONS[type] ?? {}))
    ui[name] = { ...(ui[name] as object | undefined), 'ui:options': { expression: 'bare', rows: 2 }, 'ui:help': help };
  return ui;
}

/** The server's `param` (`url`, `fields.name`, `tags.0`) as an rjsf error schema. */
export function paramError(param: string | undefined, message: string): ErrorSchema | undefined {
  if (!param) return undefined;
  const path = param.split('.').filter(Boolean);
  const root: Record<string, unknown> = {};
  let at = root;
  for (const part of path) {
    const next: Record<string, unknown> = {};
    at[part] = next;
    at = next;
  }
  at.__errors = [message];
  return root as ErrorSchema;
}

// ——— Theme ———

function Preview({ value, param, registry, bare }: { value: unknown; param: string; registry: WidgetProps['registry']; bare: boolean }) {
  const context = registry.formContext as ParamsFormContext | undefined;
  const show = typeof value === 'string' && value.trim() !== '' && (bare || hasExpression(value));
  if (!show || !context?.preview) return null;
  return <>{context.preview(value, param)}</>;
}

/** `root_fields_name` → `fields.name` (the param an input edits). */
const paramOfId = (id: string) => id.replace(/^root_?/, '').replace(/_/g, '.');

function TextInput(props: WidgetProps & { multiline?: boolean }) {
  const { id, value, required, disabled, readonly, autofocus, placeholder, onChange, onBlur, onFocus, options, schema, rawErrors, multiline, registry } = props;
  const numeric = schema.type === 'number' || schema.type === 'integer';
  const text = value === undefined || value === null ? '' : String(value);
  const common = {
    id,
    name: id,
    value: text,
    required,
    disabled: disabled || readonly,
    autoFocus: autofocus,
    placeholder: placeholder || (numeric ? 'A number, or {{ expression }}' : ''),
    'aria-invalid': rawErrors?.length ? true : undefined,
    'aria-describedby': rawErrors?.length ? `${id}__error` : undefined,
    onBlur: (e: { target: { value: string } }) => onBlur(id, e.target.value),
    onFocus: (e: { target: { value: string } }) => onFocus(id, e.target.value),
  };
  const change = (next: string) => onChange(next === '' ? options.emptyValue : next);
  const bare = options.expression === 'bare';
  return (
    <>
      {multiline || bare ? (
        <textarea
          {...common}
          rows={typeof options.rows === 'number' ? options.rows : 4}
          spellCheck={false}
          className={`${input} font-mono text-xs`}
          onChange={(e) => change(e.target.value)}
        />
      ) : (
        <input
          {...common}
          type="text"
          inputMode={numeric && !hasExpression(text) ? 'decimal' : undefined}
          className={`${input} ${hasExpression(text) ? 'font-mono text-xs' : ''}`}
          onChange={(e) => change(e.target.value)}
        />
      )}
      <Preview value={value} param={paramOfId(id)} registry={registry} bare={bare} />
    </>
  );
}

function BaseInputTemplate(props: WidgetProps) {
  return <TextInput {...props} />;
}

function TextareaWidget(props: WidgetProps) {
  return <TextInput {...props} multiline />;
}

/** A fixed choice, or an expression in its place. */
function ExpressionSwitch({
  expression,
  onExpression,
  onFixed,
  disabled,
}: {
  expression: boolean;
  onExpression: () => void;
  onFixed: () => void;
  disabled?: boolean;
}) {
  return expression ? (
    <button type="button" className={smallButton} disabled={disabled} onClick={onFixed}>
      Fixed value
    </button>
  ) : (
    <button
      type="button"
      className={`${smallButton} font-mono`}
      disabled={disabled}
      onClick={onExpression}
      title="Use an expression instead"
      aria-label="Use an expression instead"
    >
      {'{{ }}'}
    </button>
  );
}

/** Whether a field shows an expression: it holds one, or the author chose to write one (and is still at it). */
function useExpressionMode(value: unknown): [boolean, (on: boolean) => void] {
  const [chosen, setChosen] = useState(false);
  return [chosen || hasExpression(value), setChosen];
}

function SelectWidget(props: WidgetProps) {
  const { id, value, required, disabled, readonly, onChange, options, rawErrors } = props;
  const [expression, setExpression] = useExpressionMode(value);
  const selector = id.endsWith('_select');
  if (expression && !selector) {
    return (
      <div className="flex items-start gap-2">
        <div className="min-w-0 flex-1">
          <TextInput {...props} />
        </div>
        <ExpressionSwitch
          expression
          disabled={disabled || readonly}
          onExpression={() => undefined}
          onFixed={() => {
            setExpression(false);
            onChange(undefined);
          }}
        />
      </div>
    );
  }
  const enumOptions = options.enumOptions ?? [];
  const index = enumOptions.findIndex((o) => o.value === value);
  return (
    <div className="flex items-center gap-2">
      <select
        id={id}
        className={`${input} min-w-0 flex-1`}
        value={index === -1 ? '' : String(index)}
        disabled={disabled || readonly}
        aria-invalid={rawErrors?.length ? true : undefined}
        onChange={(e) => onChange(e.target.value === '' ? options.emptyValue : enumOptions[Number(e.target.value)]?.value)}
      >
        {(!required && !selector) || index === -1 ? <option value="">—</option> : null}
        {enumOptions.map((o, i) => (
          <option key={String(o.value)} value={String(i)}>
            {o.label}
          </option>
        ))}
      </select>
      {selector ? null : (
        <ExpressionSwitch
          expression={false}
          disabled={disabled || readonly}
          onExpression={() => {
            setExpression(true);
            onChange('{{  }}');
          }}
          onFixed={() => undefined}
        />
      )}
    </div>
  );
}

function CheckboxWidget(props: WidgetProps) {
  const { id, value, disabled, readonly, onChange, label, schema } = props;
  const [expression, setExpression] = useExpressionMode(value);
  if (expression) {
    return (
      <div className="space-y-1">
        <label htmlFor={id} className="block text-sm font-medium text-slate-700">
          {label}
        </label>
        <div className="flex items-start gap-2">
          <div className="min-w-0 flex-1">
            <TextInput {...props} />
          </div>
          <ExpressionSwitch
            expression
            disabled={disabled || readonly}
            onExpression={() => undefined}
            onFixed={() => {
              setExpression(false);
              onChange(undefined);
            }}
          />
        </div>
      </div>
    );
  }
  return (
    <div className="flex items-center gap-2">
      <label className="inline-flex items-center gap-2 text-sm text-slate-700">
        <input
          id={id}
          type="checkbox"
          className="size-4 rounded border-slate-300 text-indigo-600"
          checked={value === true}
          disabled={disabled || readonly}
          onChange={(e) => onChange(e.target.checked)}
        />
        {label}
      </label>
      {schema.description ? <span className="text-xs text-slate-500">{schema.description}</span> : null}
      <ExpressionSwitch
        expression={false}
        disabled={disabled || readonly}
        onExpression={() => {
          setExpression(true);
          onChange('{{  }}');
        }}
        onFixed={() => undefined}
      />
    </div>
  );
}

/** A number as typed: a number when it reads as one, else the text (an expression, or a typo the validator names). */
export function parseNumberText(text: string): unknown {
  if (text.trim() === '') return undefined;
  const n = Number(text);
  return !hasExpression(text) && Number.isFinite(n) ? n : text;
}

/**
 * Numbers typed as text, so an expression can stand in their place (rjsf's own number field drops
 * a trailing dot, which `{{ $.score }}` has mid-typing). What is shown is what was typed.
 */
function NumberField(props: FieldProps) {
  const { formData, onChange, fieldPathId, disabled, readonly, registry, rawErrors, required } = props;
  const id = fieldPathId.$id;
  const [text, setText] = useState(() => (formData === undefined || formData === null ? '' : String(formData)));
  const echo = useRef<unknown>(formData);
  useEffect(() => {
    if (echo.current !== formData) {
      echo.current = formData;
      setText(formData === undefined || formData === null ? '' : String(formData));
    }
  }, [formData]);
  const expression = hasExpression(text);
  return (
    <>
      <input
        id={id}
        name={id}
        type="text"
        inputMode={expression ? undefined : 'decimal'}
        value={text}
        required={required}
        disabled={disabled || readonly}
        placeholder="A number, or {{ expression }}"
        aria-invalid={rawErrors?.length ? true : undefined}
        aria-describedby={rawErrors?.length ? `${id}__error` : undefined}
        className={`${input} ${expression ? 'font-mono text-xs' : ''}`}
        onChange={(e) => {
          setText(e.target.value);
          const value = parseNumberText(e.target.value);
          echo.current = value;
          onChange(value, fieldPathId.path);
        }}
      />
      <Preview value={text} param={paramOfId(id)} registry={registry as WidgetProps['registry']} bare={false} />
    </>
  );
}

/** Text, or JSON for anything else: `42`, `true`, `{ "a": 1 }`, `"42"` (text that looks like a number). */
export function parseJsonValue(text: string): unknown {
  if (text.trim() === '') return undefined;
  if (/^\s*(\{|\[|"|-?\d|true\s*$|false\s*$|null\s*$)/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

/** The text of a value; `null` (what a new entry starts as) reads as empty. */
export function jsonValueText(value: unknown): string {
  if (value === undefined || value === null || value === '') return '';
  if (typeof value === 'string') return parseJsonValue(value) === value ? value : JSON.stringify(value);
  return JSON.stringify(value, null, typeof value === 'object' && value !== null ? 2 : undefined);
}

/** A param of any type (a value of `data.set`'s fields, an HTTP body, a condition): text, or JSON. */
function JsonValueField(props: FieldProps) {
  const { formData, onChange, fieldPathId, disabled, readonly, uiSchema, registry, rawErrors } = props;
  const id = fieldPathId.$id;
  const [text, setText] = useState(() => jsonValueText(formData));
  // Follow changes made elsewhere (undo, another field), not the echo of what is typed here.
  const echo = useRef(formData);
  useEffect(() => {
    if (jsonValueText(echo.current) !== jsonValueText(formData)) {
      echo.current = formData;
      setText(jsonValueText(formData));
    }
  }, [formData]);
  const options = getUiOptions(uiSchema);
  const bare = options.expression === 'bare';
  const multiline = bare || text.includes('\n') || (formData !== null && typeof formData === 'object');
  const change = (next: string) => {
    setText(next);
    const value = parseJsonValue(next);
    echo.current = value;
    onChange(value, fieldPathId.path);
  };
  const common = {
    id,
    value: text,
    disabled: disabled || readonly,
    spellCheck: false,
    placeholder: bare ? '' : 'Text, {{ expression }}, or JSON (42, true, { … })',
    'aria-invalid': rawErrors?.length ? true : undefined,
  };
  return (
    <>
      {multiline ? (
        <textarea
          {...common}
          rows={typeof options.rows === 'number' ? options.rows : 3}
          className={`${input} font-mono text-xs`}
          onChange={(e) => change(e.target.value)}
        />
      ) : (
        <input {...common} type="text" className={`${input} ${hasExpression(text) ? 'font-mono text-xs' : ''}`} onChange={(e) => change(e.target.value)} />
      )}
      <Preview value={parseJsonValue(text)} param={paramOfId(id)} registry={registry as WidgetProps['registry']} bare={bare} />
    </>
  );
}

function FieldTemplate(props: FieldTemplateProps) {
  const { id, label, children, errors, help, description, hidden, required, displayLabel, uiSchema, schema } = props;
  const options = getUiOptions(uiSchema);
  if (hidden) return <div className="hidden">{children}</div>;
  const checkbox = schema.type === 'boolean' && options.widget !== 'select';
  const container = schema.type === 'object' || schema.type === 'array';
  return (
    <WrapIfAdditionalTemplate {...props}>
      <div className="space-y-1">
        {displayLabel && !checkbox && !container ? (
          ADDITIONAL_PROPERTY_FLAG in schema ? (
            <>
              <span aria-hidden="true" className="block text-xs font-medium text-slate-600">
                Value
              </span>
              <label htmlFor={id} className="sr-only">{`Value of ${label}`}</label>
            </>
          ) : (
            <label htmlFor={id} className="block text-sm font-medium text-slate-700">
              {label}
              {required ? (
                <span className="text-red-600" aria-hidden="true">
                  {' '}
                  *
                </span>
              ) : null}
            </label>
          )
        ) : null}
        {displayLabel && description && !container ? description : null}
        {children}
        {errors}
        {help}
      </div>
    </WrapIfAdditionalTemplate>
  );
}

function DescriptionFieldTemplate({ id, description }: DescriptionFieldProps) {
  if (!description) return null;
  return (
    <p id={id} className="text-xs text-slate-500">
      {description}
    </p>
  );
}

function TitleFieldTemplate({ id, title, required }: TitleFieldProps) {
  return (
    <legend id={id} className="text-sm font-medium text-slate-700">
      {title}
      {required ? (
        <span className="text-red-600" aria-hidden="true">
          {' '}
          *
        </span>
      ) : null}
    </legend>
  );
}

function FieldErrorTemplate({ errors, fieldPathId }: FieldErrorProps) {
  const list = (errors ?? []).filter(Boolean);
  if (!list.length) return null;
  return (
    <ul id={`${fieldPathId.$id}__error`} className="space-y-0.5">
      {list.map((error, i) => (
        <li key={i} className="text-xs text-red-600">
          {error}
        </li>
      ))}
    </ul>
  );
}

function FieldHelpTemplate({ help }: { help?: ReactNode }) {
  return help ? <p className="text-xs text-slate-500">{help}</p> : null;
}

function ObjectFieldTemplate(props: ObjectFieldTemplateProps) {
  const { title, description, properties, onAddProperty, registry, schema, uiSchema, formData, disabled, readonly, fieldPathId, required } = props;
  const root = fieldPathId.path.length === 0;
  const { AddButton } = registry.templates.ButtonTemplates;
  const expandable =
    Boolean(schema.additionalProperties || schema.patternProperties) &&
    getUiOptions(uiSchema).expandable !== false &&
    !(typeof schema.maxProperties === 'number' && formData && Object.keys(formData).length >= schema.maxProperties);
  const body = (
    <div className="space-y-3">
      {properties
        .filter((p) => !p.hidden)
        .map((p) => (
          <div key={p.name}>{p.content}</div>
        ))}
      {expandable ? <AddButton className="" onClick={onAddProperty} disabled={disabled || readonly} uiSchema={uiSchema} registry={registry} /> : null}
    </div>
  );
  if (root) return properties.length === 0 && !expandable ? <p className="text-sm text-slate-500">This node takes no params.</p> : body;
  return (
    <fieldset id={fieldPathId.$id} className="space-y-2 rounded-md p-3 ring-1 ring-slate-200">
      {title ? (
        <legend className="px-1 text-sm font-medium text-slate-700">
          {title}
          {required ? (
            <span className="text-red-600" aria-hidden="true">
              {' '}
              *
            </span>
          ) : null}
        </legend>
      ) : null}
      {description ? <p className="text-xs text-slate-500">{description}</p> : null}
      {properties.length === 0 && expandable ? <p className="text-xs text-slate-500">None yet.</p> : null}
      {body}
    </fieldset>
  );
}

function WrapIfAdditionalTemplate(props: WrapIfAdditionalTemplateProps) {
  const { id, label, onKeyRenameBlur, onRemoveProperty, schema, children, disabled, readonly, registry, uiSchema } = props;
  if (!(ADDITIONAL_PROPERTY_FLAG in schema)) return <>{children}</>;
  const { RemoveButton } = registry.templates.ButtonTemplates;
  return (
    <div className="grid grid-cols-[minmax(0,2fr)_minmax(0,3fr)_auto] items-start gap-2">
      <div className="space-y-1">
        <label htmlFor={`${id}-key`} className="block text-xs font-medium text-slate-600">
          Name
        </label>
        <input
          id={`${id}-key`}
          aria-label={`Name of ${label}`}
          key={label}
          type="text"
          className={input}
          defaultValue={label}
          disabled={disabled || readonly}
          onBlur={onKeyRenameBlur}
        />
      </div>
      <div>{children}</div>
      <div className="pt-6">
        <RemoveButton onClick={onRemoveProperty} disabled={disabled || readonly} uiSchema={uiSchema} registry={registry} title={`Remove ${label}`} />
      </div>
    </div>
  );
}

function ArrayFieldTemplate(props: ArrayFieldTemplateProps) {
  const { title, items, canAdd, onAddClick, disabled, readonly, registry, uiSchema, schema, fieldPathId, required } = props;
  const { AddButton } = registry.templates.ButtonTemplates;
  return (
    <fieldset id={fieldPathId.$id} className="space-y-2 rounded-md p-3 ring-1 ring-slate-200">
      <legend className="px-1 text-sm font-medium text-slate-700">
        {getUiOptions(uiSchema).title ?? title}
        {required ? (
          <span className="text-red-600" aria-hidden="true">
            {' '}
            *
          </span>
        ) : null}
      </legend>
      {schema.description ? <p className="text-xs text-slate-500">{schema.description}</p> : null}
      {items.length === 0 ? <p className="text-xs text-slate-500">None yet.</p> : <div className="space-y-2">{items}</div>}
      {canAdd ? <AddButton onClick={onAddClick} disabled={disabled || readonly} uiSchema={uiSchema} registry={registry} /> : null}
    </fieldset>
  );
}

function ArrayFieldItemTemplate(props: ArrayFieldItemTemplateProps) {
  const { children, buttonsProps: b, hasToolbar, index } = props;
  const off = b.disabled || b.readonly;
  return (
    <div className="flex items-start gap-2">
      <div className="min-w-0 flex-1">{children}</div>
      {hasToolbar ? (
        <div className="flex gap-1 pt-0.5">
          {b.hasMoveUp || b.hasMoveDown ? (
            <>
              <button
                type="button"
                className={smallButton}
                disabled={off || !b.hasMoveUp}
                onClick={b.onMoveUpItem}
                aria-label={`Move entry ${index + 1} up`}
                title="Move up"
              >
                ↑
              </button>
              <button
                type="button"
                className={smallButton}
                disabled={off || !b.hasMoveDown}
                onClick={b.onMoveDownItem}
                aria-label={`Move entry ${index + 1} down`}
                title="Move down"
              >
                ↓
              </button>
            </>
          ) : null}
          {b.hasRemove ? (
            <button type="button" className={smallButton} disabled={off} onClick={b.onRemoveItem} aria-label={`Remove entry ${index + 1}`} title="Remove">
              ✕
            </button>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

function MultiSchemaFieldTemplate({ selector, optionSchemaField }: MultiSchemaFieldTemplateProps) {
  return (
    <div className="space-y-3">
      <div className="[&_label]:text-sm">{selector}</div>
      {optionSchemaField}
    </div>
  );
}

function IconButton({
  children,
  className = '',
  iconType: _iconType,
  icon: _icon,
  uiSchema: _uiSchema,
  registry: _registry,
  ...rest
}: IconButtonProps & { children?: ReactNode }) {
  return (
    <button type="button" className={`${smallButton} ${className}`} {...rest}>
      {children}
    </button>
  );
}

const ButtonTemplates: Partial<TemplatesType['ButtonTemplates']> = {
  AddButton: (props: IconButtonProps) => (
    <IconButton {...props} className="text-indigo-700">
      + Add
    </IconButton>
  ),
  RemoveButton: (props: IconButtonProps) => (
    <IconButton aria-label={props.title ?? 'Remove'} {...props} title={props.title ?? 'Remove'}>
      ✕
    </IconButton>
  ),
  MoveUpButton: (props: IconButtonProps) => (
    <IconButton aria-label="Move up" title="Move up" {...props}>
      ↑
    </IconButton>
  ),
  MoveDownButton: (props: IconButtonProps) => (
    <IconButton aria-label="Move down" title="Move down" {...props}>
      ↓
    </IconButton>
  ),
  CopyButton: (props: IconButtonProps) => (
    <IconButton aria-label="Copy" title="Copy" {...props}>
      ⧉
    </IconButton>
  ),
  ClearButton: (props: IconButtonProps) => (
    <IconButton aria-label="Clear" title="Clear" {...props}>
      ✕
    </IconButton>
  ),
  SubmitButton: () => null,
};

const templates: Partial<TemplatesType> = {
  BaseInputTemplate,
  FieldTemplate,
  DescriptionFieldTemplate,
  TitleFieldTemplate,
  FieldErrorTemplate,
  FieldHelpTemplate: FieldHelpTemplate as TemplatesType['FieldHelpTemplate'],
  ObjectFieldTemplate,
  WrapIfAdditionalTemplate,
  ArrayFieldTemplate,
  ArrayFieldItemTemplate,
  MultiSchemaFieldTemplate,
  ButtonTemplates: ButtonTemplates as TemplatesType['ButtonTemplates'],
  ErrorListTemplate: () => null,
};

const widgets: RegistryWidgetsType = { TextareaWidget, SelectWidget, CheckboxWidget, TextWidget: BaseInputTemplate };
const fields: RegistryFieldsType = { FallbackField: JsonValueField, NumberField };

const stable = (value: unknown) => JSON.stringify(value ?? {});

/**
 * The params form of one node. `onChange` gets the params as the author edits them (never an echo
 * of what was given: drawing the form changes nothing). `problem` is the API's word on one param.
 */
export function ParamsForm({
  type,
  schema,
  params,
  onChange,
  disabled,
  context,
  problem,
}: {
  type: string;
  schema: Record<string, unknown>;
  params: Params;
  onChange: (params: Params) => void;
  disabled?: boolean;
  context?: ParamsFormContext;
  problem?: { param?: string; message: string };
}) {
  const formSchema = useMemo(() => formSchemaOf(schema), [schema]);
  const uiSchema = useMemo(() => uiSchemaOf(type, formSchema), [type, formSchema]);
  const extraErrors = useMemo(() => (problem ? paramError(problem.param, problem.message) : undefined), [problem]);
  const given = useRef(stable(params));
  useEffect(() => {
    given.current = stable(params);
  }, [params]);
  return (
    <Form
      schema={formSchema}
      uiSchema={uiSchema}
      formData={params}
      validator={paramsValidator}
      templates={templates}
      widgets={widgets}
      fields={fields}
      formContext={context}
      extraErrors={extraErrors}
      disabled={disabled}
      liveValidate
      showErrorList={false}
      noHtml5Validate
      experimental_defaultFormStateBehavior={{ emptyObjectFields: 'skipEmptyDefaults', arrayMinItems: { populate: 'never' } }}
      onChange={(event) => {
        const next = (event.formData ?? {}) as Params;
        const text = stable(next);
        if (text === given.current) return;
        given.current = text;
        onChange(next);
      }}
      onSubmit={() => undefined}
      className="space-y-3"
    />
  );
}
