/**
 * Webhook endpoints that fail and recover (CONTRACT §7, docs/webhooks.md). Four endpoints on stand-ins
 * of this load: one on `*` that never fails and is spared the run's faults; the others on a few event
 * types, on stand-ins the run's faults may hang or fail, two of them also failing on their own
 * (500/503) for periods shorter than the retry schedule. Every request is recorded (endpoint, envelope
 * id, delivery id, type, what it was answered) and its signature verified.
 *
 * "platform events delivered": every event of the outbox (the `events` table) created after an
 * endpoint and by the load's end, of a type it subscribes to, reached that endpoint with a 2xx — unless
 * the service had a documented reason not to: the endpoint was deactivated (100 failures in a row, or
 * 410), which cancels what was pending and queues nothing while off (the load re-enables it); or all
 * five attempts failed and each failure was the receiver's (an answer other than 2xx from this load, a
 * run fault, a time-out). Still pending at the deadline is a violation only when overdue. "one
 * envelope id": each delivery the receiver saw carried, as body `id`, the event of its delivery row,
 * and its X-Service-Event the event's type.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Check, Load, StandIn, StandInRequest, World } from '../world.ts';

interface Spec {
  name: string;
  events: string[];
  faults: boolean;
  /** Fails on its own: periods of this share of the retry span, every `everyMs`. */
  failing?: { everyMs: number };
}

const SPECS: Spec[] = [
  { name: 'webhooks-all', events: ['*'], faults: false },
  { name: 'webhooks-leads', events: ['lead.created', 'lead.updated', 'message.sent'], faults: true },
  // Rarer events, so that a failure period stays well under the 100 failures in a row that deactivate an endpoint.
  {
    name: 'webhooks-flaky-campaigns',
    events: ['campaign.started', 'campaign.finished', 'approval.requested', 'approval.resolved', 'conversation.handoff', 'conversation.closed'],
    faults: true,
    failing: { everyMs: 150_000 },
  },
  {
    name: 'webhooks-flaky-runs',
    events: ['workflow.run.failed', 'workflow.run.finished', 'lead.replied', 'agent.run.finished'],
    faults: true,
    failing: { everyMs: 110_000 },
  },
];

interface Seen {
  /** Receipts answered 2xx by this load / answered otherwise. */
  ok: number;
  failed: number;
}

interface Endpoint {
  spec: Spec;
  id: string;
  secret: string;
  standIn: StandIn;
  createdAt: string;
  /** Failing on its own until this time (0: not). */
  failingUntil: number;
  nextFailure: number;
  /** eventId → receipts. */
  seen: Map<string, Seen>;
  /** deliveryId → [eventId, 'ping' for the test ping, answered 2xx]. */
  deliveries: Map<string, [string, string, boolean]>;
  badSignatures: string[];
  /** Deactivations by the service and when the load re-enabled the endpoint. */
  offPeriods: { from: number; to: number; reason: string }[];
}

const endpoints: Endpoint[] = [];
let loadEnd = 0;
let failureMs = 20_000;

function verify(secret: string, req: StandInRequest): boolean {
  const ts = String(req.headers['x-service-timestamp'] ?? '');
  const sig = String(req.headers['x-service-signature'] ?? '');
  const want = `sha256=${createHmac('sha256', secret).update(`${ts}.${req.raw}`).digest('hex')}`;
  return sig.length === want.length && timingSafeEqual(Buffer.from(sig), Buffer.from(want));
}

function receive(ep: Endpoint, req: StandInRequest, world: World) {
  const now = Date.now();
  const deliveryId = String(req.headers['x-service-delivery'] ?? '');
  const envelopeId = typeof req.json?.id === 'string' ? (req.json.id as string) : '';
  const type = String(req.headers['x-service-event'] ?? '');
  // Signed (X-Service-Timestamp, seconds) long before it reached this handler: a slow sender or a slow receiver process.
  const signedAt = Number(req.headers['x-service-timestamp'] ?? 0) * 1000;
  if (signedAt > 0 && now - signedAt > 4000) world.count('webhook requests reaching the receiver 4 s or more after they were signed');
  if (!verify(ep.secret, req)) ep.badSignatures.push(deliveryId || envelopeId);
  if (ep.spec.failing && now >= ep.nextFailure) {
    ep.failingUntil = now + failureMs;
    ep.nextFailure = now + ep.spec.failing.everyMs * (0.75 + 0.5 * world.rng.next());
    world.count('webhook endpoint failure periods');
  }
  const fail = now < ep.failingUntil && type !== 'ping';
  const seen = ep.seen.get(envelopeId) ?? { ok: 0, failed: 0 };
  if (fail) seen.failed++;
  else seen.ok++;
  ep.seen.set(envelopeId, seen);
  // Compact: the type only for the test ping (an hour at rate 1 is some 360,000 deliveries).
  ep.deliveries.set(deliveryId, [envelopeId, type === 'ping' ? 'ping' : '', !fail]);
  world.count(fail ? 'webhook deliveries answered 5xx by the load' : 'webhook deliveries');
  if (!fail && seen.ok > 1) world.count('webhook redeliveries (same envelope again after a 2xx)');
  return fail ? { status: world.rng.int(2) === 0 ? 500 : 503, body: '{"error":"failing on purpose"}' } : { status: 200, body: '{"ok":true}' };
}

const pause = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/** Re-enables an endpoint the service deactivated, recording how long it was off. */
async function watch(world: World, ep: Endpoint): Promise<void> {
  const [row] = await world.sql<{ active: boolean; disabled_reason: string | null; updated_at: Date }>(
    'select active, disabled_reason, updated_at from webhook_endpoints where id = $1',
    [ep.id],
  );
  if (!row || row.active) return;
  const answer = await world.api.until('PATCH', `${world.api.org}/webhook-endpoints/${ep.id}`, { body: { active: true }, withinMs: 60_000 });
  if (answer.status !== 200) return;
  ep.offPeriods.push({ from: new Date(row.updated_at).getTime(), to: Date.now(), reason: row.disabled_reason ?? '?' });
  world.count('webhook endpoints deactivated by the service (re-enabled)');
  world.log(`webhooks: ${ep.spec.name} was deactivated (${row.disabled_reason}); re-enabled`);
}

interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  attempt: number;
  status: string;
  status_code: number | null;
  error: string | null;
  next_attempt_at: Date | null;
  locked_until: Date | null;
}

export const load: Load = {
  name: 'webhooks',
  ratePerSecond: 0,

  async setup(world: World): Promise<void> {
    // Own failures last at most half of the span of the four retries, so the fifth attempt comes
    // after a failure period that began with the first.
    const delays = (world.env.WEBHOOK_RETRY_DELAYS_S ?? '60,300,900,1800').split(',').map(Number);
    const span = delays.slice(0, 4).reduce((a, b) => a + b, 0) * 1000;
    failureMs = Math.max(3000, Math.min(60_000, Math.round(span * 0.5)));
    world.signal.addEventListener('abort', () => (loadEnd = Date.now()), { once: true });
    for (const spec of SPECS) {
      const standIn = await world.standIn(spec.name, { faults: spec.faults });
      const answer = await world.api.until('POST', `${world.api.org}/webhook-endpoints`, {
        body: { url: standIn.url('/hook'), events: spec.events, description: `chaos ${spec.name}` },
      });
      if (answer.status !== 201) throw new Error(`webhook endpoint ${spec.name}: ${answer.status} ${answer.text}`);
      const ep: Endpoint = {
        spec,
        id: answer.json.id,
        secret: answer.json.secret,
        standIn,
        createdAt: answer.json.createdAt,
        failingUntil: 0,
        nextFailure: Date.now() + (spec.failing ? spec.failing.everyMs * (0.3 + 0.4 * world.rng.next()) : Infinity),
        seen: new Map(),
        deliveries: new Map(),
        badSignatures: [],
        offPeriods: [],
      };
      standIn.handle = (req) => receive(ep, req, world);
      endpoints.push(ep);
    }
    world.log(`webhooks: ${endpoints.length} endpoints; own failure periods ${failureMs / 1000} s (retry span ${span / 1000} s)`);
  },

  async tick(): Promise<void> {},

  async background(world: World): Promise<void> {
    // The run's own event loop: a late timer here is a receiver that reads requests late.
    let last = performance.now();
    const lag = setInterval(() => {
      const late = performance.now() - last - 250;
      last = performance.now();
      if (late > 1000) world.count('webhooks receiver process: event loop late by more than 1 s');
      if (late > 250) world.count('webhooks receiver process: event loop late by more than 250 ms');
    }, 250);
    world.signal.addEventListener('abort', () => clearInterval(lag), { once: true });
    while (!world.signal.aborted) {
      await pause(3000, world.signal);
      for (const ep of endpoints) await watch(world, ep).catch(() => undefined);
    }
  },

  async check(world: World, deadline: number): Promise<Check[]> {
    const end = new Date(loadEnd || Date.now());
    const ids = endpoints.map((e) => e.id);
    for (const ep of endpoints) ep.failingUntil = 0;
    // Drain: the events of the load phase dispatched, and no attempt due before the deadline left.
    let drained = false;
    while (Date.now() < deadline - 5000) {
      for (const ep of endpoints) await watch(world, ep).catch(() => undefined);
      const [state] = await world
        .sql<{ outbox: number; due: number }>(
          `select (select count(*)::int from event_outbox o join events e on e.id = o.id where e.at <= $1) as outbox,
                (select count(*)::int from webhook_deliveries where endpoint_id = any($2) and status = 'pending' and next_attempt_at <= $3) as due`,
          [end, ids, new Date(deadline)],
        )
        .catch(() => [undefined]);
      if (state && state.outbox === 0 && state.due === 0) {
        drained = true;
        break;
      }
      await pause(2000);
    }
    // A last look at the receivers' records after the last attempts' answers.
    await pause(1000);
    const now = Date.now();

    // What the receivers saw up to now: a delivery received after the rows below were read would
    // not find its row.
    const received = endpoints.map((ep) => [...ep.deliveries]);
    const rows = await world.sql<DeliveryRow>(
      `select id, endpoint_id, event_id, attempt, status, status_code, error, next_attempt_at, locked_until
         from webhook_deliveries where endpoint_id = any($1) order by endpoint_id, event_id, attempt, created_at`,
      [ids],
    );
    const chains = new Map<string, DeliveryRow[]>();
    const rowById = new Map<string, DeliveryRow>();
    for (const r of rows) {
      const key = `${r.endpoint_id} ${r.event_id}`;
      const list = chains.get(key) ?? [];
      list.push(r);
      chains.set(key, list);
      rowById.set(r.id, r);
    }

    // Why attempts failed, per endpoint (the receivers' own 5xx, the run's faults, time-outs, connections).
    for (const ep of endpoints) {
      const why = new Map<string, number>();
      for (const r of rows)
        if (r.endpoint_id === ep.id && r.status === 'failed') {
          const reason = r.status_code ? `HTTP ${r.status_code}` : (r.error ?? '?').slice(0, 80);
          why.set(reason, (why.get(reason) ?? 0) + 1);
        }
      // A time-out the receiver had answered 2xx: the answer came too late for the sender.
      const late = rows.filter((r) => r.endpoint_id === ep.id && r.status === 'failed' && ep.deliveries.get(r.id)?.[2] === true).length;
      if (why.size > 0)
        world.log(
          `webhooks: ${ep.spec.name} failed attempts: ${[...why].map(([k, n]) => `${k} ×${n}`).join('; ')}; of them answered 2xx by the receiver: ${late}`,
        );
    }

    const violations: string[] = [];
    const excused = { deactivated: 0, exhausted: 0, retrying: 0 };
    let pairs = 0;
    let redelivered = 0;
    for (const ep of endpoints) {
      const typeFilter = ep.spec.events.includes('*') ? '' : 'and e.type = any($4)';
      const events = await world.sql<{ id: string; type: string; at: Date }>(
        `select e.id, e.type, e.at from events e where e.org_id = $1 and e.at > $2 and e.at <= $3 ${typeFilter}`,
        ep.spec.events.includes('*') ? [world.api.orgId, ep.createdAt, end] : [world.api.orgId, ep.createdAt, end, ep.spec.events],
      );
      for (const ev of events) {
        pairs++;
        const seen = ep.seen.get(ev.id);
        if (seen && seen.ok > 0) {
          if (seen.ok > 1) redelivered++;
          continue;
        }
        const chain = chains.get(`${ep.id} ${ev.id}`) ?? [];
        const last = chain.at(-1);
        const at = new Date(ev.at).getTime();
        const what = `${ep.spec.name} ${ev.id} (${ev.type}, ${new Date(ev.at).toISOString()})`;
        if (!last) {
          // Queued for no one while the endpoint was off (dispatch may lag the event by a PostgreSQL restart).
          if (ep.offPeriods.some((p) => at <= p.to + 5000 && at >= p.from - 120_000)) excused.deactivated++;
          else violations.push(`${what}: never queued for the endpoint`);
          continue;
        }
        if (last.status === 'succeeded') {
          violations.push(`${what}: delivery ${last.id} succeeded per the database, but the receiver never answered it 2xx`);
          continue;
        }
        if (last.status === 'pending') {
          const dueAt = last.next_attempt_at ? new Date(last.next_attempt_at).getTime() : 0;
          if (dueAt > now - 15_000 || (last.locked_until && new Date(last.locked_until).getTime() > now)) excused.retrying++;
          else
            violations.push(
              `${what}: attempt ${last.attempt} (${last.id}) overdue since ${new Date(dueAt).toISOString()}${drained ? '' : ' (not drained by the deadline)'}`,
            );
          continue;
        }
        if (last.error === 'endpoint deactivated' || ep.offPeriods.some((p) => at <= p.to && at >= p.from - 120_000)) {
          excused.deactivated++;
          continue;
        }
        // Failed for good: correct only when every attempt failed at the receiver, and all five were made.
        const answeredOk = chain.filter((r) => ep.deliveries.get(r.id)?.[2] === true);
        if (answeredOk.length > 0)
          violations.push(
            `${what}: attempt ${answeredOk[0]!.id} answered 2xx by the receiver, recorded failed (${answeredOk[0]!.error ?? answeredOk[0]!.status_code})`,
          );
        else if (last.attempt < 5 && last.status_code !== 410)
          violations.push(`${what}: attempt ${last.attempt} failed (${last.error ?? last.status_code}) and no retry was scheduled`);
        else excused.exhausted++;
      }
    }
    const envelopeViolations: string[] = [];
    let receipts = 0;
    for (const [k, ep] of endpoints.entries()) {
      for (const [deliveryId, [envelopeId, type]] of received[k]!) {
        receipts++;
        const row = rowById.get(deliveryId);
        if (!row) {
          // Not a row of this endpoint: the test ping, or a delivery id the service never recorded.
          if (type !== 'ping') envelopeViolations.push(`${ep.spec.name} ${deliveryId}: no delivery row (envelope ${envelopeId})`);
          continue;
        }
        if (row.endpoint_id !== ep.id || row.event_id !== envelopeId)
          envelopeViolations.push(`${ep.spec.name} ${deliveryId}: envelope id ${envelopeId}, its delivery row says ${row.event_id}`);
      }
    }
    const signatures = endpoints.flatMap((ep) => ep.badSignatures.slice(0, 20).map((d) => `${ep.spec.name} ${d}`));
    world.count('webhook (endpoint, event) pairs delivered more than once', redelivered);
    world.count('webhook deliveries given up after 5 attempts, each failed at the receiver', excused.exhausted);
    world.count('webhook deliveries not made while the endpoint was deactivated', excused.deactivated);
    world.count('webhook deliveries still retrying at the deadline (not overdue)', excused.retrying);
    world.log(
      `webhooks: ${pairs} (endpoint, event) pairs, ${receipts} receipts, ${redelivered} redelivered; excused: ${JSON.stringify(excused)}; ` +
        endpoints.map((e) => `${e.spec.name} handled ${e.standIn.counts.handled} faulted ${e.standIn.counts.faulted}`).join(', '),
    );
    return [
      { promise: 'platform events delivered to every subscribed endpoint (2xx at least once)', count: pairs, violations },
      { promise: 'one envelope id per event and endpoint (body id = the delivery row’s event)', count: receipts, violations: envelopeViolations },
      { promise: 'webhook signatures valid', count: receipts, violations: signatures },
    ];
  },
};
