import type { Check, Load, World } from '../world.ts';
import { AGENT_MARK, AGENT_MODEL, installModel } from './conversations-model.ts';
import { pause, readStream } from './conversations-sse.ts';

/**
 * Agent runs on the model stand-in and their streams (SPEC Agents, "SSE: agent run stream";
 * docs/agents.md "Runs"). Each accepted run gets a reader that starts a little late (so it
 * replays), cuts its connection at random — often mid-replay — and reconnects with
 * `since=<last step index>`, de-duplicating by step index, until `done`.
 *
 * Checks: every accepted run ends (a final status; none RUNNING with an expired lease or QUEUED),
 * and each reader saw every step of its run, in order, with no gap, then one `done` carrying the
 * run's final status (compared with `GET …/agent-runs/:id`).
 */

const FINAL = ['succeeded', 'failed', 'budget_exceeded', 'max_steps', 'canceled'];

interface Track {
  id: string;
  /** The steps the reader accepted, in arrival order (after de-duplication). */
  seen: number[];
  /** Steps that arrived after a jump (index > last + 1): the gap's first missing index. */
  gaps: string[];
  doneStatus: string | null;
  connections: number;
  cuts: number;
  duplicates: number;
  reading: Promise<void> | null;
}

interface State {
  types: string[];
  runs: Map<string, Track>;
  refused: number;
}

let state: State | null = null;
const must = (): State => {
  if (!state) throw new Error('agents: setup has not run');
  return state;
};

const last = (t: Track) => (t.seen.length ? t.seen[t.seen.length - 1]! : -1);

/**
 * One connection of a run's reader: from `since` (the last step seen), cut after a few frames at
 * random. Resolves true once `done` came.
 */
async function connect(world: World, track: Track, signal: AbortSignal | undefined, cutAfterFrames: number | null): Promise<'done' | 'again' | 'refused'> {
  const since = last(track);
  const query = since >= 0 ? `?since=${since}` : '';
  track.connections++;
  let frames = 0;
  let done = false;
  const stream = readStream(
    `${world.api.base()}${world.api.org}/agent-runs/${track.id}/events${query}`,
    { 'x-api-key': world.api.apiKey },
    (frame) => {
      frames++;
      watch();
      if (frame.event === 'step') {
        const step = (JSON.parse(frame.data) as { step: { index: number } }).step;
        const previous = last(track);
        if (step.index <= previous) track.duplicates++;
        else {
          if (step.index !== previous + 1)
            track.gaps.push(`steps ${previous + 1}..${step.index - 1} missing (connection ${track.connections}, since ${since})`);
          track.seen.push(step.index);
        }
      } else if (frame.event === 'done') {
        done = true;
        track.doneStatus = String((JSON.parse(frame.data) as { run: { status: string } }).run.status);
      }
      if (cutAfterFrames !== null && frames >= cutAfterFrames && !done) {
        track.cuts++;
        stream.cut();
      }
    },
    { signal },
  );
  // A stream silent for 30 s (no step; pings do not count) is cut and opened again, as a client with a
  // watchdog would: a run may wait QUEUED that long under load, or the instance may have missed
  // the live part. Counted, not a violation: the checks compare what the reader saw in the end.
  let silent: NodeJS.Timeout;
  const watch = () => {
    clearTimeout(silent);
    silent = setTimeout(() => {
      world.count('agents: stream silent 30 s, reconnected');
      stream.cut();
    }, 30_000);
  };
  watch();
  const outcome = await stream.done;
  clearTimeout(silent!);
  if (done) return 'done';
  if (outcome.status !== 200 && outcome.status !== 0) {
    world.count(`agents: stream open answered ${outcome.status}`);
    return outcome.status === 404 ? 'refused' : 'again';
  }
  return 'again';
}

/** A run's reader during the load: late start, random cuts, reconnects with since. */
async function reader(world: World, track: Track): Promise<void> {
  await pause(world.rng.int(3000), world.signal);
  while (!world.signal.aborted && track.doneStatus === null) {
    const cut = world.rng.next() < 0.5 ? 1 + world.rng.int(3) : null;
    const outcome = await connect(world, track, world.signal, cut);
    if (outcome === 'done') break;
    world.count('agents: stream reconnects');
    await pause(200 + world.rng.int(800), world.signal);
  }
}

async function setup(world: World): Promise<void> {
  installModel(world.model);
  const answer = await world.api.until('GET', `${world.api.org}/agent-types`, { routeClass: 'agent.types', withinMs: 60_000 });
  if (answer.status !== 200) throw new Error(`agents: GET agent-types answered ${answer.status}`);
  // Types the load's model can drive: those with the lead_stats tool (not the bot's own type).
  const types = (answer.json as { type: string; tools: { name: string }[] }[])
    .filter((t) => t.type !== 'CHATBOT' && t.tools.some((tool) => tool.name === 'lead_stats'))
    .map((t) => t.type);
  if (types.length === 0) throw new Error('agents: no agent type has the lead_stats tool');
  state = { types, runs: new Map(), refused: 0 };
  world.log(`agents: types ${types.join(', ')}`);
}

async function tick(world: World): Promise<void> {
  const s = must();
  installModel(world.model);
  const steps = 1 + world.rng.int(4);
  const answer = await world.api.request('POST', `${world.api.org}/agents/run`, {
    body: { type: world.rng.pick(s.types), task: `Chaos run: read the lead statistics (${AGENT_MARK}${steps}).`, modelId: AGENT_MODEL, input: {} },
    routeClass: 'agent.run',
  });
  if (answer.status !== 202 && answer.status !== 201) {
    if (answer.status >= 400 && answer.status < 500) {
      s.refused++;
      world.count(`agents: run refused ${answer.status}`);
    }
    return;
  }
  const track: Track = { id: String(answer.json.id), seen: [], gaps: [], doneStatus: null, connections: 0, cuts: 0, duplicates: 0, reading: null };
  s.runs.set(track.id, track);
  world.count('agents: runs accepted');
  track.reading = reader(world, track).catch((error: unknown) => world.log(`agents: reader of ${track.id} broke: ${String(error)}`));
}

interface RunRecord {
  id: string;
  status: string;
  steps?: { index: number }[];
  error?: string | null;
}

async function check(world: World, deadline: number): Promise<Check[]> {
  const s = must();
  await Promise.all([...s.runs.values()].map((t) => t.reading));
  // Wait for every accepted run to end (the lease of a run whose instance died must expire first).
  const records = new Map<string, RunRecord>();
  let pending = [...s.runs.keys()];
  while (pending.length > 0 && Date.now() < deadline) {
    const still: string[] = [];
    for (const id of pending) {
      const answer = await world.api.request('GET', `${world.api.org}/agent-runs/${id}`, { routeClass: 'agent.get' });
      if (answer.status === 200) records.set(id, answer.json as RunRecord);
      if (answer.status !== 200 || !FINAL.includes(String(answer.json.status))) still.push(id);
    }
    pending = still;
    if (pending.length > 0) await pause(2000);
  }
  const notFinal: string[] = [];
  if (pending.length > 0) {
    const rows = await world
      .sql<{ id: string; status: string; lease_owner: string | null; lease_until: Date | null }>(
        `select id, status, lease_owner, lease_until from agent_runs where id = any($1)`,
        [pending],
      )
      .catch(() => []);
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const id of pending) {
      const row = byId.get(id);
      const holder = row?.lease_until && row.lease_until.getTime() > Date.now() ? `held by ${row.lease_owner}` : 'no holder';
      notFinal.push(`${id} ${row?.status ?? records.get(id)?.status ?? '?'} (${holder})`);
    }
  }

  // Each reader that did not see `done` reconnects once more now (since its last step) and reads to the end.
  for (const track of s.runs.values()) {
    if (track.doneStatus !== null || pending.includes(track.id) || Date.now() > deadline) continue;
    for (let i = 0; i < 5 && track.doneStatus === null; i++) {
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(), 15_000);
      const outcome = await connect(world, track, ac.signal, null);
      clearTimeout(timer);
      if (outcome === 'done' || outcome === 'refused') break;
      await pause(500);
    }
  }

  const streamViolations: string[] = [];
  let compared = 0;
  for (const track of s.runs.values()) {
    const record = records.get(track.id);
    if (!record || !FINAL.includes(record.status)) continue;
    compared++;
    const expected = (record.steps ?? []).map((st) => st.index).sort((a, b) => a - b);
    for (const gap of track.gaps) streamViolations.push(`${track.id}: ${gap}`);
    if (track.seen.join(',') !== expected.join(','))
      streamViolations.push(`${track.id}: saw steps [${track.seen.join(',')}], the run has [${expected.join(',')}] (${track.connections} connections)`);
    if (track.doneStatus === null) streamViolations.push(`${track.id}: no done after ${track.connections} connections`);
    else if (track.doneStatus !== record.status) streamViolations.push(`${track.id}: done says ${track.doneStatus}, the run is ${record.status}`);
  }
  const statuses = new Map<string, number>();
  for (const r of records.values()) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
  const tracks = [...s.runs.values()];
  world.log(
    `agents: runs ${s.runs.size} (${[...statuses].map(([k, v]) => `${k} ${v}`).join(', ')}); stream connections ${tracks.reduce((n, t) => n + t.connections, 0)}, ` +
      `cut by the reader ${tracks.reduce((n, t) => n + t.cuts, 0)}, repeated steps dropped ${tracks.reduce((n, t) => n + t.duplicates, 0)}`,
  );
  return [
    { promise: 'every accepted run ends (none RUNNING with no holder, none QUEUED)', count: s.runs.size, violations: notFinal },
    { promise: 'stream readers saw every step in order, no gap, and done with the final status', count: compared, violations: streamViolations },
  ];
}

export const load: Load = {
  name: 'agents',
  ratePerSecond: 0.3,
  setup,
  tick,
  check,
};
