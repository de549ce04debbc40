import { transaction, type Db } from '../../platform/db.ts';
import { AppError } from '../../platform/errors.ts';
import { GoogleApiError } from './google.ts';
import type { IntegrationRow, IntegrationsPort } from './ports.ts';

export const REAUTH_REQUIRED = 'REAUTH_REQUIRED';

export function isReauth(error: unknown): boolean {
  return error instanceof AppError && error.code === REAUTH_REQUIRED;
}

/**
 * Calls to Google with an integration's access token (refreshed by the integrations module before it
 * expires). A 401 means the token died before its time (revoked, expired early): it is refreshed
 * once and the call made again; a second 401 means the grant itself is dead, and the integration
 * goes to `error` (`integration.error` REAUTH_REQUIRED, once, with a notification to reconnect).
 */
export class GoogleAccess {
  private readonly db: Db;
  private readonly integrations: IntegrationsPort;

  constructor(db: Db, integrations: IntegrationsPort) {
    this.db = db;
    this.integrations = integrations;
  }

  /**
   * `fn` with a valid token. `state` carries the token between the calls of one sync or listing, so
   * a refused token is refreshed at most once. Throws REAUTH_REQUIRED (AppError 422) when Google
   * keeps refusing, and the integrations module's errors (OAUTH_UNAVAILABLE …) when a refresh fails.
   */
  async call<T>(row: IntegrationRow, state: { token?: string; refreshed?: boolean }, fn: (token: string) => Promise<T>): Promise<T> {
    state.token ??= await this.token(row);
    try {
      return await fn(state.token);
    } catch (error) {
      if (!(error instanceof GoogleApiError) || error.kind !== 'auth') throw error;
      if (state.refreshed) throw await this.reauth(row, error.message);
      state.refreshed = true;
      state.token = await this.token(row, state.token);
    }
    try {
      return await fn(state.token);
    } catch (error) {
      if (error instanceof GoogleApiError && error.kind === 'auth') throw await this.reauth(row, error.message);
      throw error;
    }
  }

  private async token(row: IntegrationRow, rejected?: string): Promise<string> {
    const credentials = await this.integrations.freshCredentials(row, rejected === undefined ? {} : { rejected });
    if (!credentials.accessToken) throw await this.reauth(row, 'the connection holds no access token');
    return credentials.accessToken;
  }

  /** Google refuses a freshly refreshed token: only connecting the account again helps. */
  private async reauth(row: IntegrationRow, reason: string): Promise<AppError> {
    const message = `Google refused the access of ${row.name} even after a token refresh (${reason})`.slice(0, 1000);
    await transaction(this.db, async (tx) => {
      await this.integrations.requireReauth(tx, row, message);
    });
    return new AppError(422, REAUTH_REQUIRED, `Integration ${row.id} (${row.name}) must be connected again: ${message}`, { integrationId: row.id });
  }
}
