import { Type, FreeObject, ListEnvelope, ListQueryProps, OrgParams, Timestamp, orgErrors } from '../../platform/http/schemas.ts';
import { badRequest } from '../../platform/errors.ts';
import type { App } from '../../platform/http/types.ts';
import { ORG_ACCESS, routesPlugin } from '../../platform/http/plugin.ts';
import { orgOf } from '../../platform/context.ts';
import { csvRows, IMPORT_MAX_ROWS } from './import.ts';
import { BulkBody, BulkResult, LeadCreateBody, LeadListQuery, LeadPatchBody, LeadSchema, LeadStats } from './schemas.ts';
import type { LeadsService } from './service.ts';

const tags = ['Leads'];
const LeadParams = Type.Object({ orgId: Type.String({ maxLength: 64 }), id: Type.String({ maxLength: 64 }) });
const read = { scope: 'leads:read' };
const write = { scope: 'leads:write' };

/** An import may be large: 10,000 rows of CSV or JSON fit in this. */
const IMPORT_BODY_LIMIT = 16 * 1024 * 1024;

const ImportBody = Type.Object(
  {
    rows: Type.Array(Type.Unknown({ description: 'a lead, as the body of POST /leads; null (a blank CSV line) is skipped' }), {
      minItems: 1,
      maxItems: IMPORT_MAX_ROWS,
      description: 'each row is validated and de-duplicated on its own; invalid rows are listed in `rejected`',
    }),
    dryRun: Type.Optional(Type.Boolean({ description: 'count what would be created and merged, change nothing' })),
  },
  { additionalProperties: false },
);

const ImportResult = Type.Object({
  created: Type.Integer(),
  merged: Type.Integer(),
  rejected: Type.Array(Type.Object({ row: Type.Integer({ description: '1 is the first row (under the CSV header)' }), error: Type.String() })),
});

const LeadEvent = Type.Object({
  id: Type.String(),
  type: Type.String(),
  organizationId: Type.String(),
  projectId: Type.Optional(Type.String()),
  at: Timestamp,
  payload: FreeObject(),
});

export interface LeadRoutesOptions {
  leads: LeadsService;
}

export const leadRoutes = routesPlugin<LeadRoutesOptions>('lead-routes', [ORG_ACCESS], (app, { leads }) => {
  app.addSchema(LeadSchema);

  app.post(
    '/leads',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Create a lead, or update the one it matches (email, E.164 phone, website host)',
        params: OrgParams,
        body: LeadCreateBody,
        response: { 200: Type.Ref('Lead'), 201: Type.Ref('Lead'), ...orgErrors() },
      },
    },
    async (request, reply) => {
      const result = await leads.create(orgOf(request), request.body);
      reply.code(result.created ? 201 : 200);
      return result.matchedOn ? { ...result.lead, deduplicated: { matchedOn: result.matchedOn } } : result.lead;
    },
  );

  app.get(
    '/leads',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'List leads',
        params: OrgParams,
        querystring: LeadListQuery,
        response: {
          200: Type.Object({
            ...ListEnvelope(Type.Ref('Lead')).properties,
            totalIsEstimate: Type.Optional(Type.Boolean({ description: 'present (true) when more than 10,000 leads match and `total` is an estimate' })),
          }),
          ...orgErrors(),
        },
      },
    },
    async (request) => leads.list(orgOf(request), request.query),
  );

  app.get(
    '/leads/stats',
    {
      config: { access: { scope: ['leads:read', 'usage:read'] } },
      schema: {
        tags,
        summary: 'Lead statistics',
        params: OrgParams,
        querystring: Type.Object({ projectId: Type.Optional(Type.String({ maxLength: 64 })) }, { additionalProperties: false }),
        response: { 200: LeadStats, ...orgErrors() },
      },
    },
    async (request) => leads.stats(orgOf(request), request.query.projectId),
  );

  app.post(
    '/leads/bulk',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Bulk action on leads: tag, untag, setStatus, delete',
        params: OrgParams,
        body: BulkBody,
        response: { 200: BulkResult, ...orgErrors() },
      },
    },
    async (request) => leads.bulk(orgOf(request), request.body),
  );

  // A CSV body becomes { rows } here, so both forms meet the same schema and code.
  app.register(async (scoped: App) => {
    scoped.addContentTypeParser('text/csv', { parseAs: 'string', bodyLimit: IMPORT_BODY_LIMIT }, (_request, body, done) => {
      try {
        done(null, { rows: csvRows(body as string) });
      } catch (error) {
        done(error as Error, undefined);
      }
    });
    scoped.post(
      '/leads/import',
      {
        config: { access: write },
        bodyLimit: IMPORT_BODY_LIMIT,
        schema: {
          tags,
          summary: 'Import up to 10,000 leads (JSON rows, or text/csv with a header row), each de-duplicated as a single create',
          description:
            'CSV columns: name, email, phone, company, website, source, tags (split on `;`, `,` or `|`), projectId; `custom.<key>` and any other column go to `custom`. With CSV, `dryRun` is a query parameter.',
          consumes: ['application/json', 'text/csv'],
          params: OrgParams,
          body: ImportBody,
          querystring: Type.Object({ dryRun: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
          response: { 200: ImportResult, ...orgErrors(413, 415) },
        },
      },
      async (request, reply) => {
        if (request.body.dryRun !== undefined && request.query.dryRun !== undefined) throw badRequest('Give dryRun in the body or in the query, not both');
        // A client that leaves (its connection closes before the answer is sent) stops the import
        // between two chunks: a 10,000-row import went on for 15 minutes after its client had gone.
        const left = new AbortController();
        const onClose = () => {
          if (!reply.raw.writableEnded) left.abort();
        };
        reply.raw.on('close', onClose);
        try {
          const { stoppedAfter, ...result } = await leads.import(
            orgOf(request),
            request.body.rows,
            request.body.dryRun ?? request.query.dryRun ?? false,
            left.signal,
          );
          if (stoppedAfter !== undefined) request.log.info({ rowsDone: stoppedAfter, rows: request.body.rows.length }, 'lead import stopped: the client left');
          return result;
        } finally {
          reply.raw.off('close', onClose);
        }
      },
    );
  });

  app.get(
    '/leads/:id/events',
    {
      config: { access: read },
      schema: {
        tags,
        summary: "A lead's history: the platform events about it, newest first",
        params: LeadParams,
        querystring: Type.Object({ page: ListQueryProps.page, pageSize: ListQueryProps.pageSize }, { additionalProperties: false }),
        response: { 200: ListEnvelope(LeadEvent), ...orgErrors() },
      },
    },
    async (request) => leads.history(orgOf(request), request.params.id, request.query),
  );

  app.get(
    '/leads/:id',
    {
      config: { access: read },
      schema: { tags, summary: 'Get a lead', params: LeadParams, response: { 200: Type.Ref('Lead'), ...orgErrors() } },
    },
    async (request) => leads.get(orgOf(request), request.params.id),
  );

  app.patch(
    '/leads/:id',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Change a lead (any creation field, status, score)',
        params: LeadParams,
        body: LeadPatchBody,
        response: { 200: Type.Ref('Lead'), ...orgErrors(409) },
      },
    },
    async (request) => leads.update(orgOf(request), request.params.id, request.body),
  );

  app.delete(
    '/leads/:id',
    {
      config: { access: write },
      schema: { tags, summary: 'Delete a lead', params: LeadParams, response: { 204: Type.Null(), ...orgErrors() } },
    },
    async (request, reply) => {
      await leads.delete(orgOf(request), request.params.id);
      reply.code(204).send(null);
    },
  );
});
