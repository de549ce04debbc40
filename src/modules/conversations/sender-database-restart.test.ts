import pg from 'pg';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../../../test/database.ts';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { eventually } from '../../../test/helpers.ts';
import { SmtpStandIn } from '../../../test/smtp.ts';
import { messages } from './tables.ts';

/**
 * Found by the chaos run (issue 31): a PostgreSQL restart while instances were sending campaign
 * mail sent hundreds of them twice. The relay had accepted them, the record of the sends failed
 * with the database gone, and the messages stayed claimed until their lease ended, when they were
 * sent again. Here the relay takes the mail, and before it answers 250 the test database refuses
 * every connection for two seconds and its backends are terminated: the restart as the sender sees
 * it, on the shared server.
 */
describe.skipIf(!onPostgres)('a send accepted while the database restarts', () => {
  let t: TestApp;
  let smtp: SmtpStandIn;
  let restarted = false;
  beforeAll(async () => {
    smtp = await new SmtpStandIn({
      beforeAccept: async () => {
        if (restarted) return;
        restarted = true;
        await blockDatabase(t.database.url!, 2000);
      },
    }).start();
    t = await buildTestApp({ env: { SMTP_URL: smtp.url, OUTBOUND_LEASE_MS: '3000' } });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('is recorded once the database answers again, and not sent a second time', async () => {
    const base = `/api/v1/orgs/${t.orgA.orgId}`;
    const auth = { token: t.orgA.token };
    const inbox = await t.call({
      method: 'POST',
      url: `${base}/inboxes`,
      auth,
      payload: { name: 'Mail', channel: 'email', config: { address: 'team@restart.example.com' } },
    });
    expect(inbox.statusCode, inbox.body).toBe(201);
    const lead = await t.call({ method: 'POST', url: `${base}/leads`, auth, payload: { name: 'Rita Restart', email: 'rita@restart.example' } });
    const started = await t.call({
      method: 'POST',
      url: `${base}/conversations`,
      auth,
      payload: { inboxId: inbox.json().id, leadId: lead.json().id, text: 'Hello once' },
    });
    expect(started.statusCode, started.body).toBe(201);

    const sent = await eventually(
      async () => {
        const rows = await t.database.db.select().from(messages).where(eq(messages.conversationId, started.json().id));
        return rows.find((m) => m.direction === 'out' && m.status === 'sent');
      },
      20_000,
      100,
    );
    expect(restarted).toBe(true);
    // Past the lease and a few loop rounds: a send the record lost would have gone again by now.
    await new Promise((r) => setTimeout(r, 6000));
    expect(smtp.received.filter((m) => m.rcptTo.includes('rita@restart.example'))).toHaveLength(1);
    const [after] = await t.database.db.select().from(messages).where(eq(messages.id, sent.id));
    expect(after).toMatchObject({ status: 'sent', attempts: 1 });
  }, 60_000);
});

/** The database refuses connections for `ms` and its open ones are ended (as a fast shutdown ends them). */
async function blockDatabase(url: string, ms: number): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`alter database "${name}" allow_connections false`);
    await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [name]);
  } finally {
    await admin.end();
  }
  setTimeout(() => {
    const again = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    void again
      .connect()
      .then(() => again.query(`alter database "${name}" allow_connections true`))
      .finally(() => void again.end());
  }, ms);
}
