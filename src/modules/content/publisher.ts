import { and, eq, sql } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import { rows, transaction, type Db } from '../../platform/db.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../config.ts';
import { AppError } from '../../platform/errors.ts';
import { REAUTH_REQUIRED } from '../integrations/index.ts';
import { connectorFor, type Connector } from '../integrations/index.ts';
import type { ConnectorContext, PublishOutcome, PublishRequest } from '../integrations/index.ts';
import type { EventsPort, IntegrationRow, IntegrationsPort, MediaPort, NotifyPort, PublisherPorts } from './ports.ts';
import { composeText } from '../../shared/platforms.ts';
import { publicPost } from './service.ts';
import { posts, type PostAttempt, type PostError } from './tables.ts';

type PostRow = typeof posts.$inferSelect;
type Failure = Extract<PublishOutcome, { ok: false }>;

/** Credentials that could not be had: REAUTH_REQUIRED (not retried), OAUTH_UNAVAILABLE (retried). */
function credentialFailure(error: unknown): Failure {
  if (!(error instanceof AppError)) throw error;
  return { ok: false, code: error.code, message: error.message, retryable: error.code === 'OAUTH_UNAVAILABLE' };
}

const BATCH = 10;
/** How long one attempt may hold a post: uploads and the post call, each with its own time-out. */
const LEASE_MS = 5 * 60_000;
const CALL_TIMEOUT_MS = 10_000;
/** Retries never go past 15 minutes after the first attempt. */
const MAX_WINDOW_S = 900;

/**
 * Publishes due posts: SCHEDULED ones whose time has come and PUBLISHING ones whose (next) attempt
 * is due, claimed with FOR UPDATE SKIP LOCKED and leased, so any number of instances publish each
 * post once. A post becomes PUBLISHED only with the platform's id and URL in hand. An attempt whose
 * outcome was never recorded (the instance died during the call) is not repeated blindly: the post
 * fails with OUTCOME_UNKNOWN so nobody posts twice.
 */
export class Publisher {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly config: Config;
  private readonly events: EventsPort;
  private readonly notifications: NotifyPort;
  private readonly integrations: IntegrationsPort;
  private readonly media: MediaPort;

  constructor(deps: Deps, ports: PublisherPorts) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.config = deps.config;
    this.events = ports.events;
    this.notifications = ports.notifications;
    this.integrations = ports.integrations;
    this.media = ports.media;
  }

  /** One round; true when there may be more due right away. */
  async round(): Promise<boolean> {
    await this.recoverAbandoned();
    const now = this.clock.now();
    const iso = now.toISOString();
    // The claimed ids by the primary key (`= any(array(…))`), never by hashing the whole table.
    const claimed = await rows<{ id: string }>(
      this.db,
      sql`
      update posts set status = 'PUBLISHING', in_flight = true, attempts = attempts + 1,
        first_attempt_at = coalesce(first_attempt_at, ${iso}::timestamptz), next_attempt_at = null,
        locked_until = ${new Date(now.getTime() + LEASE_MS).toISOString()}::timestamptz, updated_at = ${iso}::timestamptz
      where id = any(array(
        select id from posts
        where ((status = 'SCHEDULED' and scheduled_at <= ${iso}::timestamptz)
            or (status = 'PUBLISHING' and next_attempt_at <= ${iso}::timestamptz))
          and not in_flight
        order by coalesce(next_attempt_at, scheduled_at) limit ${BATCH}
        for update skip locked))
      returning id`,
    );
    const ids = claimed.map((r) => r.id);
    await Promise.all(ids.map((id) => this.attempt(id)));
    return ids.length === BATCH;
  }

  /** Leases that ran out with an attempt in flight: the platform may or may not have the post. */
  private async recoverAbandoned(): Promise<void> {
    const now = this.clock.now();
    await transaction(this.db, async (tx) => {
      const stale = await tx
        .select()
        .from(posts)
        .where(and(eq(posts.status, 'PUBLISHING'), eq(posts.inFlight, true), sql`${posts.lockedUntil} < ${now.toISOString()}::timestamptz`))
        .limit(BATCH)
        .for('update', { skipLocked: true });
      for (const row of stale) {
        await this.fail(
          tx,
          row,
          {
            ok: false,
            code: 'OUTCOME_UNKNOWN',
            retryable: false,
            message: 'The publishing attempt was interrupted before its result was recorded; check the account, then publish again if the post is missing',
          },
          undefined,
        );
      }
    });
  }

  private async attempt(id: string): Promise<void> {
    const [post] = await this.db.select().from(posts).where(eq(posts.id, id));
    if (!post || post.status !== 'PUBLISHING' || !post.inFlight) return;
    const integration = post.integrationId ? await this.integrations.row({ orgId: post.orgId, projectId: post.projectId }, post.integrationId) : undefined;
    let outcome: PublishOutcome;
    const connector = integration ? connectorFor(integration.provider) : undefined;
    if (!integration || !connector) {
      outcome = {
        ok: false,
        code: 'INTEGRATION_MISSING',
        retryable: false,
        message: post.integrationId ? `Integration ${post.integrationId} no longer exists` : 'The post has no integration to publish through',
      };
    } else {
      const mediaRows = await this.media.many({ orgId: post.orgId, projectId: null }, post.mediaIds);
      const request: PublishRequest = {
        text: composeText(post.body, post.hashtags),
        body: post.body,
        hashtags: post.hashtags,
        media: post.mediaIds.flatMap((mid) => {
          const row = mediaRows.find((m) => m.id === mid);
          return row ? [{ id: row.id, contentType: row.contentType, size: row.size, read: () => this.media.read(row) }] : [];
        }),
      };
      if (request.media.length !== post.mediaIds.length) {
        outcome = { ok: false, code: 'MEDIA_MISSING', retryable: false, message: 'A media file of the post was deleted' };
      } else {
        const baseUrl = connector.provider === 'linkedin' ? this.config.linkedinApiUrl : this.config.xApiUrl;
        try {
          outcome = await this.publishWith(
            connector,
            { baseUrl, allowPrivate: this.config.webhookAllowPrivate, timeoutMs: CALL_TIMEOUT_MS },
            integration,
            request,
          );
        } catch (error) {
          outcome = { ok: false, code: 'INTERNAL', retryable: false, message: (error as Error).message || 'publishing failed' };
        }
      }
    }
    await this.record(id, outcome, integration);
  }

  /**
   * Publishes with the integration's credentials; an OAuth connection's access token is refreshed
   * first when it is about to expire. When the platform refuses an OAuth token we held for valid
   * (revoked or expired early), nothing was posted: it is refreshed once and the post tried again; a
   * second refusal means the user must connect again (REAUTH_REQUIRED).
   */
  private async publishWith(connector: Connector, ctx: ConnectorContext, integration: IntegrationRow, request: PublishRequest): Promise<PublishOutcome> {
    let credentials: Record<string, string>;
    try {
      credentials = await this.integrations.freshCredentials(integration);
    } catch (error) {
      return credentialFailure(error);
    }
    const outcome = await connector.publish(ctx, credentials, request);
    if (outcome.ok || !outcome.auth || integration.authType !== 'oauth') return outcome;
    try {
      credentials = await this.integrations.freshCredentials(integration, { rejected: credentials.accessToken });
    } catch (error) {
      return credentialFailure(error);
    }
    const again = await connector.publish(ctx, credentials, request);
    if (again.ok || !again.auth) return again;
    return { ok: false, code: REAUTH_REQUIRED, retryable: false, message: `${again.message} (after refreshing the token); connect the account again` };
  }

  private async record(id: string, outcome: PublishOutcome, integration: IntegrationRow | undefined): Promise<void> {
    const now = this.clock.now();
    await transaction(this.db, async (tx) => {
      const [row] = await tx.select().from(posts).where(eq(posts.id, id)).for('update');
      if (!row || row.status !== 'PUBLISHING' || !row.inFlight) return;
      const log: PostAttempt = { attempt: row.attempts, at: now.toISOString(), ok: outcome.ok };
      if (outcome.ok) {
        const [after] = await tx
          .update(posts)
          .set({
            status: 'PUBLISHED',
            externalId: outcome.externalId,
            url: outcome.url,
            publishedAt: now,
            error: null,
            inFlight: false,
            lockedUntil: null,
            nextAttemptAt: null,
            attemptLog: [...row.attemptLog, log],
            updatedAt: now,
          })
          .where(eq(posts.id, id))
          .returning();
        await this.events.record(tx, {
          orgId: row.orgId,
          projectId: row.projectId,
          type: 'post.published',
          payload: { post: publicPost(after!), externalId: outcome.externalId, url: outcome.url, publishedAt: now.toISOString() },
        });
        if (integration) await this.integrations.markHealthy(tx, integration);
        return;
      }
      Object.assign(log, { code: outcome.code, message: outcome.message, retryable: outcome.retryable });
      const retryAt = this.retryTime(row, outcome, now);
      if (retryAt) {
        log.nextAttemptAt = retryAt.toISOString();
        await tx
          .update(posts)
          .set({
            inFlight: false,
            lockedUntil: null,
            nextAttemptAt: retryAt,
            error: { code: outcome.code, message: outcome.message, retryable: true },
            attemptLog: [...row.attemptLog, log],
            updatedAt: now,
          })
          .where(eq(posts.id, id));
        return;
      }
      await this.fail(tx, { ...row, attemptLog: [...row.attemptLog, log] }, outcome, integration);
    });
  }

  /** When to try again, or null: retryable failures only, a few times, never past 15 minutes after the first attempt. */
  private retryTime(row: PostRow, outcome: Failure, now: Date): Date | null {
    if (!outcome.retryable) return null;
    const delays = this.config.publishRetryDelaysS;
    if (row.attempts > delays.length) return null;
    const delayS = Math.max(delays[row.attempts - 1] ?? 0, outcome.retryAfterS ?? 0);
    const at = new Date(now.getTime() + delayS * 1000);
    const first = row.firstAttemptAt ?? now;
    const windowS = Math.min(this.config.publishRetryWindowS, MAX_WINDOW_S);
    return at.getTime() - first.getTime() <= windowS * 1000 ? at : null;
  }

  /** FAILED with post.failed; an authentication failure also puts the integration in error. People are told either way. */
  private async fail(tx: Db, row: PostRow, outcome: Failure, integration: IntegrationRow | undefined): Promise<void> {
    const now = this.clock.now();
    const error: PostError = { code: outcome.code, message: outcome.message, retryable: outcome.retryable };
    const [after] = await tx
      .update(posts)
      .set({
        status: 'FAILED',
        error,
        failedAt: now,
        inFlight: false,
        lockedUntil: null,
        nextAttemptAt: null,
        attemptLog: row.attemptLog,
        updatedAt: now,
      })
      .where(eq(posts.id, row.id))
      .returning();
    await this.events.record(tx, { orgId: row.orgId, projectId: row.projectId, type: 'post.failed', payload: { post: publicPost(after!), error } });
    const link = `/api/v1/orgs/${row.orgId}/content/${row.id}`;
    // An OAuth connection that needs the user again: the integration is put in error and its owners
    // told once (not per post); each post still says it failed.
    if (outcome.code === REAUTH_REQUIRED && integration) await this.integrations.requireReauth(tx, integration, outcome.message);
    if (outcome.auth && integration) {
      await this.integrations.markError(tx, integration, { code: outcome.code, message: outcome.message });
      await this.notifications.notify(
        {
          orgId: row.orgId,
          projectId: row.projectId,
          kind: 'integration.error',
          link,
          title: `Reconnect ${integration.name}: ${integration.provider === 'x' ? 'X' : 'LinkedIn'} refused its credentials`,
          body: `Post ${row.id} was not published. ${outcome.message}`,
        },
        tx,
      );
      return;
    }
    await this.notifications.notify(
      {
        orgId: row.orgId,
        projectId: row.projectId,
        kind: 'post.failed',
        link,
        title: `A ${row.platform === 'X' ? 'X' : 'LinkedIn'} post failed to publish`,
        body: `Post ${row.id}: ${outcome.message}`,
      },
      tx,
    );
  }
}
