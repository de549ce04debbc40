import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabase, onPostgres } from './database.ts';
import { eventually } from './helpers.ts';
import { freePort, ownerClient, startServer } from './processes.ts';
import { SmtpStandIn, type ReceivedMail } from './smtp.ts';
import { embeddedDataDir } from './embedded-template.ts';

/**
 * kill -9 of a server in the middle of a campaign of 1,000 recipients and two steps, then a restart
 * on the same store: every (recipient, step) reaches the relay, none under two Message-IDs, and a
 * Message-ID arrives twice only for a message the killed process had in flight (CONTRACT §9: no
 * step is ever sent twice to one recipient, across restarts).
 */
describe('campaigns survive kill -9', () => {
  const dir = embeddedDataDir('svc-campaigns-crash-');
  const children = new Set<ChildProcess>();
  let database: Awaited<ReturnType<typeof freshDatabase>> | null = null;
  let smtp: SmtpStandIn | null = null;
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await smtp?.close();
    await database?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const LEADS = 1000;
  /** The outbound queue claims this many messages a round and sends them all at once (conversations/sender.ts). */
  const CONCURRENT_SENDS = 100;
  const EMAIL = 'owner@campaigns-crash.example';
  const PASSWORD = 'a long enough password';

  async function kill(child: ChildProcess): Promise<void> {
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  }

  /** The step a mail is of (its text says), and its Message-ID header. */
  const stepOf = (mail: ReceivedMail) => /step (\d)/.exec(mail.text)?.[1] ?? '?';
  const messageIdOf = (mail: ReceivedMail) => /^Message-ID:\s*(<[^>]+>)/im.exec(mail.raw)?.[1] ?? '?';

  it(`every (recipient, step) of ${LEADS} recipients arrives once through a kill -9 and a restart`, async () => {
    smtp = await new SmtpStandIn().start();
    // On PostgreSQL the processes use a fresh database of their own; else PGlite in DATA_DIR.
    if (onPostgres) database = await freshDatabase();
    const port = await freePort();
    const start = () =>
      startServer(
        port,
        {
          DATA_DIR: dir,
          BOOTSTRAP_EMAIL: EMAIL,
          BOOTSTRAP_PASSWORD: PASSWORD,
          APP_SECRET: 'crash-test-secret-that-is-long-enough',
          SMTP_URL: smtp!.url,
          RATE_LIMIT_MAX: '1000000',
          // The messages the killed process had claimed are sent again when their lease ends: 10 s, not a minute.
          OUTBOUND_LEASE_MS: '10000',
          ...(database ? { DATABASE_URL: database.url! } : {}),
        },
        children,
        90_000,
      );
    const began = performance.now();
    const seconds = () => ((performance.now() - began) / 1000).toFixed(1);

    let child = await start();
    const owner = await ownerClient(port, EMAIL, PASSWORD);
    const { call } = owner;

    const inbox = await call('POST', '/inboxes', { name: 'Outreach', channel: 'email', config: { address: 'sales@shop.example.com', fromName: 'Shop' } });
    const addressOf = (i: number) => `lead-${String(i).padStart(4, '0')}@crash.example.com`;
    const imported = await call('POST', '/leads/import', {
      rows: Array.from({ length: LEADS }, (_, i) => ({ name: `Lead ${i}`, email: addressOf(i), tags: ['crash'] })),
    });
    expect(imported).toMatchObject({ created: LEADS, merged: 0, rejected: [] });
    const campaign = await call('POST', '/campaigns', {
      name: 'Crash',
      inboxId: inbox.id,
      audience: { tags: ['crash'] },
      steps: [
        { delaySeconds: 0, subject: 'Hello {{ lead.name }}', text: 'step 1 for {{ lead.name }}' },
        { delaySeconds: 2, text: 'step 2 for {{ lead.name }}' },
      ],
      settings: { perMinute: 100_000, dailyLimit: 100_000, maxErrors: 100_000 },
    });
    const setUp = seconds();
    expect(await call('POST', `/campaigns/${campaign.id}/start`, {})).toMatchObject({ status: 'RUNNING', total: LEADS });

    // Killed with some hundreds of first steps at the relay, not all.
    const firstSteps = () => smtp!.received.filter((m) => stepOf(m) === '1').length;
    await eventually(() => firstSteps() >= 300, 60_000, 5);
    await kill(child);
    // A message whose data had all come in before the kill is still being parsed by the relay.
    await new Promise((r) => setTimeout(r, 500));
    const atKill = { firstSteps: firstSteps(), all: smtp.received.length, at: seconds() };
    const beforeKill = new Set(smtp.received.map(messageIdOf));
    expect(atKill.firstSteps).toBeLessThan(LEADS);

    child = await start();
    const restarted = seconds();
    await owner.signIn();
    // The messages the killed process had claimed wait for their lease (OUTBOUND_LEASE_MS) before they are sent again.
    const finished = await eventually(
      async () => {
        const c = await call('GET', `/campaigns/${campaign.id}`);
        return c.status === 'FINISHED' ? c : null;
      },
      150_000,
      250,
    );

    // Every (recipient, step) arrived, each under one Message-ID.
    const idsOf = new Map<string, Set<string>>();
    const timesOf = new Map<string, number>();
    for (const mail of smtp.received) {
      const key = `${mail.rcptTo.join(',')} ${stepOf(mail)}`;
      idsOf.set(key, (idsOf.get(key) ?? new Set()).add(messageIdOf(mail)));
      timesOf.set(messageIdOf(mail), (timesOf.get(messageIdOf(mail)) ?? 0) + 1);
    }
    const again = [...timesOf].filter(([, n]) => n > 1);
    console.log(
      `campaigns kill -9 (${onPostgres ? 'PostgreSQL' : 'PGlite'}): set up in ${setUp} s; killed at ${atKill.at} s with ${atKill.firstSteps} first steps ` +
        `(${atKill.all} mails) at the relay; restarted at ${restarted} s; FINISHED at ${seconds()} s; ${smtp.received.length} mails, ` +
        `${again.length} Message-IDs received more than once`,
    );
    const expected = Array.from({ length: LEADS }, (_, i) => ['1', '2'].map((step) => `${addressOf(i)} ${step}`)).flat();
    const missing = expected.filter((key) => !idsOf.has(key));
    expect(missing, `${missing.length} (recipient, step) never arrived`).toEqual([]);
    expect(idsOf.size).toBe(2 * LEADS);
    const twoIds = [...idsOf].filter(([, ids]) => ids.size > 1).map(([key]) => key);
    expect(twoIds, 'sent under two Message-IDs').toEqual([]);
    // The same Message-ID twice: the relay had it before the kill, the killed process never recorded it sent.
    expect(
      again.filter(([id, n]) => n > 2 || !beforeKill.has(id)),
      'received again, not in flight at the kill',
    ).toEqual([]);
    expect(again.length, 'Message-IDs received twice').toBeLessThanOrEqual(CONCURRENT_SENDS);

    expect(finished.stats).toMatchObject({ total: LEADS, sent: LEADS, failed: 0, skipped: 0, pending: 0 });
    expect((await call('GET', `/campaigns/${campaign.id}/recipients?status=COMPLETED&pageSize=1`)).total).toBe(LEADS);

    await kill(child);
  }, 240_000);
});
