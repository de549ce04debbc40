import { eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../platform/db.ts';
import { users } from './tables.ts';

/**
 * The reads of the users table other modules need (orgs: members, the first-run check). Plain
 * queries rather than AuthService methods because AuthService depends on OrgsService, and orgs
 * needs these while auth is being built.
 */

export interface UserIdentity {
  id: string;
  email: string;
  name: string | null;
}

const identity = { id: users.id, email: users.email, name: users.name };

export function usersByIds(db: Db, ids: string[]): Promise<UserIdentity[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.select(identity).from(users).where(inArray(users.id, ids));
}

/** Emails are stored lower-cased and trimmed (AuthService.register). */
export async function userByEmail(db: Db, email: string): Promise<UserIdentity | undefined> {
  const [user] = await db.select(identity).from(users).where(eq(users.email, email.trim().toLowerCase()));
  return user;
}

export async function countUsers(db: Db): Promise<number> {
  const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(users);
  return row?.n ?? 0;
}
