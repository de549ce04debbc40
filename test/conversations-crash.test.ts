import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, ownerClient, startServer } from './processes.ts';
import { Receiver, type Received } from './receiver.ts';
import { eventually } from './helpers.ts';
import { embeddedDataDir } from './embedded-template.ts';

/**
 * kill -9 of a server taking inbound messages and holding an undelivered outbound one: after the
 * restart every message it acknowledged (2xx) is there, once, and the outbound message is
 * delivered exactly once by the restarted process.
 */
describe('conversations survive kill -9', () => {
  const dir = embeddedDataDir('svc-conversations-crash-');
  const children = new Set<ChildProcess>();
  afterAll(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  const EMAIL = 'owner@conversations-crash.example';
  const PASSWORD = 'a long enough password';
  const start = (port: number) =>
    startServer(
      port,
      {
        DATA_DIR: dir,
        BOOTSTRAP_EMAIL: EMAIL,
        BOOTSTRAP_PASSWORD: PASSWORD,
        APP_SECRET: 'crash-test-secret-that-is-long-enough',
        WEBHOOK_RETRY_DELAYS_S: '3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3',
        WEBHOOK_TIMEOUT_MS: '5000',
        RATE_LIMIT_MAX: '1000000',
      },
      children,
      90_000,
    );

  async function kill(child: ChildProcess): Promise<void> {
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  }

  it('every acknowledged inbound message is stored after the restart; the queued outbound message is delivered once', async () => {
    const receiver = await new Receiver().start();
    // The receiver is down (503) until the server has been killed; then it accepts. `accepted`
    // counts the 2xx answers per message id.
    let up = false;
    const accepted = new Map<string, number>();
    const messageIdOf = (req: Received) => (req.json as { payload?: { message?: { id?: string } } } | undefined)?.payload?.message?.id ?? '?';
    receiver.behaviour = (req) => {
      if (!up) return { status: 503 };
      accepted.set(messageIdOf(req), (accepted.get(messageIdOf(req)) ?? 0) + 1);
      return { status: 200, body: JSON.stringify({ id: `rcv-${messageIdOf(req)}` }), headers: { 'content-type': 'application/json' } };
    };

    const port = await freePort();
    let child = await start(port);
    const owner = await ownerClient(port, EMAIL, PASSWORD);
    const { call, org } = owner;
    const { key } = await call('POST', '/api-keys', { name: 'relay', scopes: ['conversations:read', 'conversations:write'] });
    const inbox = await call('POST', '/inboxes', { name: 'crm', channel: 'api', config: { url: receiver.url('/out') } });
    const lead = await call('POST', '/leads', { name: 'Queued', email: 'queued@example.com' });

    // The outbound message: queued, tried against the receiver that is down, still queued at the kill.
    const started = await call('POST', '/conversations', { inboxId: inbox.id, leadId: lead.id, text: 'queued before the kill' });
    const outbound = await eventually(
      async () => {
        const page = await call('GET', `/conversations/${started.id}/messages`);
        const out = page.items.find((m: { direction: string }) => m.direction === 'out');
        return out?.status === 'queued' && out.error ? out : null;
      },
      30_000,
      50,
    );

    // Inbound: four relays post messages until the server dies under them.
    const acknowledged = new Set<string>();
    let n = 0;
    let dead = false;
    const relay = async (r: number) => {
      while (!dead) {
        const externalId = `ext-${r}-${n++}`;
        try {
          const res = await fetch(`${org}/inboxes/${inbox.id}/messages`, {
            method: 'POST',
            headers: { 'x-api-key': key, 'content-type': 'application/json' },
            body: JSON.stringify({ contact: { name: `Relay ${r}`, address: `sender${r % 3}@example.com` }, text: `message ${externalId}`, externalId }),
          });
          if (res.status === 201 || res.status === 200) acknowledged.add(externalId);
          await res.arrayBuffer();
        } catch {
          dead = true;
        }
      }
    };
    const relays = [0, 1, 2, 3].map(relay);
    await eventually(() => acknowledged.size >= 60, 60_000, 10);
    await kill(child);
    dead = true;
    await Promise.all(relays);
    up = true;

    child = await start(port);
    await owner.signIn();

    // Every acknowledged message is stored, once.
    const stored = new Map<string, number>();
    const conversations = await call('GET', `/conversations?inboxId=${inbox.id}&pageSize=100`);
    for (const conversation of conversations.items as { id: string }[]) {
      for (let page = 1; ; page++) {
        const got = await call('GET', `/conversations/${conversation.id}/messages?page=${page}&pageSize=100`);
        for (const m of got.items as { direction: string; externalId?: string }[])
          if (m.direction === 'in') stored.set(m.externalId!, (stored.get(m.externalId!) ?? 0) + 1);
        if (got.items.length < 100) break;
      }
    }
    const missing = [...acknowledged].filter((id) => !stored.has(id));
    expect(missing, `${missing.length} of ${acknowledged.size} acknowledged messages lost`).toEqual([]);
    expect([...stored.values()].every((count) => count === 1)).toBe(true);

    // The outbound message queued before the kill goes out once, from the restarted process.
    const sent = await eventually(
      async () => {
        const page = await call('GET', `/conversations/${started.id}/messages`);
        const out = page.items.find((m: { id: string }) => m.id === outbound.id);
        return out?.status === 'sent' ? out : null;
      },
      120_000,
      100,
    );
    expect(sent.externalId).toBe(`rcv-${outbound.id}`);
    // Once it is sent, a message queued later goes through the same loop: a second delivery of
    // the first (a claim taken again) would have reached the receiver by the time this one did.
    const later = await call('POST', `/conversations/${started.id}/messages`, { text: 'after the restart' });
    await eventually(() => accepted.get(later.id) === 1, 30_000, 50);
    await eventually(
      async () => (await call('GET', `/conversations/${started.id}/messages`)).items.find((m: { id: string }) => m.id === later.id)?.status === 'sent',
      30_000,
      50,
    );
    expect(accepted.get(outbound.id)).toBe(1);

    await kill(child);
    await receiver.stop();
  }, 300_000);
});
