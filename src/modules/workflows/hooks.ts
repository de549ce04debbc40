import { Type, FreeObject, errors } from '../../platform/http/schemas.ts';
import type { App } from '../../platform/http/types.ts';

/**
 * The public trigger.webhook URL: POST /api/v1/hooks/:workflowId/:token with a JSON object body
 * starts a run of that workflow with the body as input. No credentials besides the token (stored
 * hashed, compared in constant time); a wrong token, an unknown or inactive workflow all give 404.
 */
export function workflowHookRoutes(app: App): void {
  const { workflows } = app.services;
  app.post('/hooks/:workflowId/:token', {
    schema: {
      tags: ['Workflows'],
      summary: 'Public webhook trigger: starts a run with the JSON body as input (202)',
      security: [],
      params: Type.Object({ workflowId: Type.String({ maxLength: 64 }), token: Type.String({ minLength: 16, maxLength: 128 }) }),
      body: Type.Optional(FreeObject('becomes the run input')),
      response: { 202: Type.Object({ runId: Type.String(), status: Type.String() }), ...errors(404) },
    },
  }, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const run = await workflows.startFromWebhook(request.params.workflowId, request.params.token, body, {
      contentType: request.headers['content-type'] ?? null,
      userAgent: request.headers['user-agent'] ?? null,
    });
    reply.code(202);
    return { runId: run.id, status: run.status };
  });
}
