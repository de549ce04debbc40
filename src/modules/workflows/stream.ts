import { Type, orgErrors } from '../../platform/http/schemas.ts';
import type { App } from '../../platform/http/types.ts';
import { principalKey } from '../auth/index.ts';
import { orgOf } from '../../platform/context.ts';
import { isFinal, runChannel, type ExecEvent } from './engine/writer.ts';
import type { RunsService } from './runs.ts';
import type { Bus } from '../../platform/bus.ts';
import type { Config } from '../../config.ts';
import type { SseStreams } from '../../platform/sse.ts';

export interface RunStreamOptions {
  workflowRuns: RunsService;
  bus: Bus;
  config: Config;
  streams: SseStreams;
}

/**
 * GET …/runs/:runId/events — SPEC "SSE: run stream" and "Stream behavior": subscribe first, replay
 * the recorded events after `since`, then pass live events above the last replayed sequence (no gap,
 * no duplicate); `id:` is the sequence; closes after run.finished; `event: reset` and close when a
 * slow client's buffer overflows. Step items are never in these events.
 */
export function runStreamRoute(app: App, { workflowRuns, bus, config, streams }: RunStreamOptions): void {
  app.get(
    '/runs/:runId/events',
    {
      config: { access: { scope: 'workflows:read' }, sse: true },
      schema: {
        tags: ['Streams'],
        summary: 'Execution events of a run (SSE): history, then live; closes after run.finished. `since=<id>` skips the history up to that id.',
        params: Type.Object({ orgId: Type.String({ maxLength: 64 }), runId: Type.String({ maxLength: 64 }) }),
        querystring: Type.Object({
          since: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'replay only events with a higher id' })),
          access_token: Type.Optional(Type.String({ maxLength: 4096, description: 'access token for clients that cannot set headers' })),
        }),
        produces: ['text/event-stream'],
        response: { 200: Type.String({ description: 'text/event-stream' }), ...orgErrors() },
      },
    },
    async (request, reply) => {
      const ctx = orgOf(request);
      // 404 as JSON before the stream opens.
      const run = await workflowRuns.row(ctx, request.params.runId);
      const stream = streams.open(
        request,
        reply,
        { credential: principalKey(ctx.principal), orgId: ctx.orgId },
        { pingMs: config.ssePingMs, maxBufferBytes: config.runStreamBufferBytes },
      );
      let last = request.query.since ?? 0;
      let replaying = true;
      const queued: ExecEvent[] = [];

      const deliver = (event: ExecEvent): void => {
        if (stream.closed || event.seq <= last) return;
        if (stream.overflowing) {
          stream.send('reset', { runId: run.id, reason: 'buffer exceeded; refresh from GET /runs/:runId', lastEventId: last });
          stream.close();
          return;
        }
        last = event.seq;
        stream.send(event.type, event.data, event.seq);
        if (event.type === 'run.finished') stream.close();
      };

      // Other instances hear of run events after their commit, in batches: a message lost on the
      // way (a crash between commit and send, a reconnecting listener) shows as a gap in the
      // sequence, or as silence; either way the stored events fill in.
      let catching = false;
      const catchUp = async (): Promise<void> => {
        if (catching || replaying || stream.closed) return;
        catching = true;
        try {
          for (;;) {
            const batch = await workflowRuns.eventsAfter(run.id, last, 500);
            for (const event of batch) deliver(event);
            if (batch.length < 500 || stream.closed) break;
          }
        } catch {
          // the next event or poll tries again
        } finally {
          catching = false;
        }
        if (queued.length) drain(true);
      };
      const drain = (afterCatchUp = false): void => {
        queued.sort((a, b) => a.seq - b.seq);
        while (queued.length && !stream.closed) {
          const event = queued[0]!;
          if (event.seq > last + 1) {
            // Still a gap right after reading the store: leave it to the poll.
            if (!afterCatchUp) void catchUp();
            return;
          }
          queued.shift();
          deliver(event);
        }
      };
      const unsubscribe = bus.subscribe(runChannel(run.id), (message) => {
        queued.push(...(message as ExecEvent[]));
        if (!replaying && !catching) drain();
      });
      const poll = setInterval(() => void catchUp(), Math.max(1000, config.ssePingMs));
      poll.unref();
      stream.onClose(() => {
        clearInterval(poll);
        unsubscribe();
      });

      try {
        const status = await workflowRuns.status(run.id);
        for (;;) {
          const batch = await workflowRuns.eventsAfter(run.id, last, 500);
          for (const event of batch) deliver(event);
          if (batch.length < 500 || stream.closed) break;
        }
        replaying = false;
        drain();
        // Ended before we looked: everything was in the history (a `since` past run.finished included).
        if (status && isFinal(status)) stream.close();
      } catch (error) {
        request.log.error({ err: error }, 'run stream replay failed');
        stream.close();
      }
    },
  );
}
