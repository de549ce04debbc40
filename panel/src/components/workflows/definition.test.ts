import { describe, expect, it } from 'vitest';
import { ApiError } from '../../api/client';
import { definitionText, graphOf, jsonError, parseDefinition, problemsOf } from './definition';
import { parsePayload } from '../runs/approval-panel';

describe('the definition editor', () => {
  it('round-trips nodes and edges through its text', () => {
    const def = { nodes: [{ id: 't', type: 'trigger.manual' }], edges: [] };
    expect(parseDefinition(definitionText(def))).toEqual({ ok: true, value: def });
  });

  it('writes node and edge fields in reading order, whatever order the store gave them', () => {
    const text = definitionText({ nodes: [{ name: 'Start', type: 'trigger.manual', id: 't', extra: 1 }], edges: [{ to: 'b', output: 'true', from: 't' }] });
    expect(text.replace(/\s+/g, ' ')).toBe(
      '{ "nodes": [ { "id": "t", "type": "trigger.manual", "name": "Start", "extra": 1 } ], "edges": [ { "from": "t", "to": "b", "output": "true" } ] }',
    );
  });

  it('says where the JSON breaks, by line and column', () => {
    const parsed = parseDefinition('{\n  "nodes": [\n    { "id": "t", }\n  ]\n}');
    expect(parsed.ok).toBe(false);
    // The other engines' wording: Firefox names line and column itself.
    expect(jsonError('x', new SyntaxError('JSON.parse: unexpected character at line 1 column 1 of the JSON data'))).toBe(
      'Invalid JSON at line 1, column 1: unexpected character',
    );
    expect(!parsed.ok && parsed.error).toBe('Invalid JSON at line 3, column 18: Expected double-quoted property name');
  });

  it('refuses shapes that are not a definition, naming what is wrong', () => {
    expect(parseDefinition('[]')).toMatchObject({ ok: false, error: expect.stringContaining('JSON object') });
    expect(parseDefinition('{"nodes": {}}')).toMatchObject({ ok: false, error: expect.stringContaining('"nodes" must be an array') });
    expect(parseDefinition('{"nodes": [], "name": "x"}')).toMatchObject({ ok: false, error: expect.stringContaining('Unknown field "name"') });
    expect(parseDefinition('{"nodes": [1]}')).toMatchObject({ ok: false, error: 'nodes[0] must be an object' });
    expect(parseDefinition('{"nodes": []}')).toEqual({ ok: true, value: { nodes: [], edges: [] } });
  });

  it('draws only what is a node or an edge; the branch defaults to main', () => {
    expect(
      graphOf({
        nodes: [{ id: 'a', type: 'trigger.manual', name: '' }, { type: 'x' }, null],
        edges: [{ from: 'a', to: 'b' }, { from: 'a' }, { from: 'a', to: 'c', output: 'true' }],
      }),
    ).toEqual({
      nodes: [{ id: 'a', type: 'trigger.manual', name: undefined }],
      edges: [
        { from: 'a', to: 'b', output: 'main' },
        { from: 'a', to: 'c', output: 'true' },
      ],
    });
  });
});

describe('problems the API names', () => {
  const invalid = (message: string, details?: unknown) =>
    new ApiError(422, { statusCode: 422, error: 'Unprocessable Entity', code: 'WORKFLOW_INVALID', message, details: details as never });

  it('marks the node of bad params, the edge that dangles and every step of a cycle', () => {
    const params = problemsOf(
      invalid('Node "send" (utility.httpRequest) has invalid params: url is required', [{ nodeId: 'send', message: 'url is required' }]),
    )!;
    expect([...params.nodeIds]).toEqual(['send']);
    expect(params.lines).toEqual(['Node "send": url is required']);

    const dangling = problemsOf(invalid('An edge points to missing node "nope"', [{ from: 'a', to: 'nope' }]))!;
    expect([...dangling.edges]).toEqual(['a→nope']);
    expect(dangling.lines).toEqual(['Edge a → nope']);

    const cycle = problemsOf(invalid('The workflow has a cycle: a → b → a', [{ cycle: ['a', 'b', 'a'] }]))!;
    expect([...cycle.nodeIds].sort()).toEqual(['a', 'b']);
    expect([...cycle.edges].sort()).toEqual(['a→b', 'b→a']);

    const noTrigger = problemsOf(invalid('The workflow has no trigger node'))!;
    expect(noTrigger).toMatchObject({ message: 'The workflow has no trigger node', lines: [] });
  });

  it('maps a 400 field path back to the node at that index of what was sent', () => {
    const error = new ApiError(400, {
      statusCode: 400,
      error: 'Bad Request',
      code: 'VALIDATION_ERROR',
      message: 'body/nodes/1/id must match pattern',
      details: [{ field: 'body.nodes.1.id', message: 'must match pattern' }] as never,
    });
    const problems = problemsOf(error, {
      nodes: [
        { id: 't', type: 'trigger.manual' },
        { id: 'bad id', type: 'data.set' },
      ],
      edges: [],
    })!;
    expect([...problems.nodeIds]).toEqual(['bad id']);
    expect(problems.lines).toEqual(['nodes.1.id (node "bad id"): must match pattern']);
  });

  it('is not about the definition for other errors', () => {
    expect(problemsOf(new ApiError(403, { statusCode: 403, error: 'Forbidden', message: 'no' }))).toBeNull();
    expect(problemsOf(new Error('network'))).toBeNull();
  });
});

describe('the edited payload of an approval', () => {
  it('takes an object or an array of objects, nothing else', () => {
    expect(parsePayload('{"postIds":["p1"]}')).toEqual({ ok: true, value: { postIds: ['p1'] } });
    expect(parsePayload('[{"a":1},{"a":2}]')).toEqual({ ok: true, value: [{ a: 1 }, { a: 2 }] });
    expect(parsePayload('[1]')).toMatchObject({ ok: false });
    expect(parsePayload('"text"')).toMatchObject({ ok: false });
    expect(parsePayload('{oops')).toMatchObject({ ok: false, error: expect.stringMatching(/^Invalid JSON/) });
  });
});
