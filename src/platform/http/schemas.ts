import { Type, type Static, type TSchema, type TUnsafe } from 'typebox';

export { Type };

export const ErrorBody = Type.Object(
  {
    statusCode: Type.Integer(),
    error: Type.String(),
    message: Type.String(),
    code: Type.Optional(Type.String()),
    details: Type.Optional(
      Type.Union([
        Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'VALIDATION_ERROR: one `{ field, message }` per problem' }),
        Type.Object(
          {},
          { additionalProperties: true, description: 'what a business rule names, e.g. WORKFLOW_INVALID `{ nodeId?, edge?: { from, to }, param? }`' },
        ),
      ]),
    ),
  },
  { $id: 'ErrorBody', description: 'Every error: `{ statusCode, error, message, code? }`' },
);

const errorRef = (description: string) => ({ ...Type.Ref('ErrorBody'), description });

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'VALIDATION_ERROR: the request does not match the schema (details name each field)',
  401: 'UNAUTHORIZED: credentials missing or invalid',
  403: "FORBIDDEN (role), INSUFFICIENT_SCOPE (API key scope) or PLAN_FEATURE (the organization's plan lacks the feature)",
  404: 'NOT_FOUND: unknown id, or a resource of another organization',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE: body over the limit',
  422: 'Business rule violated',
  429: 'RATE_LIMIT, PLAN_LIMIT (details: limit, value, used) or BUDGET_EXCEEDED; see Retry-After',
  500: 'INTERNAL: server failure',
};

/** The error responses of a route, for validation and for the OpenAPI document. */
export function errors(...codes: number[]): Record<number, unknown> {
  const out: Record<number, unknown> = {};
  for (const code of new Set([400, 401, 429, 500, ...codes])) out[code] = errorRef(ERROR_DESCRIPTIONS[code] ?? 'Error');
  return out;
}

/** Error responses of a route under /orgs/:orgId: auth, org membership and scope errors come with every one. */
export function orgErrors(...codes: number[]): Record<number, unknown> {
  return errors(403, 404, ...codes);
}

export const Timestamp = Type.Unsafe<Date | string>({ type: 'string', format: 'date-time', description: 'ISO 8601; output in UTC with milliseconds' });
const PRIMITIVE = new Set(['string', 'number', 'integer', 'boolean']);
/**
 * The schema or null. A primitive becomes `type: [t, 'null']`, which the response serializer writes
 * directly; an `anyOf` would make it validate the value against each branch on every response.
 */
export const Nullable = <T extends TSchema>(schema: T): TUnsafe<Static<T> | null> => {
  const plain = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
  if (typeof plain.type === 'string' && PRIMITIVE.has(plain.type)) return Type.Unsafe<Static<T> | null>({ ...plain, type: [plain.type, 'null'] });
  return Type.Union([schema, Type.Null()]) as unknown as TUnsafe<Static<T> | null>;
};
export const FreeObject = (description?: string, extra: Record<string, unknown> = {}) =>
  Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, ...(description ? { description } : {}), ...extra });
export const Id = (prefix: string) => Type.String({ minLength: 1, maxLength: 64, description: `id with prefix \`${prefix}_\`` });

export const OrgParams = Type.Object({ orgId: Type.String({ maxLength: 64 }) });

export const ListQueryProps = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  sort: Type.Optional(Type.String({ maxLength: 64, description: 'field name; a leading `-` sorts descending' })),
  q: Type.Optional(Type.String({ maxLength: 200, description: 'free-text search' })),
};

export function ListEnvelope<T extends TSchema>(item: T) {
  return Type.Object({
    items: Type.Array(item),
    total: Type.Integer(),
    page: Type.Integer(),
    pageSize: Type.Integer(),
  });
}
