import { Type } from 'typebox';
import { registerNode } from './registry.ts';
import { main } from './types.ts';

// A trigger emits one item: the run's input. What starts the run differs per type.
const passThrough = async (_ctx: unknown, exec: { items: Record<string, unknown>[] }) => main(exec.items);

registerNode({
  type: 'trigger.manual',
  category: 'trigger',
  description: 'Started through the API (POST …/workflows/:id/run) or from a report recommendation; emits the run input.',
  params: Type.Object({}, { additionalProperties: false }),
  outputs: ['main'],
  trigger: true,
  pure: true,
  execute: passThrough,
});

registerNode({
  type: 'trigger.event',
  category: 'trigger',
  description:
    "Starts a run for each platform event of the listed types in the workflow's organization (and project, when the workflow has one); the run input is the event envelope.",
  params: Type.Object(
    {
      events: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 30 }),
    },
    { additionalProperties: false },
  ),
  outputs: ['main'],
  trigger: true,
  pure: true,
  execute: passThrough,
});

registerNode({
  type: 'trigger.schedule',
  category: 'trigger',
  description: 'Starts a run at the times of a cron expression (5 or 6 fields) in a time zone (default UTC); the run input is { scheduledAt }.',
  params: Type.Object(
    {
      cron: Type.String({ minLength: 1, maxLength: 120 }),
      timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    },
    { additionalProperties: false },
  ),
  outputs: ['main'],
  trigger: true,
  pure: true,
  execute: passThrough,
});

registerNode({
  type: 'trigger.webhook',
  category: 'trigger',
  description:
    "Starts a run when a JSON body is POSTed to the workflow's public webhook URL (POST /api/v1/hooks/:workflowId/:token); the run input is the body.",
  params: Type.Object({}, { additionalProperties: false }),
  outputs: ['main'],
  trigger: true,
  pure: true,
  execute: passThrough,
});
