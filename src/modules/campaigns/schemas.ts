import { Type, Timestamp, Nullable, FreeObject } from '../../platform/http/schemas.ts';
import { MessageTemplateInput } from '../conversations/index.ts';
import { CAMPAIGN_CHANNELS, RECIPIENT_STATUSES } from './service.ts';
import { SUPPRESSION_REASONS } from './suppressions.ts';

const Literals = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));

export const CampaignStatus = Literals(['DRAFT', 'SCHEDULED', 'RUNNING', 'PAUSED', 'FINISHED', 'CANCELED'] as const);
export const RecipientStatus = Literals(RECIPIENT_STATUSES);
export const SuppressionChannel = Type.String({
  minLength: 1,
  maxLength: 20,
  description: `the channel the address is suppressed on: ${CAMPAIGN_CHANNELS.join(', ')}`,
});
export const SuppressionReason = Literals(SUPPRESSION_REASONS);

const Id = Type.String({ minLength: 1, maxLength: 64 });

export const AudienceInput = Type.Union(
  [
    Type.Object({ leadIds: Type.Array(Id, { minItems: 1, maxItems: 100_000 }) }, { additionalProperties: false }),
    Type.Object(
      {
        status: Type.Optional(Type.String({ maxLength: 200, description: 'lead statuses, comma-separated' })),
        tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 20, description: 'leads carrying all of these tags' })),
        minScore: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
        projectId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "the campaign's project, if given (another is refused)" })),
      },
      { additionalProperties: false },
    ),
  ],
  { description: "lead ids of the campaign's project (others are refused, by name), or a filter of its leads; resolved once, at start" },
);

export const StepInput = Type.Object(
  {
    delaySeconds: Type.Integer({ minimum: 0, maximum: 365 * 86400, description: 'after the previous step was sent (the first step: after the start)' }),
    subject: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 500,
        description: 'e-mail: required on the first step; a later step with one is sent with it as a new thread, one without follows up in the thread (Re:)',
      }),
    ),
    text: Type.String({ minLength: 1, maxLength: 8000, description: 'may hold `{{ }}` JSONata over `{ lead }`, e.g. `Hi {{ lead.name }}`' }),
    template: Type.Optional(MessageTemplateInput),
  },
  { additionalProperties: false },
);

export const WindowInput = Type.Object(
  {
    days: Type.Array(Type.Integer({ minimum: 1, maximum: 7 }), { minItems: 1, maxItems: 7, description: 'ISO weekdays: 1 Monday … 7 Sunday' }),
    from: Type.String({ maxLength: 5, description: 'HH:MM, local' }),
    to: Type.String({ maxLength: 5, description: 'HH:MM, local, after from' }),
    timezone: Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone, e.g. Europe/Paris' }),
  },
  { additionalProperties: false },
);

export const SettingsInput = Type.Object(
  {
    // Defaults are the service's (on create); a change names only what it changes.
    stopOnReply: Type.Optional(Type.Boolean({ description: 'no further step for a recipient who replied (default true)' })),
    perMinute: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, description: 'sends a minute at most, across instances (default 60)' })),
    dailyLimit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 10_000_000, description: "sends a day at most, the day of the window's time zone or UTC (default 1000)" }),
    ),
    maxErrors: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, description: 'send failures in a row that pause the campaign (default 50)' })),
    window: Type.Optional(Type.Union([WindowInput, Type.Null()], { description: 'send only within this window; null removes it' })),
  },
  { additionalProperties: false },
);

const Stats = Type.Object(
  {
    total: Type.Integer(),
    sent: Type.Integer(),
    delivered: Type.Integer(),
    read: Type.Integer(),
    replied: Type.Integer(),
    failed: Type.Integer(),
    skipped: Type.Integer(),
    pending: Type.Integer({ description: 'recipients still to be sent to or waiting for an outcome' }),
  },
  { description: 'recipients counted once per counter; skipped and sent never both' },
);

export const CampaignSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    projectId: Type.String(),
    inboxId: Type.String(),
    channel: Type.String(),
    status: CampaignStatus,
    audience: FreeObject('as given'),
    steps: Type.Array(FreeObject('a step')),
    settings: FreeObject('stopOnReply, perMinute, dailyLimit, maxErrors, window'),
    scheduledAt: Nullable(Timestamp),
    testMode: Type.Boolean(),
    total: Type.Integer({ description: 'recipients, fixed at start' }),
    stats: Stats,
    pausedReason: Nullable(Type.String()),
    startedAt: Nullable(Timestamp),
    finishedAt: Nullable(Timestamp),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Campaign' },
);

export const RecipientSchema = Type.Object(
  {
    id: Type.String(),
    leadId: Type.String(),
    address: Nullable(Type.String()),
    status: RecipientStatus,
    skipReason: Type.Optional(Literals(['SUPPRESSED', 'NO_ADDRESS', 'DUPLICATE_ADDRESS', 'NO_OPT_IN', 'IN_OTHER_CAMPAIGN'] as const)),
    currentStep: Type.Integer({ description: 'steps sent so far' }),
    nextSendAt: Nullable(Timestamp),
    sentAt: Nullable(Timestamp),
    deliveredAt: Nullable(Timestamp),
    readAt: Nullable(Timestamp),
    repliedAt: Nullable(Timestamp),
    error: Type.Optional(Type.String()),
  },
  { $id: 'CampaignRecipient' },
);

export const SuppressionSchema = Type.Object(
  {
    id: Type.String(),
    channel: Type.String(),
    address: Type.String(),
    reason: SuppressionReason,
    createdAt: Timestamp,
  },
  { $id: 'Suppression' },
);

export const ConsentSchema = Type.Object(
  {
    id: Type.String(),
    leadId: Type.String(),
    channel: Type.String(),
    status: Literals(['opted_in', 'opted_out'] as const),
    source: Nullable(Type.String()),
    text: Nullable(Type.String()),
    createdAt: Timestamp,
  },
  { $id: 'Consent' },
);
