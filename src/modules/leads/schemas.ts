import { Type, Timestamp, Nullable, FreeObject, ListQueryProps } from '../../platform/http/schemas.ts';
import { LEAD_STATUSES } from '../../shared/leads.ts';

export const LeadStatusSchema = Type.Union(LEAD_STATUSES.map((s) => Type.Literal(s)));
const Text = (max = 500) => Type.String({ minLength: 1, maxLength: max });
const Tags = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100 });
const Custom = FreeObject('free-form key/value data', { maxProperties: 100 });

export const LeadSchema = Type.Object(
  {
    id: Type.String(),
    projectId: Type.String(),
    name: Nullable(Type.String()),
    email: Nullable(Type.String()),
    phone: Nullable(Type.String({ description: 'E.164' })),
    company: Nullable(Type.String()),
    website: Nullable(Type.String()),
    source: Nullable(Type.String()),
    status: LeadStatusSchema,
    score: Type.Number({ description: '0 to 100; 0 until something scores the lead' }),
    scoreReason: Nullable(Type.String()),
    tags: Type.Array(Type.String()),
    custom: FreeObject(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    deduplicated: Type.Optional(Type.Object({ matchedOn: Type.Union([Type.Literal('email'), Type.Literal('phone'), Type.Literal('website')]) })),
  },
  { $id: 'Lead' },
);

export const LeadCreateBody = Type.Object(
  {
    projectId: Type.Optional(Type.String({ maxLength: 64 })),
    name: Type.Optional(Text(200)),
    email: Type.Optional(Type.String({ minLength: 3, maxLength: 254, description: 'compared trimmed and lower-cased' })),
    phone: Type.Optional(Type.String({ minLength: 3, maxLength: 40, description: 'international format, e.g. +14155550123' })),
    company: Type.Optional(Text(200)),
    website: Type.Optional(Text(2048)),
    source: Type.Optional(Text(100)),
    tags: Type.Optional(Tags),
    custom: Type.Optional(Custom),
  },
  { additionalProperties: false },
);

export const LeadPatchBody = Type.Object(
  {
    projectId: Type.Optional(Type.String({ maxLength: 64 })),
    name: Type.Optional(Nullable(Text(200))),
    email: Type.Optional(Nullable(Type.String({ minLength: 3, maxLength: 254 }))),
    phone: Type.Optional(Nullable(Type.String({ minLength: 3, maxLength: 40 }))),
    company: Type.Optional(Nullable(Text(200))),
    website: Type.Optional(Nullable(Text(2048))),
    source: Type.Optional(Nullable(Text(100))),
    tags: Type.Optional(Tags),
    custom: Type.Optional(Custom),
    status: Type.Optional(LeadStatusSchema),
    score: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
    scoreReason: Type.Optional(Nullable(Text(2000))),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const LeadListQuery = Type.Object(
  {
    ...ListQueryProps,
    status: Type.Optional(Type.String({ maxLength: 200, description: 'one status or several, comma-separated' })),
    minScore: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
    tags: Type.Optional(Type.String({ maxLength: 2000, description: 'comma-separated; a lead must have all' })),
    projectId: Type.Optional(Type.String({ maxLength: 64 })),
    source: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);

export const BulkBody = Type.Object(
  {
    ids: Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 1000 }),
    action: Type.Union([Type.Literal('tag'), Type.Literal('untag'), Type.Literal('setStatus'), Type.Literal('delete')]),
    value: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 })])),
  },
  { additionalProperties: false },
);

export const BulkResult = Type.Object({ action: Type.String(), matched: Type.Integer(), updated: Type.Integer() });

export const LeadStats = Type.Object({
  total: Type.Integer(),
  byStatus: Type.Record(Type.String(), Type.Integer()),
  bySource: Type.Record(Type.String(), Type.Integer()),
  averageScore: Type.Number({ description: '0 when there are no leads' }),
  createdLast7Days: Type.Integer(),
  createdLast30Days: Type.Integer(),
});
