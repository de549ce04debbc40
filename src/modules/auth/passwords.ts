import { hash, verify } from '@node-rs/argon2';
import { badRequest } from '../../platform/errors.ts';

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

/**
 * The most common passwords of at least 8 characters (shorter ones fail the length rule anyway),
 * from the published breach top lists; compared case-insensitively.
 */
const COMMON = new Set([
  'password',
  'password1',
  'password12',
  'password123',
  'password1234',
  'password!',
  'passw0rd',
  'p@ssw0rd',
  'p@ssword',
  '12345678',
  '123456789',
  '1234567890',
  '0123456789',
  '12341234',
  '11223344',
  '12121212',
  '123123123',
  '987654321',
  '147258369',
  '11111111',
  '00000000',
  '88888888',
  '66666666',
  '55555555',
  '99999999',
  '22222222',
  '77777777',
  '12344321',
  'qwertyui',
  'qwertyuiop',
  'qwerty12',
  'qwerty123',
  'qwerty1234',
  '1q2w3e4r',
  '1q2w3e4r5t',
  '1qaz2wsx',
  'zaq12wsx',
  'qazwsx123',
  'q1w2e3r4',
  'q1w2e3r4t5',
  '1234qwer',
  'qwer1234',
  '123qweasd',
  'asdfghjkl',
  'asdfasdf',
  'zxcvbnm1',
  'zxcvbnm123',
  'aa123456',
  'a1234567',
  'abc12345',
  'abcd1234',
  'abcdefgh',
  'aaaaaaaa',
  'iloveyou',
  'iloveyou1',
  'iloveyou!',
  'lovelove',
  'sunshine',
  'sunshine1',
  'princess',
  'princess1',
  'football',
  'football1',
  'baseball',
  'baseball1',
  'basketball',
  'superman',
  'starwars',
  'whatever',
  'trustno1',
  'letmein1',
  'letmein123',
  'welcome1',
  'welcome123',
  'welcome!',
  'changeme',
  'changeme1',
  'computer',
  'internet',
  'michelle',
  'jennifer',
  'samantha',
  'corvette',
  'mercedes',
  'maverick',
  'mustang1',
  'babygirl',
  'chocolate',
  'butterfly',
  'liverpool',
  'chelsea1',
  'arsenal1',
  'blink182',
  'michael1',
  'jordan23',
  'pokemon1',
  'test1234',
  'testtest',
  'secret123',
  'admin123',
  'admin1234',
  'administrator',
  'monkey123',
  'dragon123',
  'master123',
  'shadow123',
  'access14',
  'ashley12',
  'qwerty!@#',
  '1234abcd',
  'passpass',
  'azertyuiop',
  'azerty123',
  'hello123',
  'freedom1',
  'whatever1',
  'nicole12',
]);

/** Why a new password is refused (CONTRACT §2), or null when it is acceptable. */
export function passwordProblem(password: string): string | null {
  if ([...password].length < 8) return 'must be at least 8 characters';
  if (/^[\s\u200b-\u200d\u2060\ufeff]*$/u.test(password)) return 'must not be all blank';
  if (COMMON.has(password.trim().toLowerCase())) return 'is one of the most common passwords; choose another';
  return null;
}

/** Every place that sets a password (register, first owner, invitations, change, reset) goes through this: 400 VALIDATION_ERROR. */
export function assertAcceptablePassword(password: string, field = 'body.password'): void {
  const problem = passwordProblem(password);
  if (problem) throw badRequest(`${field} ${problem}`, [{ field, message: problem }]);
}
