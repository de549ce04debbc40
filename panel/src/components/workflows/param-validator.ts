/**
 * The JSON Schema validator the params forms (react-jsonschema-form) use, on @cfworker/json-schema:
 * it interprets schemas instead of compiling them to code, so it runs under the panel's
 * Content-Security-Policy (no `unsafe-eval`), where ajv's compiled validators are refused. rjsf asks
 * it which `anyOf` branch some data matches and, live, what is wrong with a node's params; the
 * server's 422 stays the final word when the workflow is saved.
 *
 * A value that holds an expression (`{{ … }}`) is only checked when it runs, as on the server: its
 * errors are left out.
 */
import { Validator, type OutputUnit, type Schema } from '@cfworker/json-schema';
import {
  createErrorHandler,
  getDefaultFormState,
  toErrorSchema,
  unwrapErrorHandler,
  validationDataMerge,
  type CustomValidator,
  type ErrorTransformer,
  type RJSFSchema,
  type RJSFValidationError,
  type UiSchema,
  type ValidationData,
  type ValidatorType,
} from '@rjsf/utils';

const JUNK_OPTION_ID = '_$junk_option_schema_id$_';

export const hasExpression = (value: unknown): value is string => typeof value === 'string' && value.includes('{{');

/** The value at a JSON pointer of the instance (`#/a/0/b`). */
function at(instance: unknown, location: string): unknown {
  const parts = location
    .replace(/^#\/?/, '')
    .split('/')
    .filter((p) => p !== '')
    .map((p) => decodeURIComponent(p).replace(/~1/g, '/').replace(/~0/g, '~'));
  let value = instance;
  for (const part of parts) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** The schema at a keyword location (`#/properties/url/minLength` → the value of minLength). */
function schemaAt(schema: unknown, location: string): unknown {
  return at(schema, location);
}

/** `#/a/0/b` → `.a.0.b` (rjsf's property path). */
const propertyOf = (location: string) =>
  location
    .replace(/^#/, '')
    .split('/')
    .filter(Boolean)
    .map((p) => `.${decodeURIComponent(p)}`)
    .join('');

const TYPE_WORD: Record<string, string> = {
  string: 'text',
  number: 'a number',
  integer: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
};

/** The keywords whose failure only says that something beneath failed: the beneath is reported. */
const WRAPPERS = new Set([
  'properties',
  'patternProperties',
  'items',
  'prefixItems',
  'allOf',
  '$ref',
  'false',
  'contains',
  'dependentSchemas',
  'unevaluatedProperties',
  'unevaluatedItems',
  'then',
  'else',
  'if',
]);

function message(unit: OutputUnit, schema: unknown): { message: string; property: string } | null {
  const value = schemaAt(schema, unit.keywordLocation);
  const property = propertyOf(unit.instanceLocation);
  const plural = (n: unknown, word: string) => `${String(n)} ${word}${n === 1 ? '' : 's'}`;
  switch (unit.keyword) {
    case 'required': {
      const missing = /"([^"]+)"/.exec(unit.error)?.[1];
      return missing === undefined ? null : { message: 'is required', property: `${property}.${missing}` };
    }
    case 'type': {
      const types = (Array.isArray(value) ? value : [value]).map((t) => TYPE_WORD[String(t)] ?? String(t));
      return { message: `must be ${types.join(' or ')}`, property };
    }
    case 'minLength':
      return { message: value === 1 ? 'must not be empty' : `must be at least ${plural(value, 'character')}`, property };
    case 'maxLength':
      return { message: `must be at most ${plural(value, 'character')}`, property };
    case 'minimum':
      return { message: `must be ${String(value)} or more`, property };
    case 'maximum':
      return { message: `must be ${String(value)} or less`, property };
    case 'exclusiveMinimum':
      return { message: `must be more than ${String(value)}`, property };
    case 'exclusiveMaximum':
      return { message: `must be less than ${String(value)}`, property };
    case 'multipleOf':
      return { message: `must be a multiple of ${String(value)}`, property };
    case 'minItems':
      return { message: `needs at least ${plural(value, 'entry')}`.replace('entrys', 'entries'), property };
    case 'maxItems':
      return { message: `takes at most ${plural(value, 'entry')}`.replace('entrys', 'entries'), property };
    case 'minProperties':
      return { message: `needs at least ${plural(value, 'entry')}`.replace('entrys', 'entries'), property };
    case 'maxProperties':
      return { message: `takes at most ${plural(value, 'entry')}`.replace('entrys', 'entries'), property };
    case 'uniqueItems':
      return { message: 'must not repeat an entry', property };
    case 'pattern':
      return { message: `must match ${String(value)}`, property };
    case 'format':
      return {
        message: value === 'date-time' ? 'must be a date and time (ISO 8601, e.g. 2030-01-31T09:00:00Z)' : `must be a valid ${String(value)}`,
        property,
      };
    case 'enum':
    case 'const':
      return { message: `must be one of: ${(Array.isArray(value) ? value : [value]).map((v) => JSON.stringify(v)).join(', ')}`, property };
    case 'anyOf':
    case 'oneOf':
      return { message: 'matches none of the allowed forms', property };
    case 'additionalProperties': {
      const name = /"([^"]+)"/.exec(unit.error)?.[1];
      return { message: name === undefined ? 'has an unknown entry' : `"${name}" is not one of the params of this node`, property };
    }
    case 'not':
      return { message: 'is not allowed here', property };
    default:
      return WRAPPERS.has(unit.keyword) ? null : { message: unit.error, property };
  }
}

/** A validator for rjsf that never compiles code (see the module's comment). */
export class ParamsValidator implements ValidatorType {
  private readonly cache = new WeakMap<object, Validator>();

  private validatorFor(schema: RJSFSchema, root?: RJSFSchema): Validator {
    let validator = this.cache.get(schema);
    if (!validator) {
      validator = new Validator(schema as Schema, '2020-12', false);
      if (root && root !== schema) validator.addSchema(root as Schema);
      this.cache.set(schema, validator);
    }
    return validator;
  }

  /** The problems of `formData`, in rjsf's shape, without those on values that hold expressions. */
  errorsOf(schema: RJSFSchema, formData: unknown): RJSFValidationError[] {
    const result = this.validatorFor(schema).validate(formData === undefined ? {} : formData);
    if (result.valid) return [];
    const seen = new Set<string>();
    const errors: RJSFValidationError[] = [];
    for (const unit of result.errors) {
      // An expression is checked once evaluated, when the workflow runs.
      if (hasExpression(at(formData, unit.instanceLocation))) continue;
      // Within an anyOf, the branches' own failures are noise: the anyOf says it.
      if (/\/(anyOf|oneOf)\/\d+\//.test(unit.keywordLocation)) continue;
      const described = message(unit, schema);
      if (!described) continue;
      const key = `${described.property} ${described.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      errors.push({
        name: unit.keyword,
        property: described.property,
        message: described.message,
        stack: `${described.property.replace(/^\./, '') || 'params'} ${described.message}`,
        schemaPath: unit.keywordLocation,
        params: {},
      });
    }
    return errors;
  }

  validateFormData(
    formData: unknown,
    schema: RJSFSchema,
    customValidate?: CustomValidator,
    transformErrors?: ErrorTransformer,
    uiSchema?: UiSchema,
  ): ValidationData<unknown> {
    let errors = this.errorsOf(schema, formData);
    if (typeof transformErrors === 'function') errors = transformErrors(errors, uiSchema);
    const errorSchema = toErrorSchema(errors);
    if (typeof customValidate !== 'function') return { errors, errorSchema };
    const full = getDefaultFormState(this, schema, formData, schema, true);
    const handler = customValidate(full, createErrorHandler(full), uiSchema, errorSchema);
    return validationDataMerge({ errors, errorSchema }, unwrapErrorHandler(handler));
  }

  isValid(schema: RJSFSchema, formData: unknown, rootSchema: RJSFSchema): boolean {
    if ((schema as { $id?: string }).$id === JUNK_OPTION_ID) return false;
    try {
      return this.validatorFor(schema, rootSchema).validate(formData).valid;
    } catch {
      return false;
    }
  }

  rawValidation<Result = OutputUnit>(schema: RJSFSchema, formData?: unknown): { errors?: Result[]; validationError?: Error } {
    try {
      const result = this.validatorFor(schema).validate(formData);
      return { errors: result.valid ? undefined : (result.errors as unknown as Result[]) };
    } catch (error) {
      return { validationError: error as Error };
    }
  }
}

export const paramsValidator = new ParamsValidator();
