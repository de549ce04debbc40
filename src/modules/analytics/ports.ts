import type { SQL } from 'drizzle-orm';
import type { Db } from '../../platform/db.ts';
import type { Tenant } from '../../platform/tenant.ts';

/** An integration row as the integrations module hands it out (credentials sealed): what analytics reads of it. */
export interface IntegrationRow {
  id: string;
  orgId: string;
  projectId: string | null;
  provider: string;
  name: string;
  /** `connected`, or `error` after an authentication failure. */
  status: string;
  lastError: { code: string; message: string; at: string } | null;
  config: Record<string, string>;
}

/** What analytics needs of the integrations module: the row, a fresh access token, "reconnect it", and which to sync. */
export interface IntegrationsPort {
  /** An integration the scope can see (its project's or an organization-wide one). */
  row(scope: Tenant, id: string, db?: Db): Promise<IntegrationRow | undefined>;
  /** The row's credentials with an access token valid for a while (refreshed when needed; `rejected`: the token Google refused). */
  freshCredentials(row: IntegrationRow, options?: { rejected?: string }): Promise<Record<string, string>>;
  /** Moves the integration to `error` (re-authorization needed), in the caller's transaction; false when it already was. */
  requireReauth(tx: Db, row: IntegrationRow, message: string): Promise<boolean>;
  /**
   * A subquery of the connected google integrations with a property or a site: rows of `id`,
   * `org_id` and `project_id` (the daily schedule queues a run for each).
   */
  googleToSync(): SQL;
}

/** The narrow ports of the analytics module, handed in by services.ts. */
export interface AnalyticsPorts {
  bus: { publishInTx(tx: Db, channel: string, message: unknown): Promise<void> };
  events: { record(tx: Db, list: AnalyticsEvent | AnalyticsEvent[]): Promise<unknown> };
  notifications: { notify(input: AnalyticsNotification, tx?: Db): Promise<unknown> };
  orgs: { projectFor(scope: { orgId: string; projectId: string | null }, requested: string | null | undefined): Promise<string | null> };
  integrations: IntegrationsPort;
}

/** A platform event analytics records (`analytics.synced`, `analytics.rule.*`). */
export interface AnalyticsEvent {
  orgId: string;
  projectId?: string | null;
  type: string;
  payload: Record<string, unknown>;
}

/** A notification analytics sends (a rule that fired). */
export interface AnalyticsNotification {
  orgId: string;
  projectId?: string | null;
  kind: string;
  title: string;
  body: string;
  link?: string | null;
}

export type { Db };
