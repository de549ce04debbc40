import { Type, ListEnvelope, Nullable, OrgParams, orgErrors } from '../../platform/http/schemas.ts';
import { ORG_ACCESS, routesPlugin } from '../../platform/http/plugin.ts';
import { notFound } from '../../platform/errors.ts';
import { orgOf } from '../../platform/context.ts';
import { generateDrafts, type InlineAgentRunner } from './generate.ts';
import type { ContentService } from './service.ts';
import {
  ApproveBody,
  CalendarQuery,
  CalendarSchema,
  GenerateBody,
  GenerateResult,
  PostCreateBody,
  PostListQuery,
  PostPatchBody,
  PostSchema,
} from './schemas.ts';

const tags = ['Content'];
const Params = Type.Object({ orgId: Type.String({ maxLength: 64 }), postId: Type.String({ maxLength: 64 }) });
const read = { scope: 'content:read' };
const write = { scope: 'content:write' };

/** The organization's projects (the orgs module): generated drafts go to one of them. */
export interface ContentProjectsPort {
  defaultProjectId(orgId: string): Promise<string>;
  assertProject(orgId: string, projectId: string): Promise<void>;
}

export interface ContentRoutesOptions {
  content: ContentService;
  /** The agents module's inline runs, for generation. */
  agents: InlineAgentRunner;
  orgs: ContentProjectsPort;
}

export const contentRoutes = routesPlugin<ContentRoutesOptions>('content-routes', [ORG_ACCESS], (app, { content, agents, orgs }) => {
  app.addSchema(PostSchema);

  app.post(
    '/content',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Create a draft post (post.created)',
        params: OrgParams,
        body: PostCreateBody,
        response: { 201: Type.Ref('Post'), ...orgErrors(422) },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return content.createDraft(orgOf(request), request.body);
    },
  );

  app.get(
    '/content',
    {
      config: { access: read },
      schema: { tags, summary: 'List posts', params: OrgParams, querystring: PostListQuery, response: { 200: ListEnvelope(Type.Ref('Post')), ...orgErrors() } },
    },
    async (request) => content.list(orgOf(request), request.query),
  );

  app.get(
    '/content/calendar',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'Scheduled and published posts in a window, by day and in time order',
        description:
          '`from`/`to`: a date means the whole day (to included), a timestamp `to` is excluded. Entries: SCHEDULED and PUBLISHING at their scheduled time, PUBLISHED at their publishing time, FAILED at their failure time.',
        params: OrgParams,
        querystring: CalendarQuery,
        response: { 200: CalendarSchema, ...orgErrors() },
      },
    },
    async (request) => content.calendar(orgOf(request), request.query),
  );

  app.post(
    '/content/generate',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Generate `count` drafts per platform about a topic, in a language, with the CONTENT_WRITER agent',
        params: OrgParams,
        body: GenerateBody,
        response: { 201: GenerateResult, ...orgErrors(422, 502, 503) },
      },
    },
    async (request, reply) => {
      const scope = orgOf(request);
      const projectId = request.body.projectId ?? scope.projectId ?? (await orgs.defaultProjectId(scope.orgId));
      if (scope.projectId && projectId !== scope.projectId) throw notFound('Project');
      if (!scope.projectId) await orgs.assertProject(scope.orgId, projectId);
      const result = await generateDrafts(content, agents, scope, request.body, projectId);
      reply.code(201);
      return result;
    },
  );

  app.get(
    '/content/:postId',
    {
      config: { access: read },
      schema: { tags, summary: 'Get a post', params: Params, response: { 200: Type.Ref('Post'), ...orgErrors() } },
    },
    async (request) => content.get(orgOf(request), request.params.postId),
  );

  app.patch(
    '/content/:postId',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Change a post (DRAFT, APPROVED, SCHEDULED or FAILED; 409 otherwise)',
        description:
          'Changing the text, hashtags, media or platform of an approved post sends it back to DRAFT. A new scheduledAt on an approved post reschedules it.',
        params: Params,
        body: PostPatchBody,
        response: { 200: Type.Ref('Post'), ...orgErrors(409, 422) },
      },
    },
    async (request) => content.update(orgOf(request), request.params.postId, request.body),
  );

  app.delete(
    '/content/:postId',
    {
      config: { access: write },
      schema: { tags, summary: 'Delete a post (not while PUBLISHING)', params: Params, response: { 204: Type.Null(), ...orgErrors(409) } },
    },
    async (request, reply) => {
      await content.delete(orgOf(request), request.params.postId);
      reply.code(204).send(null);
    },
  );

  app.post(
    '/content/:postId/approve',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Approve a draft, optionally with edited text (post.approved)',
        description:
          'A future scheduledAt makes the post SCHEDULED; otherwise it is published now through its integration (PUBLISHING), or stays APPROVED when it has none. 422 INTEGRATION_MISSING when it is scheduled without an integration or its integration is gone.',
        params: Params,
        body: Nullable(ApproveBody),
        response: { 200: Type.Ref('Post'), ...orgErrors(409, 422) },
      },
    },
    async (request) => content.approve(orgOf(request), request.params.postId, request.body ?? {}),
  );

  app.post(
    '/content/:postId/publish',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Publish an approved, scheduled or failed post now',
        params: Params,
        response: { 200: Type.Ref('Post'), ...orgErrors(409, 422) },
      },
    },
    async (request) => content.publishNow(orgOf(request), request.params.postId),
  );
});
