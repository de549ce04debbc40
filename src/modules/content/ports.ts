import type { Db } from '../../platform/db.ts';
import type { Tenant } from '../../platform/tenant.ts';
import type { NewEvent } from '../events/index.ts';
import type { NewNotification } from '../notifications/index.ts';

/**
 * What the content module uses of other modules, as interfaces: services.ts hands in the real ones
 * (the bus, the events module's recorder, orgs, integrations, media, notifications).
 */

/** An integration row as the integrations module hands it out (credentials sealed): what content reads of it. */
export interface IntegrationRow {
  id: string;
  /** `linkedin` or `x`: the connector that publishes. */
  provider: string;
  name: string;
  /** `token` or `oauth` (an OAuth connection's access token is refreshed, and refreshed again once when refused). */
  authType: string;
}

/** The integrations module: the account a post publishes through, its credentials, and its health. */
export interface IntegrationsPort {
  /** An integration the scope can see (its project's or an organization-wide one). */
  row(scope: Tenant, id: string, db?: Db): Promise<IntegrationRow | undefined>;
  /** The row's credentials with an access token valid for a while (refreshed when needed; `rejected`: the token the platform refused). */
  freshCredentials(row: IntegrationRow, options?: { rejected?: string }): Promise<Record<string, string>>;
  /** A success proves the credentials work again (not after REAUTH_REQUIRED: only a reconnect ends that). */
  markHealthy(tx: Db, row: IntegrationRow): Promise<void>;
  /** Marks the integration in error (re-authorization needed) and emits integration.error, in the caller's transaction. */
  markError(tx: Db, row: IntegrationRow, error: { code: string; message: string }): Promise<void>;
  /** Moves the integration to `error` (re-authorization needed), in the caller's transaction; false when it already was. */
  requireReauth(tx: Db, row: IntegrationRow, message: string): Promise<boolean>;
}

/** A media file as the media module hands it out: what a post reads of it. */
export interface MediaFile {
  id: string;
  contentType: string;
  size: number;
}

/** The media module: a post's attachments, and their bytes when publishing. */
export interface MediaPort {
  /** The files of `ids` the scope can see (its project's and organization-wide uploads); unknown ids are left out. */
  many(scope: Tenant, ids: string[], db?: Db): Promise<MediaFile[]>;
  read(row: MediaFile): Promise<Buffer>;
}

/** The events module's recorder: `post.*` events in the caller's transaction (the outbox). */
export interface EventsPort {
  record(tx: Db, list: NewEvent | NewEvent[]): Promise<unknown>;
}

/** The orgs module: the project a post belongs to. */
export interface OrgsPort {
  /**
   * The project a request may use: an API key's own project (naming another is a 403), or the
   * requested one, which must belong to the organization (else 404), or null when none is named.
   */
  projectFor(scope: { orgId: string; projectId: string | null }, requested: string | null | undefined): Promise<string | null>;
  /** The project a resource goes to when none is named: the organization's first. */
  defaultProjectId(orgId: string): Promise<string>;
}

/** A notification to the organization (a post that failed, an account to reconnect), in the caller's transaction. */
export interface NotifyPort {
  notify(input: NewNotification, tx?: Db): Promise<unknown>;
}

/** The bus: the publisher is woken when the caller's transaction commits. */
export interface BusPort {
  publishInTx(tx: Db, channel: string, message: unknown): Promise<void>;
}

/** The ports of ContentService. */
export interface ContentPorts {
  bus: BusPort;
  events: EventsPort;
  orgs: OrgsPort;
  integrations: IntegrationsPort;
  media: MediaPort;
}

/** The ports of the Publisher. */
export interface PublisherPorts {
  events: EventsPort;
  notifications: NotifyPort;
  integrations: IntegrationsPort;
  media: MediaPort;
}
