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
  notify(
    input: { orgId: string; projectId?: string | null; userId?: string | null; kind: string; title: string; body: string; link?: string | null },
    tx?: Db,
  ): Promise<unknown>;
}

/** WebhooksService: the orgs module, and the plans module when plans are on. */
export interface WebhooksPorts {
  orgs: WebhooksOrgsPort;
  plans?: WebhooksPlansPort;
}

/** The module's endpoints (WebhooksService), as the deliverer uses them. */
export interface EndpointsPort {
  /** Sealed secrets are opened once per value, not once per delivery. */
  open(sealed: string): string;
  /** A deactivated endpoint's pending deliveries end, with the reason. */
  cancelPending(db: Db, orgId: string, endpointId: string, reason: string): Promise<void>;
}

/** WebhookDeliverer: the module's endpoints, and who to tell (and how) when one is deactivated. */
export interface DelivererPorts {
  webhooks: EndpointsPort;
  notifications: WebhooksNotificationsPort;
  orgs: WebhooksOrgsPort;
}
