/**
 * A reader of one run's event stream (`GET …/runs/:id/events`, SPEC "Stream behavior") for the
 * workflows load: it connects to the next live instance, cuts the connection at random — after a
 * few frames (mid-replay) or after a while (live) — and reconnects with `since=<last id>`, sometimes
 * from a little earlier so that the server repeats events. It keeps, per run, the event types by
 * sequence (de-duplicated) and what broke the stream's promises: within one connection the ids
 * follow each other from `since + 1`, and a repeated id is the same event.
 */
import type { World } from '../world.ts';

export interface Follow {
  runId: string;
  /** Each event as `type nodeId status at` (eventKey), index seq - 1. */
  types: string[];
  violations: string[];
  /** The reader saw run.finished and the server closed the stream. */
  done: boolean;
  connections: number;
  duplicates: number;
}

/** What identifies an event in the reader's record and in the database: its type, node, status and time. */
export function eventKey(type: string, data: { nodeId?: unknown; status?: unknown; at?: unknown } | null | undefined): string {
  return `${type} ${String(data?.nodeId ?? '')} ${String(data?.status ?? '')} ${String(data?.at ?? '')}`;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MAX_VIOLATIONS = 5;

function violation(f: Follow, text: string): void {
  if (f.violations.length < MAX_VIOLATIONS) f.violations.push(text);
}

/**
 * Reads the run's stream until run.finished (then `done`), or until `signal` aborts. `toEnd`: no
 * random cuts (the check finishing a reader).
 */
export async function followRun(world: World, f: Follow, signal: AbortSignal, toEnd = false): Promise<void> {
  let failures = 0;
  while (!f.done && !signal.aborted) {
    const last = f.types.length;
    const since = !toEnd && last > 0 && world.rng.next() < 0.2 ? Math.max(0, last - 1 - world.rng.int(3)) : last;
    const cut = new AbortController();
    const onAbort = () => cut.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    let cutAfterFrames = Infinity;
    const r = toEnd ? 1 : world.rng.next();
    if (r < 0.3) cutAfterFrames = 1 + world.rng.int(4);
    const timer = setTimeout(() => cut.abort(), r < 0.5 ? 200 + world.rng.int(3000) : 60_000);
    f.connections++;
    let prev = since;
    let sawFinished = false;
    let closedByServer = false;
    try {
      const res = await fetch(`${world.api.base()}${world.api.org}/runs/${f.runId}/events?since=${since}`, {
        headers: { 'x-api-key': world.api.apiKey, accept: 'text/event-stream' },
        signal: cut.signal,
      });
      if (res.status !== 200) {
        world.count(`workflow stream answered ${res.status}`);
        await res.body?.cancel().catch(() => {});
        failures++;
      } else {
        failures = 0;
        const reader = res.body!.getReader();
        const decoder = new TextDecoder();
        let buffer = '';
        let frames = 0;
        for (;;) {
          const { done, value } = await reader.read();
          if (done) {
            closedByServer = true;
            break;
          }
          buffer += decoder.decode(value, { stream: true });
          let end: number;
          while ((end = buffer.indexOf('\n\n')) !== -1) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            let event: string | undefined;
            let id: string | undefined;
            let data: string | undefined;
            for (const line of frame.split('\n')) {
              if (line.startsWith('event: ')) event = line.slice(7);
              else if (line.startsWith('id: ')) id = line.slice(4);
              else if (line.startsWith('data: ')) data = line.slice(6);
            }
            if (!event) continue;
            if (id === undefined) {
              if (event === 'reset') world.count('workflow stream resets');
              continue;
            }
            const seq = Number(id);
            const type = event;
            let parsed: Parameters<typeof eventKey>[1] = null;
            try {
              parsed = data ? (JSON.parse(data) as typeof parsed) : null;
            } catch {
              violation(f, `id ${seq}: data is not JSON`);
            }
            event = eventKey(type, parsed);
            if (seq !== prev + 1) violation(f, `since=${since}: id ${seq} after ${prev}`);
            prev = seq;
            if (seq <= f.types.length) {
              f.duplicates++;
              if (f.types[seq - 1] !== event) violation(f, `id ${seq} was ${f.types[seq - 1]}, then ${event}`);
            } else {
              while (f.types.length < seq - 1) f.types.push('(not seen)');
              f.types.push(event);
            }
            if (type === 'run.finished') sawFinished = true;
            if (++frames >= cutAfterFrames) cut.abort();
          }
        }
      }
    } catch {
      // cut by us, by the end of the load, or the instance went away: reconnect
      if (!cut.signal.aborted) failures++;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
    if (closedByServer && (sawFinished || f.types[f.types.length - 1]?.startsWith('run.finished '))) f.done = true;
    else if (closedByServer && !cut.signal.aborted) world.count('workflow streams closed before run.finished');
    if (failures) await sleep(Math.min(5000, 300 * failures));
  }
}
