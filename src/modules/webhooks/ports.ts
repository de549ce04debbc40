import type { Db } from '../../platform/db.ts';

/** What the webhooks module needs of others, handed in by services.ts. */

/** The orgs module: the project a request may use, and who to tell when an endpoint is deactivated. */
export interface WebhooksOrgsPort {
  projectFor(scope: { orgId: string; projectId: string | null }, requested: string | null | undefined): Promise<string | null>;
  /** The user ids of the organization's owners. */
  ownerIds(orgId: string): Promise<string[]>;
}

/** The plans module: the webhook endpoints limit (CONTRACT §12). */
export interface WebhooksPlansPort {
  readonly enabled: boolean;
  /** In the creating transaction: 429 PLAN_LIMIT when one more endpoint would pass the limit. */
  assertRoom(tx: Db, orgId: string, limit: 'webhookEndpoints', adding?: number): Promise<void>;
}

/** The notifications module: an owner is told of a deactivated endpoint. */
export interface WebhooksNotificationsPort {
  notify(input: { orgId: string; projectId?: string | null; userId?: string | null; kind: string; title: string; body: string; link?: string | null }, tx?: Db): Promise<unknown>;
}
