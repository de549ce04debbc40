import { and, asc, eq } from 'drizzle-orm';
import { events } from '../src/modules/events/tables.ts';
import type { TestApp } from './harness.ts';

/** Helpers every test may use; a helper needed by a second test file moves here. */

/** Polls until fn returns a truthy value (tests wait for background work, never assert timings). */
export async function eventually<T>(
  fn: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 10_000,
  stepMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value as T;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/** Platform events of a type in an organization (the outbox), oldest first. */
export async function eventsOf(t: TestApp, orgId: string, type: string) {
  const rows = await t.database.db
    .select()
    .from(events)
    .where(and(eq(events.orgId, orgId), eq(events.type, type)))
    .orderBy(asc(events.id));
  return rows.map((r) => ({ ...r, payload: r.payload as Record<string, any> })); // eslint-disable-line @typescript-eslint/no-explicit-any
}
