/**
 * The signed-in session (CONTRACT §11): the access token lives only in this module's memory; the
 * refresh token is an HttpOnly cookie page scripts cannot read, sent by the browser to
 * /api/v1/auth only. A reload or a new tab restores the session from the cookie. Refreshes are
 * serialized across tabs (Web Locks), because refresh tokens are single-use: two tabs presenting the
 * same one at once would revoke the session.
 */
import { api } from '../api/client';

interface Tokens {
  accessToken: string;
  expiresIn: number;
}

let token: { value: string; expiresAt: number } | null = null;
let restoring: Promise<boolean> | null = null;
const listeners = new Set<(signedIn: boolean) => void>();

function notify(): void {
  for (const listener of listeners) listener(token !== null);
}

/** Called with true/false when the session starts or ends. */
export function onSessionChange(listener: (signedIn: boolean) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function signedIn(): boolean {
  return token !== null;
}

export function startSession(tokens: Tokens): void {
  token = { value: tokens.accessToken, expiresAt: Date.now() + tokens.expiresIn * 1000 };
  notify();
}

async function withLock<T>(work: () => Promise<T>): Promise<T> {
  const locks = typeof navigator !== 'undefined' ? navigator.locks : undefined;
  return locks ? locks.request('session-refresh', work) : work();
}

/** Exchanges the refresh cookie for a new access token; false when there is no session to restore. */
export function restore(): Promise<boolean> {
  restoring ??= withLock(async () => {
    const { data, response } = await api.POST('/api/v1/auth/refresh', { body: { cookie: true } });
    if (response.ok && data) {
      startSession(data.tokens);
      return true;
    }
    if (token) {
      token = null;
      notify();
    }
    return false;
  }).finally(() => {
    restoring = null;
  });
  return restoring;
}

/** The access token for a request, renewed first when it has less than a minute left. */
export async function currentToken(): Promise<string | null> {
  if (token && token.expiresAt - Date.now() < 60_000) await restore();
  return token?.value ?? null;
}

/** The API answered 401: the session is over. */
export function sessionExpired(): void {
  if (!token) return;
  token = null;
  notify();
}

export async function signOut(): Promise<void> {
  await api.POST('/api/v1/auth/logout', { body: {} }).catch(() => undefined);
  token = null;
  notify();
}
