import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { formSchemaOf, humanize, jsonValueText, ParamsForm, parseJsonValue, type Params } from './params-form';
import { paramsValidator } from './param-validator';
import nodeTypes from './fixtures/node-types.json';

// The node types as GET …/node-types serves them (the fixture is checked against the live server by
// e2e/workflow-editor.test.ts, which rewrites it with UPDATE_FIXTURES=1).
type Schema = Record<string, unknown>;
const TYPES = nodeTypes as { type: string; params: Schema; outputs: string[] }[];

/** A value for every param of a schema (the first branch of a choice between objects). */
function sample(schema: Schema, name = 'value'): unknown {
  if (Array.isArray(schema.anyOf) && schema.anyOf.every((o) => 'const' in (o as Schema))) return (schema.anyOf[0] as Schema).const;
  if (Array.isArray(schema.anyOf) && (schema.anyOf[0] as Schema).type === 'object') return sample(schema.anyOf[0] as Schema);
  if (Array.isArray(schema.anyOf)) return sample(schema.anyOf[0] as Schema, name);
  if ('const' in schema) return schema.const;
  switch (schema.type) {
    case 'string':
      return schema.format === 'date-time' ? '2030-01-31T09:00:00Z' : `${name} text`;
    case 'number':
    case 'integer':
      return typeof schema.minimum === 'number' ? Math.max(schema.minimum, 1) : 5;
    case 'boolean':
      return true;
    case 'array':
      return [sample((schema.items ?? {}) as Schema, name)];
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) out[key] = sample(value, key);
      if (schema.patternProperties) out.someKey = sample(Object.values(schema.patternProperties as Record<string, Schema>)[0]!, 'someKey');
      if (schema.maxProperties === 1) return Object.fromEntries(Object.entries(out).slice(0, 1));
      return out;
    }
    default:
      return 'any value';
  }
}

function Harness({
  type,
  schema,
  initial,
  onChange,
  preview,
  problem,
}: {
  type: string;
  schema: Schema;
  initial: Params;
  onChange: (p: Params) => void;
  preview?: (e: string, p: string) => React.ReactNode;
  problem?: { param?: string; message: string };
}) {
  const [params, setParams] = useState(initial);
  return (
    <ParamsForm
      type={type}
      schema={schema}
      params={params}
      context={preview ? { preview } : undefined}
      problem={problem}
      onChange={(p) => {
        setParams(p);
        onChange(p);
      }}
    />
  );
}

afterEach(cleanup);

const schemaOf = (type: string) => TYPES.find((t) => t.type === type)!.params;

describe('the params form of every node type', () => {
  for (const t of TYPES) {
    it(`${t.type}: draws every param, changes nothing by drawing, and edits one`, async () => {
      const user = userEvent.setup();
      const onChange = vi.fn();
      const params = sample(t.params) as Params;
      const { container } = render(<Harness type={t.type} schema={t.params} initial={params} onChange={onChange} />);
      expect(onChange).not.toHaveBeenCalled();
      const form = container.querySelector('form')!;

      const drawn = formSchemaOf(t.params);
      const properties = Object.entries((drawn.properties ?? (drawn.anyOf?.[0] as Schema | undefined)?.properties ?? {}) as Record<string, Schema>);
      if (properties.length === 0) {
        expect(within(form).getByText('This node takes no params.')).toBeInTheDocument();
        return;
      }
      for (const [name] of properties) {
        if (!(name in params)) continue;
        // Each param is a field (or a group of fields) named after it.
        const label = humanize(name);
        const named =
          within(form).queryAllByRole('textbox', { name: label }).length +
          within(form).queryAllByRole('combobox', { name: label }).length +
          within(form).queryAllByRole('checkbox', { name: label }).length +
          within(form).queryAllByRole('group', { name: label }).length;
        expect(named, `field for ${name}`).toBeGreaterThan(0);
      }

      // Edit the first plain text param: only it changes.
      const text = properties.find(([name, s]) => s.type === 'string' && !s.enum && name in params && !s.format);
      if (text) {
        const field = within(form).getByRole('textbox', { name: humanize(text[0]) });
        await user.clear(field);
        await user.type(field, 'edited');
        expect(onChange).toHaveBeenLastCalledWith({ ...params, [text[0]]: 'edited' });
      }
    });
  }
});

describe('fields', () => {
  it('a choice is a select, and an optional one is not filled in by itself', async () => {
    const user = userEvent.setup();
    const onChange = vi.fn();
    render(<Harness type="leads.update" schema={schemaOf('leads.update')} initial={{ leadId: 'l1' }} onChange={onChange} />);
    const status = screen.getByRole('combobox', { name: 'Status' });
    expect(status).toHaveValue('');
    await user.selectOptions(status, 'QUALIFIED');
    expect(onChange).toHaveBeenLastCalledWith({ leadId: 'l1', status: 'QUALIFIED' });
  });

  it('numbers are numbers, and may be expressions instead, which are not held against their schema', async () => {
    const user = userEvent.setup();
    const onChange = vi.fn();
    render(<Harness type="flow.delay" schema={schemaOf('flow.delay')} initial={{}} onChange={onChange} />);
    const seconds = screen.getByRole('textbox', { name: 'Seconds' });
    await user.type(seconds, '-3');
    expect(onChange).toHaveBeenLastCalledWith({ seconds: -3 });
    expect(await screen.findByText('must be 0 or more')).toBeInTheDocument();
    await user.clear(seconds);
    await user.type(seconds, '{{{{ $.wait }}');
    expect(onChange).toHaveBeenLastCalledWith({ seconds: '{{ $.wait }}' });
    expect(screen.queryByText(/must be/)).toBeNull();
  });

  it('a select and a checkbox can hold an expression instead of a fixed value', async () => {
    const user = userEvent.setup();
    const onChange = vi.fn();
    render(
      <Harness type="utility.httpRequest" schema={schemaOf('utility.httpRequest')} initial={{ method: 'GET', url: 'https://x.example' }} onChange={onChange} />,
    );
    await user.click(screen.getByRole('button', { name: 'Use an expression instead' }));
    expect(onChange).toHaveBeenLastCalledWith({ method: '{{  }}', url: 'https://x.example' });
    const method = screen.getByRole('textbox', { name: 'Method' });
    await user.clear(method);
    await user.type(method, '{{{{ $.verb }}');
    expect(onChange).toHaveBeenLastCalledWith({ method: '{{ $.verb }}', url: 'https://x.example' });
    await user.click(screen.getByRole('button', { name: 'Fixed value' }));
    expect(screen.getByRole('combobox', { name: 'Method' })).toBeInTheDocument();
  });

  it('named values (data.set fields) are added, renamed and typed: text, or JSON', async () => {
    const user = userEvent.setup();
    const onChange = vi.fn();
    render(<Harness type="data.set" schema={schemaOf('data.set')} initial={{ fields: { score: 80 } }} onChange={onChange} />);
    expect(screen.getByRole('textbox', { name: 'Value of score' })).toHaveValue('80');
    await user.click(screen.getByRole('button', { name: '+ Add' }));
    const key = screen.getByRole('textbox', { name: 'Name of newKey' });
    await user.clear(key);
    await user.type(key, 'tier');
    await user.tab();
    const value = screen.getByRole('textbox', { name: 'Value of tier' });
    await user.type(value, 'gold');
    expect(onChange).toHaveBeenLastCalledWith({ fields: { score: 80, tier: 'gold' } });
    await user.clear(value);
    await user.type(value, '{{ "a": [[1, true] }');
    expect(onChange).toHaveBeenLastCalledWith({ fields: { score: 80, tier: { a: [1, true] } } });
    await user.click(screen.getByRole('button', { name: 'Remove score' }));
    expect(onChange).toHaveBeenLastCalledWith({ fields: { tier: { a: [1, true] } } });
  });

  it('a condition shows its result through the preview, and so does any param that holds {{ … }}', async () => {
    const user = userEvent.setup();
    const preview = vi.fn((expression: string, param: string) => (
      <span>
        preview of {param}: {expression}
      </span>
    ));
    render(<Harness type="flow.if" schema={schemaOf('flow.if')} initial={{ condition: 'score >= 70' }} onChange={() => undefined} preview={preview} />);
    expect(screen.getByText('preview of condition: score >= 70')).toBeInTheDocument();
    render(
      <Harness
        type="utility.webhookOut"
        schema={schemaOf('utility.webhookOut')}
        initial={{ url: 'https://hooks.example' }}
        onChange={() => undefined}
        preview={preview}
      />,
    );
    expect(screen.queryByText(/preview of url/)).toBeNull();
    const event = screen.getByRole('textbox', { name: 'Event' });
    await user.type(event, 'lead.{{{{ $.kind }}');
    expect(screen.getByText('preview of event: lead.{{ $.kind }}')).toBeInTheDocument();
  });

  it("shows what is missing, and the API's word on a param", async () => {
    const user = userEvent.setup();
    const { rerender } = render(<Harness type="utility.webhookOut" schema={schemaOf('utility.webhookOut')} initial={{}} onChange={() => undefined} />);
    await user.type(screen.getByRole('textbox', { name: 'Event' }), 'x');
    expect(await screen.findByText('is required')).toBeInTheDocument();
    rerender(
      <Harness
        type="utility.webhookOut"
        schema={schemaOf('utility.webhookOut')}
        initial={{ url: 'ftp://x' }}
        onChange={() => undefined}
        problem={{ param: 'url', message: 'must be an http(s) URL' }}
      />,
    );
    expect(await screen.findByText('must be an http(s) URL')).toBeInTheDocument();
  });

  it('a choice between forms (messaging.send) picks the branch the params match', () => {
    render(
      <Harness
        type="messaging.send"
        schema={schemaOf('messaging.send')}
        initial={{ channel: 'webhook', url: 'https://gw.example', to: 'a@b.example', text: 'Hi' }}
        onChange={() => undefined}
      />,
    );
    expect(screen.getByRole('textbox', { name: 'URL' })).toHaveValue('https://gw.example');
    expect(screen.queryByRole('textbox', { name: 'Inbox ID' })).toBeNull();
  });
});

describe('JSON values and the validator', () => {
  it('reads text as text and JSON as JSON', () => {
    expect(parseJsonValue('hello')).toBe('hello');
    expect(parseJsonValue('42')).toBe(42);
    expect(parseJsonValue('"42"')).toBe('42');
    expect(parseJsonValue('true')).toBe(true);
    expect(parseJsonValue('{"a":')).toBe('{"a":');
    expect(parseJsonValue('')).toBeUndefined();
    for (const value of ['hello', 42, '42', true, { a: [1] }, [null], '{{ x }}']) expect(parseJsonValue(jsonValueText(value))).toEqual(value);
  });

  it('validates without compiling code, in words, leaving expressions to run time', () => {
    const schema = formSchemaOf(schemaOf('utility.httpRequest'));
    const errors = paramsValidator.errorsOf(schema, { method: 'TRACE', url: '', timeoutMs: 5, extra: 1 });
    expect(errors.map((e) => `${e.property} ${e.message}`).sort()).toEqual(
      [
        ' "extra" is not one of the params of this node',
        '.method must be one of: "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"',
        '.timeoutMs must be 100 or more',
        '.url must not be empty',
      ].sort(),
    );
    expect(paramsValidator.errorsOf(schema, { method: '{{ $.m }}', url: 'https://x', timeoutMs: '{{ $.t }}' })).toEqual([]);
    expect(paramsValidator.isValid({ type: 'string' }, 3, {})).toBe(false);
  });
});
