import { Type } from 'typebox';
import { outboundRequest } from '../../../platform/http-client.ts';
import { envelope, postSigned } from './signing.ts';
import { registerNode } from './registry.ts';
import { main, type Item } from './types.ts';

const MAX_RESPONSE_BYTES = 1024 * 1024;

registerNode({
  type: 'utility.httpRequest',
  category: 'utility',
  description:
    'Makes an HTTP request per item (SSRF-guarded, no redirects, 10 s time-out) and emits { statusCode, headers, body } (body parsed when JSON). A non-2xx answer fails the node.',
  params: Type.Object(
    {
      method: Type.Union(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'].map((m) => Type.Literal(m))),
      url: Type.String({ minLength: 1, maxLength: 2048 }),
      headers: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 4000 }), { maxProperties: 50 })),
      body: Type.Optional(Type.Unknown()),
      timeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 30_000 })),
    },
    { additionalProperties: false },
  ),
  outputs: ['main'],
  async execute(ctx, exec) {
    const out: Item[] = [];
    for (const item of exec.items) {
      const params = await exec.params(item);
      const headers: Record<string, string> = { 'user-agent': 'Service-Workflows/1.0', ...(params.headers ?? {}) };
      let body: string | undefined;
      if (params.body !== undefined && params.method !== 'GET' && params.method !== 'HEAD') {
        body = typeof params.body === 'string' ? params.body : JSON.stringify(params.body);
        if (typeof params.body !== 'string' && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
          headers['content-type'] = 'application/json';
      }
      const res = await outboundRequest({
        method: params.method,
        url: params.url,
        headers,
        body,
        allowPrivate: ctx.outbound.allowPrivate,
        timeoutMs: params.timeoutMs ?? ctx.outbound.timeoutMs,
        readBytes: MAX_RESPONSE_BYTES,
        signal: ctx.signal,
      });
      if (res.status < 200 || res.status >= 300)
        throw new Error(`${params.method} ${params.url} answered ${res.status}${res.body ? `: ${res.body.slice(0, 200)}` : ''}`);
      let parsed: unknown = res.body;
      const type = String(res.headers['content-type'] ?? '');
      if (type.includes('json') && res.body && !res.truncated) {
        try {
          parsed = JSON.parse(res.body);
        } catch {
          // not JSON after all: keep the text
        }
      }
      out.push({ statusCode: res.status, headers: res.headers, body: parsed, durationMs: res.durationMs });
    }
    return main(out);
  },
});

registerNode({
  type: 'utility.webhookOut',
  category: 'utility',
  description:
    "POSTs the step's items in one signed envelope (event `event`, default `workflow.output`; payload { runId, workflowId, nodeId, items }). Signed with `secret` or the organization's workflow signing secret. The envelope id is the same on every attempt of the step (de-duplicate by it). In test mode nothing is sent (`dryRun: true`).",
  params: Type.Object(
    {
      url: Type.String({ minLength: 1, maxLength: 2048 }),
      secret: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      event: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    },
    { additionalProperties: false },
  ),
  outputs: ['main'],
  async execute(ctx, exec) {
    const params = await exec.params();
    const event = params.event ?? 'workflow.output';
    const body = envelope(ctx, event, { runId: ctx.runId, workflowId: ctx.workflowId, nodeId: ctx.nodeId, items: exec.items });
    if (ctx.testMode) return main([{ dryRun: true, url: params.url, event, body }]);
    const sent = await postSigned(ctx, { url: params.url, secret: params.secret, event, body });
    return main([{ delivered: true, ...sent, eventId: body.id, itemCount: exec.items.length }]);
  },
});
