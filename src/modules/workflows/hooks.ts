import { notFound } from '../../platform/errors.ts';
import { Type, FreeObject, errors } from '../../platform/http/schemas.ts';
import { RATE_LIMIT, routesPlugin } from '../../platform/http/plugin.ts';
import { inboundRoute } from '../../platform/inbound.ts';
import type { WebhookSender } from './service.ts';
import type { WorkflowsService } from './service.ts';

const Params = Type.Object({ workflowId: Type.String({ maxLength: 64 }), token: Type.String({ minLength: 16, maxLength: 128 }) });

export interface WorkflowHookRoutesOptions {
  workflows: WorkflowsService;
}

/**
 * The public trigger.webhook URL: POST /api/v1/hooks/:workflowId/:token with a JSON object body
 * starts a run of that workflow with the body as input. No credentials besides the token (stored
 * hashed, compared in constant time); a wrong token, an unknown or inactive workflow all give 404.
 */
export const workflowHookRoutes = routesPlugin<WorkflowHookRoutesOptions>('workflow-hook-routes', [RATE_LIMIT], (app, { workflows }) => {
  inboundRoute<{ workflowId: string; token: string }, Record<string, unknown> | undefined, WebhookSender>(app, {
    path: '/hooks/:workflowId/:token',
    schema: {
      tags: ['Workflows'],
      summary: 'Public webhook trigger: starts a run with the JSON body as input (202)',
      security: [],
      params: Params,
      body: Type.Optional(FreeObject('becomes the run input')),
      response: { 202: Type.Object({ runId: Type.String(), status: Type.String() }), ...errors(403, 404, 429) },
    },
    // The token in the path is the credential; the body is not signed.
    verify: ({ params }) => workflows.webhookSender(params.workflowId, params.token),
    refusal: () => notFound('Webhook'),
    // Past the instance's triggers in flight, refused before the token is even looked up.
    gate: (handle) => workflows.gateTrigger(handle),
    handle: async (sender, request, reply) => {
      const run = await workflows.startFromWebhook(
        sender,
        request.body ?? {},
        {
          contentType: request.headers['content-type'] ?? null,
          userAgent: request.headers['user-agent'] ?? null,
        },
        performance.now() - reply.elapsedTime,
      );
      reply.code(202);
      return { runId: run.id, status: run.status };
    },
  });
});
