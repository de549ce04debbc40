import { Type } from 'typebox';
import { registerNode } from './registry.ts';
import { main, type Item } from './types.ts';

registerNode({
  type: 'flow.if',
  category: 'flow',
  description: 'Sends each item to `true` or `false` by a JSONata condition on the item (e.g. `score >= 70`, or a `{{ … }}` expression, or a boolean).',
  params: Type.Object(
    {
      condition: Type.Union([Type.String({ minLength: 1, maxLength: 2000 }), Type.Boolean()]),
    },
    { additionalProperties: false },
  ),
  outputs: ['true', 'false'],
  pure: true,
  async execute(_ctx, exec) {
    const outputs: Record<string, Item[]> = { true: [], false: [] };
    const raw = exec.rawParams.condition;
    for (const item of exec.items) {
      let pass: boolean;
      if (typeof raw === 'string' && !raw.includes('{{')) {
        const value = await exec.evaluate(raw, item);
        pass = Boolean(Array.isArray(value) ? value.length : value);
      } else {
        const value = (await exec.params(item)).condition;
        pass = typeof value === 'string' ? value.length > 0 && value !== 'false' : Boolean(value);
      }
      outputs[pass ? 'true' : 'false']!.push(item);
    }
    return { outputs };
  },
});

registerNode({
  type: 'flow.delay',
  category: 'flow',
  description: 'Waits `seconds` or `until` a time (ISO 8601); the run is WAITING meanwhile and resumes on time, even after a restart.',
  params: Type.Object(
    {
      seconds: Type.Optional(Type.Number({ minimum: 0, maximum: 31_536_000 })),
      until: Type.Optional(Type.String({ format: 'date-time', maxLength: 64 })),
    },
    { additionalProperties: false, minProperties: 1, maxProperties: 1, description: 'either seconds or until' },
  ),
  outputs: ['main'],
  async execute(ctx, exec) {
    const params = await exec.params();
    const now = ctx.clock.now().getTime();
    const until = params.until !== undefined ? new Date(params.until) : new Date(now + (params.seconds ?? 0) * 1000);
    if (Number.isNaN(until.getTime())) throw new Error(`flow.delay: "${params.until}" is not a time`);
    if (until.getTime() <= now) return main(exec.items);
    return { wait: { until } };
  },
  async resume(_ctx, exec) {
    return main(exec.items);
  },
});

registerNode({
  type: 'flow.approval',
  category: 'flow',
  description:
    'Creates an approval (title, description, the items as payload) and waits. Approve continues on `approved` (with `editedPayload` as the items when given); reject or expiry continues on `rejected`.',
  params: Type.Object(
    {
      title: Type.String({ minLength: 1, maxLength: 300 }),
      description: Type.Optional(Type.String({ maxLength: 4000 })),
      expiresInSeconds: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 31_536_000 })),
    },
    { additionalProperties: false },
  ),
  outputs: ['approved', 'rejected'],
  async execute(ctx, exec) {
    const params = await exec.params();
    const expiresAt = params.expiresInSeconds !== undefined ? new Date(ctx.clock.now().getTime() + params.expiresInSeconds * 1000) : null;
    return { wait: { approval: { title: params.title, description: params.description ?? null, expiresAt, payload: exec.items } } };
  },
  async resume(_ctx, exec, outcome) {
    if (outcome.kind !== 'approval' || outcome.decision === 'rejected') return { outputs: { approved: [], rejected: exec.items } };
    let items = exec.items;
    const edited = outcome.editedPayload;
    if (Array.isArray(edited)) items = edited.filter((i): i is Item => Boolean(i) && typeof i === 'object' && !Array.isArray(i));
    else if (edited && typeof edited === 'object') items = [edited as Item];
    return { outputs: { approved: items, rejected: [] } };
  },
});
