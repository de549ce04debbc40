/**
 * A running e-mail campaign of a few thousand recipients with a follow-up step (CONTRACT §9,
 * docs/campaigns.md), sending through the run's faults to the SMTP stand-in.
 *
 * Setup imports the audience and starts campaign A (2,000 recipients at scale 1 in a run of 10
 * minutes or more, fewer in a shorter one; two steps: the first at once, the follow-up 30 s after
 * it), paced by `perMinute` so that its sends span most of the run, and schedules
 * campaign B (a quarter of A's audience) to start half-way through (`scheduledAt`: the runner starts
 * it under the faults). At the check the load lifts the pace of what is still running (pause, PATCH
 * perMinute, resume: the rest of the audience becomes due as fast as the service sends) and waits,
 * up to the deadline, for both to finish.
 *
 * - "campaign steps at most once": no (recipient, step) reached the relay under two Message-IDs, and
 *   every campaign mail is the ledger's (`campaign_sends`) message of that recipient and step. The
 *   same Message-ID twice is the documented at-least-once copy of a send in flight at a crash
 *   (docs/campaigns.md): counted, not a violation.
 * - "due campaign steps sent": every step in the ledger reached the relay, the database says sent
 *   for exactly the messages the relay got, no recipient failed or was skipped, and no recipient is
 *   left due (PENDING/ACTIVE, nothing in flight, its next send 15 s or more ago).
 */
import type { ReceivedMail } from '../../test/smtp.ts';
import type { Check, Load, World } from '../world.ts';

const DOMAIN = 'cmp.chaos.example.com';
const FOLLOW_UP_S = 30;

interface Campaign {
  label: string;
  id: string;
  tag: string;
  recipients: number;
  perMinute: number;
}

const campaigns: Campaign[] = [];
let run = '';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const addressOf = (label: string, i: number) => `${run}-${label}-${i}@${DOMAIN}`.toLowerCase();
const messageIdOf = (mail: ReceivedMail) => /^Message-ID:\s*<([^@>]+)@/im.exec(mail.raw)?.[1] ?? '?';
const stepOf = (mail: ReceivedMail) => Number(/cmp step (\d+)/.exec(mail.text)?.[1] ?? 0);

async function importAudience(world: World, label: string, count: number, tag: string): Promise<void> {
  for (let from = 0; from < count; from += 1000) {
    const rows = Array.from({ length: Math.min(1000, count - from) }, (_, k) => ({
      name: `Recipient ${label}${from + k}`,
      email: addressOf(label, from + k),
      tags: [tag],
    }));
    const answer = await world.api.until('POST', `${world.api.org}/leads/import`, { body: { rows }, routeClass: 'lead.import', timeoutMs: 120_000 });
    if (answer.status !== 200 || answer.json.created + answer.json.merged !== rows.length)
      throw new Error(`campaign audience import: ${answer.status} ${answer.text.slice(0, 300)}`);
  }
}

async function createCampaign(world: World, inboxId: string, label: string, count: number, perMinute: number, scheduledAt?: Date): Promise<Campaign> {
  const tag = `chaos-cmp-${run}-${label}`.toLowerCase();
  await importAudience(world, label, count, tag);
  const answer = await world.api.until('POST', `${world.api.org}/campaigns`, {
    body: {
      name: `Chaos ${label} ${run}`,
      inboxId,
      audience: { tags: [tag] },
      steps: [
        { delaySeconds: 0, subject: 'Chaos {{ lead.name }}', text: 'cmp step 1 for {{ lead.name }}' },
        { delaySeconds: FOLLOW_UP_S, text: 'cmp step 2 for {{ lead.name }}' },
      ],
      settings: { perMinute, dailyLimit: 10_000_000, maxErrors: 100_000, stopOnReply: true },
      ...(scheduledAt ? { scheduledAt: scheduledAt.toISOString() } : {}),
    },
  });
  if (answer.status !== 201) throw new Error(`campaign ${label}: ${answer.status} ${answer.text.slice(0, 300)}`);
  const campaign = { label, id: answer.json.id as string, tag, recipients: count, perMinute };
  const started = await world.api.until('POST', `${world.api.org}/campaigns/${campaign.id}/start`, { body: {} });
  const want = scheduledAt ? 'SCHEDULED' : 'RUNNING';
  if (started.status !== 200 || started.json.status !== want) throw new Error(`start campaign ${label}: ${started.status} ${started.text.slice(0, 300)}`);
  campaigns.push(campaign);
  return campaign;
}

/** Lifts the pace of a campaign still sending, so that the rest of its audience is due now. */
async function hurry(world: World, c: Campaign): Promise<string> {
  const path = `${world.api.org}/campaigns/${c.id}`;
  const now = await world.api.until('GET', path);
  const status = now.json?.status as string;
  if (status === 'FINISHED' || status === 'CANCELED') return status;
  if (status === 'RUNNING' || status === 'SCHEDULED') await world.api.until('POST', `${path}/pause`, { body: {} });
  const patched = await world.api.until('PATCH', path, { body: { settings: { perMinute: 100_000 }, scheduledAt: null } });
  const resumed = await world.api.until('POST', `${path}/resume`, { body: {} });
  return `${status} → ${patched.status === 200 ? 'perMinute 100000' : `PATCH ${patched.status} ${patched.text.slice(0, 200)}`} → ${resumed.json?.status ?? resumed.status}`;
}

interface LedgerRow {
  campaign_id: string;
  recipient_id: string;
  step: number;
  message_id: string | null;
  address: string | null;
  message_status: string | null;
  locked_until: Date | null;
}

export const load: Load = {
  name: 'campaigns',
  ratePerSecond: 0,

  async setup(world: World): Promise<void> {
    run = world.rng.id(6).toLowerCase();
    const durationMs = world.durationMs;
    const minutes = durationMs / 60_000;
    // A few thousand recipients in a long run; a short one (CI's two minutes) gets a share that its
    // 2 cores can send within the run.
    const size = Math.max(50, Math.round(2000 * world.scale * Math.min(1, minutes / 10)));
    const inbox = await world.api.until('POST', `${world.api.org}/inboxes`, {
      body: { name: `Chaos outreach ${run}`, channel: 'email', config: { address: `outreach-${run}@chaos.example.com`, fromName: 'Chaos' } },
    });
    if (inbox.status !== 201) throw new Error(`email inbox: ${inbox.status} ${inbox.text.slice(0, 300)}`);
    // Two mails per recipient over three quarters of the run; B's over the third quarter.
    const pace = (mails: number, overMinutes: number) => Math.min(6000, Math.max(30, Math.ceil(mails / Math.max(0.5, overMinutes))));
    const a = await createCampaign(world, inbox.json.id, 'a', size, pace(2 * size, minutes * 0.75));
    const bSize = Math.max(10, Math.round(size / 4));
    const b = await createCampaign(world, inbox.json.id, 'b', bSize, pace(2 * bSize, minutes * 0.3), new Date(Date.now() + durationMs / 2));
    world.log(
      `campaigns: A ${a.id} ${a.recipients} recipients at ${a.perMinute}/min running; B ${b.id} ${b.recipients} at ${b.perMinute}/min from ${Math.round(durationMs / 2000)} s`,
    );
  },

  async tick(): Promise<void> {},

  async check(world: World, deadline: number): Promise<Check[]> {
    const ids = campaigns.map((c) => c.id);
    for (const c of campaigns) world.log(`campaigns: ${c.label} at the load's end: ${await hurry(world, c)}`);
    let statuses: { id: string; status: string }[] = [];
    while (Date.now() < deadline - 10_000) {
      statuses = await world.sql<{ id: string; status: string }>('select id, status from campaigns where id = any($1)', [ids]).catch(() => []);
      if (statuses.length === ids.length && statuses.every((s) => s.status === 'FINISHED')) break;
      await pause(2000);
    }
    // The relay may still be parsing the last mails.
    await pause(1500);

    const ledger = await world.sql<LedgerRow>(
      `select s.campaign_id, s.recipient_id, s.step, s.message_id, r.address, m.status as message_status, m.locked_until
         from campaign_sends s join campaign_recipients r on r.id = s.recipient_id left join messages m on m.id = s.message_id
        where s.campaign_id = any($1)`,
      [ids],
    );
    const byMessage = new Map(ledger.filter((r) => r.message_id).map((r) => [r.message_id!, r]));
    const mails = world.smtp.received.filter((m) => m.rcptTo.some((to) => to.toLowerCase().endsWith(`@${DOMAIN}`)));

    // (1) At most once: one Message-ID per (recipient, step), and each the ledger's.
    const idsOf = new Map<string, Set<string>>();
    const copies = new Map<string, number>();
    const once: string[] = [];
    for (const mail of mails) {
      const id = messageIdOf(mail);
      const key = `${mail.rcptTo.join(',').toLowerCase()} step ${stepOf(mail)}`;
      idsOf.set(key, (idsOf.get(key) ?? new Set()).add(id));
      copies.set(id, (copies.get(id) ?? 0) + 1);
      const row = byMessage.get(id);
      if (!row) once.push(`${key}: Message-ID ${id} is no campaign send of the ledger`);
      else if (row.address?.toLowerCase() !== mail.rcptTo.join(',').toLowerCase() || row.step + 1 !== stepOf(mail))
        once.push(`${key}: Message-ID ${id} is the ledger's step ${row.step + 1} to ${row.address}`);
    }
    for (const [key, set] of idsOf) if (set.size > 1) once.push(`${key}: ${set.size} Message-IDs (${[...set].join(' ')})`);
    const again = [...copies].filter(([, n]) => n > 1);
    world.count(
      'campaign mails received again under the same Message-ID (a send in flight at a crash)',
      again.reduce((a, [, n]) => a + n - 1, 0),
    );
    if (again.length > 0)
      world.log(
        `campaigns: same Message-ID more than once: ${again
          .slice(0, 20)
          .map(([id, n]) => `${id}×${n}`)
          .join(' ')}`,
      );

    // (2) Due steps sent: the ledger's messages at the relay and sent in the database, nothing left due.
    const due: string[] = [];
    // Accepted by the relay and not recorded yet: the sender still holds it (its lease); at most a copy later.
    let inFlight = 0;
    for (const row of ledger) {
      const got = row.message_id !== null && copies.has(row.message_id);
      const sent = row.message_status === 'sent' || row.message_status === 'delivered' || row.message_status === 'read';
      const what = `${row.recipient_id} step ${row.step + 1} (${row.message_id})`;
      if (!got && sent) due.push(`${what}: sent per the database, never at the relay`);
      else if (!got) due.push(`${what}: not delivered by the deadline (message ${row.message_status ?? 'missing'})`);
      else if (!sent && row.message_status === 'queued' && row.locked_until && new Date(row.locked_until).getTime() > Date.now()) inFlight++;
      else if (!sent) due.push(`${what}: at the relay, the database says ${row.message_status ?? 'no message'}`);
    }
    const left = await world.sql<{ id: string; status: string; step: number; skip_reason: string | null; error: string | null; next_send_at: Date | null }>(
      `select id, status, step, skip_reason, error, next_send_at from campaign_recipients
        where campaign_id = any($1)
          and (status in ('FAILED', 'SKIPPED', 'STOPPED')
               or (status in ('PENDING', 'ACTIVE') and awaiting is null and next_send_at <= now() - interval '15 seconds'))`,
      [ids],
    );
    for (const r of left)
      due.push(
        r.status === 'PENDING' || r.status === 'ACTIVE'
          ? `${r.id} step ${r.step + 1}: due since ${new Date(r.next_send_at!).toISOString()}, not sent`
          : `${r.id}: ${r.status} ${r.skip_reason ?? r.error ?? ''}`.trim(),
      );
    world.count('campaign mails at the relay and still in flight in the database at the deadline', inFlight);
    const [counts] = await world.sql<{ recipients: number; completed: number }>(
      `select count(*)::int as recipients, count(*) filter (where status = 'COMPLETED')::int as completed from campaign_recipients where campaign_id = any($1)`,
      [ids],
    );
    world.log(
      `campaigns: ${statuses.map((s) => `${s.id} ${s.status}`).join(', ')}; ${counts?.recipients} recipients, ${counts?.completed} completed; ` +
        `${ledger.length} steps in the ledger, ${mails.length} mails at the relay (${copies.size} Message-IDs); relay holds ${world.smtp.received.length} mails in all`,
    );
    return [
      { promise: 'campaign steps at most once (one Message-ID per recipient and step, the ledger’s)', count: idsOf.size, violations: once },
      {
        promise: 'due campaign steps sent (ledger = relay = database sent; none left due, failed or skipped)',
        count: ledger.length + left.length,
        violations: due,
      },
    ];
  },
};
