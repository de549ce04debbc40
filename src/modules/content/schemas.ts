import { Type, Timestamp, Nullable, FreeObject, ListQueryProps } from '../../platform/http/schemas.ts';

export const PlatformSchema = Type.Union([Type.Literal('LINKEDIN'), Type.Literal('X')]);
const Actor = Type.Object({ type: Type.String(), id: Type.String() });
const Hashtags = Type.Array(Type.String({ minLength: 2, maxLength: 100, pattern: '^#[^\\s#]+$', description: 'with the leading #' }), { maxItems: 30 });
const MediaIds = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 20 });
const Body = Type.String({ minLength: 1, maxLength: 10_000, description: 'X: 280 as X counts (links 23, emoji/CJK 2); LinkedIn: 3,000 — hashtags included' });
const ScheduledAt = Type.String({ format: 'date-time', maxLength: 40, description: 'ISO 8601 with an offset' });

export const PostSchema = Type.Object(
  {
    id: Type.String(),
    projectId: Type.String(),
    platform: PlatformSchema,
    body: Type.String(),
    hashtags: Type.Array(Type.String()),
    mediaIds: Type.Array(Type.String()),
    scheduledAt: Nullable(Timestamp),
    integrationId: Nullable(Type.String()),
    status: Type.Union([
      Type.Literal('DRAFT'),
      Type.Literal('APPROVED'),
      Type.Literal('SCHEDULED'),
      Type.Literal('PUBLISHING'),
      Type.Literal('PUBLISHED'),
      Type.Literal('FAILED'),
    ]),
    createdBy: Actor,
    agentRunId: Nullable(Type.String()),
    approvedBy: Nullable(Actor),
    approvedAt: Nullable(Timestamp),
    externalId: Nullable(Type.String({ description: "the platform's id; present exactly when PUBLISHED" })),
    url: Nullable(Type.String()),
    publishedAt: Nullable(Timestamp),
    error: Nullable(Type.Object({ code: Type.String(), message: Type.String(), retryable: Type.Boolean() })),
    failedAt: Nullable(Timestamp),
    attempts: Type.Integer(),
    nextAttemptAt: Nullable(Timestamp),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Post' },
);

export const PostCreateBody = Type.Object(
  {
    projectId: Type.Optional(Type.String({ maxLength: 64 })),
    platform: PlatformSchema,
    body: Body,
    hashtags: Type.Optional(Hashtags),
    scheduledAt: Type.Optional(Nullable(ScheduledAt)),
    integrationId: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
    mediaIds: Type.Optional(MediaIds),
  },
  { additionalProperties: false },
);

export const PostPatchBody = Type.Object(
  {
    projectId: Type.Optional(Type.String({ maxLength: 64 })),
    platform: Type.Optional(PlatformSchema),
    body: Type.Optional(Body),
    hashtags: Type.Optional(Hashtags),
    scheduledAt: Type.Optional(Nullable(ScheduledAt)),
    integrationId: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
    mediaIds: Type.Optional(MediaIds),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const ApproveBody = Type.Object(
  {
    body: Type.Optional(Body),
  },
  { additionalProperties: false },
);

export const PostListQuery = Type.Object(
  {
    ...ListQueryProps,
    status: Type.Optional(Type.String({ maxLength: 200, description: 'one status or several, comma-separated' })),
    platform: Type.Optional(Type.String({ maxLength: 40, description: 'LINKEDIN or X (comma-separated for both)' })),
    projectId: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);

export const GenerateBody = Type.Object(
  {
    projectId: Type.Optional(Type.String({ maxLength: 64 })),
    platforms: Type.Array(PlatformSchema, { minItems: 1, maxItems: 2 }),
    topic: Type.String({ minLength: 1, maxLength: 1000 }),
    count: Type.Integer({ minimum: 1, maximum: 5, description: 'drafts per platform' }),
    language: Type.String({ minLength: 2, maxLength: 40, description: 'a language name or code, e.g. en, French' }),
    modelId: Type.Optional(Type.String({ maxLength: 120 })),
  },
  { additionalProperties: false },
);

export const GenerateResult = Type.Object({
  agentRunId: Type.String(),
  status: Type.String(),
  summary: Nullable(Type.String()),
  usage: FreeObject('{ inputTokens, outputTokens, costUsd, modelId }'),
  items: Type.Array(Type.Ref('Post')),
});

export const CalendarQuery = Type.Object(
  {
    from: Type.String({ minLength: 10, maxLength: 40, description: 'date (whole day) or ISO 8601 timestamp' }),
    to: Type.String({ minLength: 10, maxLength: 40, description: 'date (included) or ISO 8601 timestamp (excluded)' }),
    projectId: Type.Optional(Type.String({ maxLength: 64 })),
    platform: Type.Optional(PlatformSchema),
    timezone: Type.Optional(Type.String({ maxLength: 64, description: 'IANA zone for dates and day grouping; default UTC' })),
  },
  { additionalProperties: false },
);

const CalendarEntry = Type.Object({
  postId: Type.String(),
  projectId: Type.String(),
  platform: Type.String(),
  status: Type.String(),
  at: Timestamp,
  date: Type.String(),
  title: Type.String(),
  excerpt: Type.String(),
  hashtags: Type.Array(Type.String()),
  integrationId: Nullable(Type.String()),
  url: Nullable(Type.String()),
  externalId: Nullable(Type.String()),
});

export const CalendarSchema = Type.Object({
  from: Timestamp,
  to: Timestamp,
  timezone: Type.String(),
  days: Type.Array(Type.Object({ date: Type.String(), entries: Type.Array(CalendarEntry) }), { description: 'every day of the window, empty ones included' }),
  entries: Type.Array(CalendarEntry, { description: 'all entries, ordered by time' }),
});
