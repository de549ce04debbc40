import { hash, verify } from '@node-rs/argon2';

// argon2id with the library's defaults (m=19 MiB, t=2, p=1: OWASP's minimum recommendation).
export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

/** Spends the same time as a real check so a missing account cannot be told apart by timing. */
const DUMMY = hash('not-a-real-password');
export async function verifyNothing(password: string): Promise<false> {
  await verify(await DUMMY, password).catch(() => false);
  return false;
}
