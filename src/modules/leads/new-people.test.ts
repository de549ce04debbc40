import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inArray } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { newId } from '../../platform/ids.ts';
import { isUniqueViolation, type Database } from '../../platform/db.ts';
import { eventRows } from '../events/outbox.ts';
import { eventOutbox, events } from '../events/tables.ts';
import { NewPeopleWriter, type NewPerson } from './new-people.ts';
import { leadKeys, leads } from './tables.ts';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ workers: false });
});
afterAll(async () => {
  await t.close();
});

/** The database as the writer sees it, counting the writer's statements on the way through. */
function counting(database: Database): { database: Database; statements: () => number } {
  let n = 0;
  return {
    database: {
      ...database,
      prepared: (name, text, values, tx) => {
        if (name === 'lead_create_new_people') n++;
        return database.prepared(name, text, values, tx);
      },
    },
    statements: () => n,
  };
}

const locks = new Map<string, bigint>();
/** One advisory lock id per key, as the service derives them (any distinct numbers do here). */
const lockOf = (key: string) => {
  if (!locks.has(key)) locks.set(key, BigInt(locks.size + 1) * 7919n + 1_000_000n);
  return locks.get(key)!;
};

function person(name: string, emailKey: string | null, phoneKey: string | null = null, id = newId('lead')): NewPerson {
  const now = new Date();
  const row = {
    id,
    orgId: t.orgA.orgId,
    projectId: t.orgA.projectId,
    name,
    email: emailKey,
    phone: phoneKey,
    company: null,
    website: null,
    source: 'test',
    status: 'NEW',
    score: 0,
    scoreReason: null,
    tags: ['batch'],
    custom: { n: name },
    emailKey,
    phoneKey,
    websiteKey: null,
    createdAt: now,
    updatedAt: now,
  };
  const keys = [...(emailKey ? [{ kind: 'email' as const, key: emailKey }] : []), ...(phoneKey ? [{ kind: 'phone' as const, key: phoneKey }] : [])];
  const [event] = eventRows([{ orgId: row.orgId, projectId: row.projectId, type: 'lead.created', payload: { lead: { id, name } } }], now);
  return { row, keys, locks: keys.map((k) => lockOf(`${k.kind}:${k.key}`)), event: event! };
}

async function stored(people: NewPerson[]) {
  const ids = people.map((p) => p.row.id);
  const db = t.database.db;
  return {
    leads: (await db.select({ id: leads.id }).from(leads).where(inArray(leads.id, ids))).map((r) => r.id).sort(),
    claims: (await db.select({ leadId: leadKeys.leadId, key: leadKeys.key }).from(leadKeys).where(inArray(leadKeys.leadId, ids))).map((r) => r.key).sort(),
    events: (
      await db
        .select({ id: events.id })
        .from(events)
        .where(
          inArray(
            events.id,
            people.map((p) => p.event.id),
          ),
        )
    ).length,
    outbox: (
      await db
        .select({ id: eventOutbox.id })
        .from(eventOutbox)
        .where(
          inArray(
            eventOutbox.id,
            people.map((p) => p.event.id),
          ),
        )
    ).length,
  };
}

describe('new people written together', () => {
  it('creates that arrive together share one statement, each lead with its keys and its event', async () => {
    const { database, statements } = counting(t.database);
    const writer = new NewPeopleWriter(database);
    const people = Array.from({ length: 12 }, (_, i) =>
      person(`Together ${i}`, `together-${i}@example.com`, i % 3 ? null : `+3361234${String(i).padStart(4, '0')}`),
    );
    // Values that an array or JSON literal would have to quote, as they are.
    const awkward = { tags: ['a,b', 'c"d', '{x}', 'NULL', 'back\\slash', 'ünï', ''], custom: { nested: [1, { z: null }], 'quo"te': 'é' } };
    Object.assign(people[0]!.row, awkward);
    const answers = await Promise.all(people.map((p) => writer.write(p)));
    expect(answers).toEqual(people.map(() => true));
    expect(statements()).toBe(1);
    const found = await stored(people);
    expect(found.leads).toEqual(people.map((p) => p.row.id).sort());
    expect(found.claims).toEqual(people.flatMap((p) => p.keys.map((k) => k.key)).sort());
    expect(found.events).toBe(12);
    expect(found.outbox).toBe(12);
    const [first] = await t.database.db
      .select({ tags: leads.tags, custom: leads.custom })
      .from(leads)
      .where(inArray(leads.id, [people[0]!.row.id]));
    expect(first).toEqual(awkward);
  });

  it('two creates of one person never share a statement: the first is the new lead, the second finds the key taken', async () => {
    const { database, statements } = counting(t.database);
    const writer = new NewPeopleWriter(database);
    const first = person('Twice', 'twice@example.com');
    const second = person('Twice again', 'twice@example.com');
    const other = person('Other', 'other-of-twice@example.com');
    expect(await Promise.all([writer.write(first), writer.write(second), writer.write(other)])).toEqual([true, false, true]);
    expect(statements()).toBe(2);
    const found = await stored([first, second]);
    expect(found.leads).toEqual([first.row.id]);
    expect(found.events).toBe(1);
  });

  it('a person whose keys are taken in part fails the shared statement, which is redone one by one: nothing of it stays half-written', async () => {
    const writer = new NewPeopleWriter(t.database);
    const known = person('Known', 'known-partly@example.com');
    expect(await writer.write(known)).toBe(true);
    // The known e-mail with a phone nobody has: the phone's claim would name a lead never inserted.
    const partly = person('Partly known', 'known-partly@example.com', '+33698765432');
    const fresh = [person('Fresh 1', 'fresh-1@example.com'), person('Fresh 2', 'fresh-2@example.com', '+33698765433')];
    expect(await Promise.all([writer.write(fresh[0]!), writer.write(partly), writer.write(fresh[1]!)])).toEqual([true, false, true]);
    const found = await stored([partly, ...fresh]);
    expect(found.leads).toEqual(fresh.map((p) => p.row.id).sort());
    expect(found.claims).toEqual(['+33698765433', 'fresh-1@example.com', 'fresh-2@example.com']);
    expect(found.events).toBe(2);
  });

  it('a row the database refuses fails its own create only', async () => {
    const writer = new NewPeopleWriter(t.database);
    const taken = person('Has the id', 'id-owner@example.com');
    expect(await writer.write(taken)).toBe(true);
    // Another person with a lead id already stored: the primary key refuses it, not its neighbours.
    const clash = person('Same id', 'id-clash@example.com', null, taken.row.id);
    const fine = [person('Fine 1', 'fine-1@example.com'), person('Fine 2', 'fine-2@example.com')];
    const answers = await Promise.allSettled([writer.write(fine[0]!), writer.write(clash), writer.write(fine[1]!)]);
    expect(answers.map((a) => a.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(isUniqueViolation((answers[1] as PromiseRejectedResult).reason)).toBe(true);
    const found = await stored(fine);
    expect(found.leads).toEqual(fine.map((p) => p.row.id).sort());
    expect((await stored([clash])).claims).toEqual(['id-owner@example.com']);
  });
});
