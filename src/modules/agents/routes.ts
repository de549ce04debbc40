import { Type, ListEnvelope, OrgParams, orgErrors } from '../../platform/http/schemas.ts';
import { ORG_ACCESS, routesPlugin } from '../../platform/http/plugin.ts';
import type { SseStream } from '../../platform/sse.ts';
import { principalKey } from '../auth/index.ts';
import { orgOf } from '../../platform/context.ts';
import { FINAL_STATUSES, runUsage } from './engine.ts';
import {
  AgentCreateBody,
  AgentListQuery,
  AgentPatchBody,
  AgentRunSchema,
  AgentSchema,
  AgentStepSchema,
  AgentTypeSchema,
  RunBody,
  RunListQuery,
  SavedRunBody,
} from './schemas.ts';
import { runChannel, shortenStep, type AgentStep, type RunMessage } from './steps.ts';
import type { Bus } from '../../platform/bus.ts';
import type { Config } from '../../config.ts';
import type { SseStreams } from '../../platform/sse.ts';
import type { AgentsService } from './service.ts';

const tags = ['Agents'];
const read = { scope: 'agents:read' };
const write = { scope: 'agents:write' };
const IdParams = Type.Object({ orgId: Type.String({ maxLength: 64 }), id: Type.String({ maxLength: 64 }) });

export interface AgentRoutesOptions {
  agents: AgentsService;
  bus: Bus;
  config: Config;
  streams: SseStreams;
}

export const agentRoutes = routesPlugin<AgentRoutesOptions>('agent-routes', [ORG_ACCESS], (app, { agents, bus, config, streams }) => {
  app.addSchema(AgentStepSchema);
  app.addSchema(AgentRunSchema);
  app.addSchema(AgentSchema);

  app.get(
    '/agent-types',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'Agent types with their descriptions, tools and report type',
        params: OrgParams,
        response: { 200: Type.Array(AgentTypeSchema), ...orgErrors() },
      },
    },
    async () => agents.types(),
  );

  app.post(
    '/agents/run',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Run an ad-hoc agent. 202 with the QUEUED run; poll GET …/agent-runs/:id or stream …/events. 422 MODEL_NOT_ALLOWED, 429 BUDGET_EXCEEDED',
        params: OrgParams,
        body: RunBody,
        response: { 202: Type.Ref('AgentRun'), ...orgErrors(422) },
      },
    },
    async (request, reply) => {
      reply.code(202);
      return agents.startRun(orgOf(request), request.body);
    },
  );

  app.get(
    '/agents',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'List saved agents',
        params: OrgParams,
        querystring: AgentListQuery,
        response: { 200: ListEnvelope(Type.Ref('Agent')), ...orgErrors() },
      },
    },
    async (request) => agents.listAgents(orgOf(request), request.query),
  );

  app.post(
    '/agents',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Save an agent: a type with its own instructions, model, step limit and budget',
        params: OrgParams,
        body: AgentCreateBody,
        response: { 201: Type.Ref('Agent'), ...orgErrors(422) },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return agents.createAgent(orgOf(request), request.body);
    },
  );

  app.get(
    '/agents/:id',
    {
      config: { access: read },
      schema: { tags, summary: 'Get a saved agent', params: IdParams, response: { 200: Type.Ref('Agent'), ...orgErrors() } },
    },
    async (request) => agents.getAgent(orgOf(request), request.params.id),
  );

  app.patch(
    '/agents/:id',
    {
      config: { access: write },
      schema: { tags, summary: 'Change a saved agent', params: IdParams, body: AgentPatchBody, response: { 200: Type.Ref('Agent'), ...orgErrors(422) } },
    },
    async (request) => agents.updateAgent(orgOf(request), request.params.id, request.body),
  );

  app.delete(
    '/agents/:id',
    {
      config: { access: write },
      schema: { tags, summary: 'Delete a saved agent (its runs stay)', params: IdParams, response: { 204: Type.Null(), ...orgErrors() } },
    },
    async (request, reply) => {
      await agents.deleteAgent(orgOf(request), request.params.id);
      reply.code(204).send(null);
    },
  );

  app.post(
    '/agents/:id/run',
    {
      config: { access: write },
      schema: { tags, summary: 'Run a saved agent', params: IdParams, body: SavedRunBody, response: { 202: Type.Ref('AgentRun'), ...orgErrors(422) } },
    },
    async (request, reply) => {
      reply.code(202);
      return agents.runSaved(orgOf(request), request.params.id, request.body);
    },
  );

  app.get(
    '/agent-runs',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'List agent runs (without steps)',
        params: OrgParams,
        querystring: RunListQuery,
        response: { 200: ListEnvelope(Type.Ref('AgentRun')), ...orgErrors() },
      },
    },
    async (request) => agents.listRuns(orgOf(request), request.query),
  );

  app.get(
    '/agent-runs/:id',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'An agent run with status, summary, usage and its full, un-shortened steps',
        params: IdParams,
        response: { 200: Type.Ref('AgentRun'), ...orgErrors() },
      },
    },
    async (request) => agents.getRun(orgOf(request), request.params.id),
  );

  app.post(
    '/agent-runs/:id/cancel',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Cancel a queued or running agent run (aborts the model call in flight); 409 when it already ended',
        params: IdParams,
        response: { 200: Type.Ref('AgentRun'), ...orgErrors(409) },
      },
    },
    async (request) => agents.cancel(orgOf(request), request.params.id),
  );

  app.get(
    '/agent-runs/:id/events',
    {
      config: { access: { scope: 'workflows:read', write: false }, sse: true },
      schema: {
        tags: ['Streams'],
        summary:
          'Agent run stream (SSE): replays the stored steps, then live `step` events (long values shortened), one `done` with the run summary and usage, then closes. `since=<index>` replays only later steps.',
        params: IdParams,
        querystring: Type.Object({
          since: Type.Optional(Type.Integer({ minimum: -1, maximum: 1_000_000 })),
          access_token: Type.Optional(Type.String({ maxLength: 4096, description: 'access token for clients that cannot set headers' })),
        }),
        produces: ['text/event-stream'],
        response: { 200: Type.String({ description: 'text/event-stream' }), ...orgErrors() },
      },
    },
    async (request, reply) => {
      const scope = orgOf(request);
      const id = request.params.id;
      await agents.getRunRow(scope, id); // 404 as JSON before the stream opens
      // Subscribe before reading, so nothing between the replay and the live part is lost.
      const buffered: RunMessage[] = [];
      let deliver: ((m: RunMessage) => void) | null = null;
      const unsubscribe = bus.subscribe(runChannel(id), (m) => (deliver ? deliver(m as RunMessage) : buffered.push(m as RunMessage)));
      let history: AgentStep[];
      let current: Awaited<ReturnType<typeof agents.getRunRow>>;
      try {
        current = await agents.getRunRow(scope, id);
        history = await agents.steps.list(scope.orgId, id, request.query.since ?? -1);
      } catch (error) {
        unsubscribe();
        throw error;
      }
      let stream: SseStream;
      try {
        stream = streams.open(request, reply, { credential: principalKey(scope.principal), orgId: scope.orgId }, { pingMs: config.ssePingMs });
      } catch (error) {
        unsubscribe();
        throw error;
      }
      stream.onClose(unsubscribe);
      let last = request.query.since ?? -1;
      const sendStep = (step: AgentStep) => {
        if (step.index <= last || stream.closed) return;
        last = step.index;
        stream.send('step', { type: 'step', step: shortenStep(step) }, step.index);
        // A client too slow to keep up is dropped; it reconnects with since=<last index>.
        if (stream.overflowing) stream.close();
      };
      const sendDone = (run: { id: string; status: string; summary: string | null; usage: Record<string, unknown> }) => {
        if (stream.closed) return;
        stream.send('done', { type: 'done', run }, last + 1);
        stream.close();
      };
      for (const step of history) sendStep(step);
      if ((FINAL_STATUSES as readonly string[]).includes(current.status)) {
        sendDone({ id: current.id, status: current.status, summary: current.summary, usage: runUsage(current) });
        return;
      }
      // The live part only says what happened; the store has every step. A live message lost on the
      // way (another instance's NOTIFY while this instance's LISTEN connection was being re-made)
      // must leave no gap: a step after a jump, and `done`, first send the stored steps missed in
      // between. One message at a time, in order.
      let queue = Promise.resolve();
      const catchUp = async (below?: number) => {
        for (const step of await agents.steps.list(scope.orgId, id, last)) if (below === undefined || step.index < below) sendStep(step);
      };
      deliver = (m) => {
        queue = queue
          .then(async () => {
            if (stream.closed) return;
            if (m.kind === 'step') {
              if (m.step.index > last + 1) await catchUp(m.step.index);
              sendStep(m.step);
            } else {
              await catchUp();
              sendDone(m.run);
            }
          })
          .catch(() => {
            // The store is unreachable (PostgreSQL restarting): end the stream; the client
            // reconnects with since=<last id> and gets what it missed.
            stream.close();
          });
      };
      for (const m of buffered.splice(0)) deliver(m);
      // A lost `done` must not leave the stream open for ever: at each ping interval, a run that
      // has ended meanwhile is caught up and closed.
      const watch = setInterval(() => {
        queue = queue
          .then(async () => {
            if (stream.closed) return;
            const row = await agents.getRunRow(scope, id);
            if (!(FINAL_STATUSES as readonly string[]).includes(row.status)) return;
            await catchUp();
            sendDone({ id: row.id, status: row.status, summary: row.summary, usage: runUsage(row) });
          })
          .catch(() => {});
      }, config.ssePingMs);
      watch.unref();
      stream.onClose(() => clearInterval(watch));
    },
  );
});
