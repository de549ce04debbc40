import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, onPostgres } from './database.ts';
import { eventually } from './helpers.ts';
import { freePort, ownerClient, startServer } from './processes.ts';
import { SmtpStandIn } from './smtp.ts';

/**
 * Two server processes on one PostgreSQL database, both running the workers, one relay: a campaign
 * sends one mail per recipient across both, and its per-minute limit holds for the two together
 * (CONTRACT §9: limits and exactly-once hold across instances). 300 recipients at 150 a minute:
 * two runner batches in the first minute, the rest when the first sends are a minute old, which
 * both instances race for.
 */
describe.skipIf(!onPostgres)('a campaign run by two instances', () => {
  // Made when the test runs: a skipped describe's body still runs, its afterAll does not.
  let dirs: string[] = [];
  beforeAll(() => {
    dirs = [mkdtempSync(join(tmpdir(), 'svc-campaigns-a-')), mkdtempSync(join(tmpdir(), 'svc-campaigns-b-'))];
  });
  const children = new Set<ChildProcess>();
  let database: Awaited<ReturnType<typeof freshDatabase>> | null = null;
  let smtp: SmtpStandIn | null = null;
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await smtp?.close();
    await database?.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const RECIPIENTS = 300;
  const PER_MINUTE = 150;
  const EMAIL = 'owner@campaigns-instances.example';
  const PASSWORD = 'a long enough password';

  it(`sends once to each of ${RECIPIENTS} recipients, at most ${PER_MINUTE} in any minute across both instances`, async () => {
    smtp = await new SmtpStandIn().start();
    database = await freshDatabase();
    const ports = [await freePort(), await freePort()];
    // One after the other: the first creates the owner, the second finds it.
    for (const [i, port] of ports.entries()) {
      await startServer(
        port,
        {
          DATA_DIR: dirs[i]!,
          DATABASE_URL: database.url!,
          BOOTSTRAP_EMAIL: EMAIL,
          BOOTSTRAP_PASSWORD: PASSWORD,
          APP_SECRET: 'instances-test-secret-long-enough',
          SMTP_URL: smtp.url,
          RATE_LIMIT_MAX: '1000000',
        },
        children,
        90_000,
      );
    }

    const { call } = await ownerClient(ports[0]!, EMAIL, PASSWORD);

    const inbox = await call('POST', '/inboxes', { name: 'Outreach', channel: 'email', config: { address: 'sales@shop.example.com', fromName: 'Shop' } });
    const addressOf = (i: number) => `lead-${String(i).padStart(3, '0')}@instances.example.com`;
    const imported = await call('POST', '/leads/import', {
      rows: Array.from({ length: RECIPIENTS }, (_, i) => ({ name: `Lead ${i}`, email: addressOf(i), tags: ['instances'] })),
    });
    expect(imported).toMatchObject({ created: RECIPIENTS, rejected: [] });
    const campaign = await call('POST', '/campaigns', {
      name: 'Two instances',
      inboxId: inbox.id,
      audience: { tags: ['instances'] },
      steps: [{ delaySeconds: 0, subject: 'Hello {{ lead.name }}', text: 'Hi {{ lead.name }}' }],
      settings: { perMinute: PER_MINUTE, dailyLimit: 100_000, maxErrors: 100_000 },
    });
    // Started through the second instance: neither is special.
    const startedAt = Date.now();
    expect(await call('POST', `/campaigns/${campaign.id}/start`, {}, ports[1])).toMatchObject({ status: 'RUNNING', total: RECIPIENTS });

    // The first minute's share arrives, and no more while that minute lasts.
    await eventually(() => smtp!.received.length >= PER_MINUTE, 30_000, 50);
    await new Promise((r) => setTimeout(r, startedAt + 50_000 - Date.now()));
    expect(smtp.received.length, 'mails in the first 50 s').toBe(PER_MINUTE);

    const finished = await eventually(
      async () => {
        const c = await call('GET', `/campaigns/${campaign.id}`, undefined, ports[1]);
        return c.status === 'FINISHED' ? c : null;
      },
      60_000,
      250,
    );
    expect(finished.stats).toMatchObject({ total: RECIPIENTS, sent: RECIPIENTS, failed: 0, skipped: 0, pending: 0 });

    // Exactly one mail per recipient.
    const perRecipient = new Map<string, number>();
    for (const mail of smtp.received) for (const to of mail.rcptTo) perRecipient.set(to, (perRecipient.get(to) ?? 0) + 1);
    expect([...perRecipient.keys()].sort()).toEqual(Array.from({ length: RECIPIENTS }, (_, i) => addressOf(i)));
    expect([...perRecipient.values()].every((n) => n === 1)).toBe(true);
    expect(smtp.received).toHaveLength(RECIPIENTS);

    // The ledger's send times: no 60-second window (the limit's own, ending at any send) holds more than the limit.
    const { rows } = await database.pool!.query<{ at: Date }>('select at from campaign_sends where campaign_id = $1 order by at', [campaign.id]);
    const times = rows.map((r) => r.at.getTime());
    expect(times).toHaveLength(RECIPIENTS);
    let busiest = 0;
    for (let end = 0, begin = 0; end < times.length; end++) {
      while (times[begin]! <= times[end]! - 60_000) begin++;
      busiest = Math.max(busiest, end - begin + 1);
    }
    expect(busiest).toBeLessThanOrEqual(PER_MINUTE);
    const seconds = (t: number) => ((t - startedAt) / 1000).toFixed(1);
    console.log(
      `campaigns on two instances: ${new Set(times).size} runner batches from ${seconds(times[0]!)} s to ${seconds(times.at(-1)!)} s after the start; ` +
        `the busiest 60 s held ${busiest} (limit ${PER_MINUTE}); ${smtp.received.length} mails to ${perRecipient.size} recipients`,
    );
  }, 180_000);
});
