import { Type, ListEnvelope, OrgParams, orgErrors } from '../../platform/http/schemas.ts';
import type { App } from '../../platform/http/types.ts';
import { orgOf } from '../auth/guard.ts';
import { BulkBody, BulkResult, LeadCreateBody, LeadListQuery, LeadPatchBody, LeadSchema, LeadStats } from './schemas.ts';

const tags = ['Leads'];
const LeadParams = Type.Object({ orgId: Type.String(), id: Type.String({ maxLength: 64 }) });
const read = { scope: 'leads:read' };
const write = { scope: 'leads:write' };

export function leadRoutes(app: App): void {
  const { leads } = app.services;
  app.addSchema(LeadSchema);

  app.post('/leads', {
    config: { access: write },
    schema: {
      tags, summary: 'Create a lead, or update the one it matches (email, E.164 phone, website host)', params: OrgParams, body: LeadCreateBody,
      response: { 200: Type.Ref('Lead'), 201: Type.Ref('Lead'), ...orgErrors() },
    },
  }, async (request, reply) => {
    const result = await leads.create(orgOf(request), request.body);
    reply.code(result.created ? 201 : 200);
    return result.matchedOn ? { ...result.lead, deduplicated: { matchedOn: result.matchedOn } } : result.lead;
  });

  app.get('/leads', {
    config: { access: read },
    schema: {
      tags, summary: 'List leads', params: OrgParams, querystring: LeadListQuery,
      response: { 200: ListEnvelope(Type.Ref('Lead')), ...orgErrors() },
    },
  }, async (request) => leads.list(orgOf(request), request.query));

  app.get('/leads/stats', {
    config: { access: { scope: ['leads:read', 'usage:read'] } },
    schema: {
      tags, summary: 'Lead statistics', params: OrgParams,
      querystring: Type.Object({ projectId: Type.Optional(Type.String({ maxLength: 64 })) }, { additionalProperties: false }),
      response: { 200: LeadStats, ...orgErrors() },
    },
  }, async (request) => leads.stats(orgOf(request), request.query.projectId));

  app.post('/leads/bulk', {
    config: { access: write },
    schema: {
      tags, summary: 'Bulk action on leads: tag, untag, setStatus, delete', params: OrgParams, body: BulkBody,
      response: { 200: BulkResult, ...orgErrors() },
    },
  }, async (request) => leads.bulk(orgOf(request), request.body));

  app.get('/leads/:id', {
    config: { access: read },
    schema: { tags, summary: 'Get a lead', params: LeadParams, response: { 200: Type.Ref('Lead'), ...orgErrors() } },
  }, async (request) => leads.get(orgOf(request), request.params.id));

  app.patch('/leads/:id', {
    config: { access: write },
    schema: {
      tags, summary: 'Change a lead (any creation field, status, score)', params: LeadParams, body: LeadPatchBody,
      response: { 200: Type.Ref('Lead'), ...orgErrors(409) },
    },
  }, async (request) => leads.update(orgOf(request), request.params.id, request.body));

  app.delete('/leads/:id', {
    config: { access: write },
    schema: { tags, summary: 'Delete a lead', params: LeadParams, response: { 204: Type.Null(), ...orgErrors() } },
  }, async (request, reply) => {
    await leads.delete(orgOf(request), request.params.id);
    reply.code(204).send(null);
  });
}
