import { asc, eq, inArray, or, sql, type SQL } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import { transaction, type Db } from '../../platform/db.ts';
import type { Clock } from '../../platform/clock.ts';
import { AppError, badRequest, conflict, notFound, unprocessable } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { isStorableTime } from '../../platform/dates.ts';
import { envelope, orderBy, pageOf, statusesOf, type ListQuery } from '../../platform/http/pagination.ts';
import { agentRunOf, type Scope } from '../../platform/context.ts';
import { inScope } from '../../platform/tenant.ts';
import { connectorFor, providerOfPlatform } from '../integrations/index.ts';
import type { BusPort, ContentPorts, EventsPort, IntegrationsPort, MediaPort, OrgsPort } from './ports.ts';
import { checkPost, excerpt } from './rules.ts';
import { allowed, POST_STATUSES } from '../../shared/posts.ts';
import { composeText, MAX_MEDIA, PLATFORMS, type Platform } from '../../shared/platforms.ts';
import { posts } from './tables.ts';
import { localDate, parseRange, assertTimezone } from '../../platform/range.ts';

type PostRow = typeof posts.$inferSelect;

export const PUBLISHER_WAKE = 'wake:publisher';

export interface DraftInput {
  /** The project to write to; a caller with a default project (a workflow's) passes it here. */
  projectId?: string;
  platform: Platform;
  body: string;
  hashtags?: string[];
  scheduledAt?: string | Date | null;
  integrationId?: string | null;
  mediaIds?: string[];
}

export interface PostPatch {
  projectId?: string;
  platform?: Platform;
  body?: string;
  hashtags?: string[];
  scheduledAt?: string | Date | null;
  integrationId?: string | null;
  mediaIds?: string[];
}

export interface PostListQuery extends ListQuery {
  status?: string;
  platform?: string;
  projectId?: string;
}

export function publicPost(row: PostRow) {
  return {
    id: row.id,
    projectId: row.projectId,
    platform: row.platform,
    body: row.body,
    hashtags: row.hashtags,
    mediaIds: row.mediaIds,
    scheduledAt: row.scheduledAt,
    integrationId: row.integrationId,
    status: row.status,
    createdBy: row.createdBy,
    agentRunId: row.agentRunId,
    approvedBy: row.approvedBy ?? null,
    approvedAt: row.approvedAt,
    externalId: row.externalId,
    url: row.url,
    publishedAt: row.publishedAt,
    error: row.error ?? null,
    failedAt: row.failedAt,
    attempts: row.attempts,
    nextAttemptAt: row.status === 'PUBLISHING' ? row.nextAttemptAt : null,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
export type Post = ReturnType<typeof publicPost>;

const SORTABLE = {
  createdAt: posts.createdAt,
  updatedAt: posts.updatedAt,
  scheduledAt: posts.scheduledAt,
  publishedAt: posts.publishedAt,
  status: posts.status,
  platform: posts.platform,
};

function toDate(value: string | Date | null | undefined, field: string): Date | null | undefined {
  if (value === undefined || value === null) return value;
  const d = value instanceof Date ? value : new Date(value);
  if (!isStorableTime(d.getTime()))
    throw badRequest(`${field} is not a valid timestamp (years 0001 to 9999)`, [{ field, message: 'must be ISO 8601 with an offset' }]);
  return d;
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => '\\' + c);
}

export class ContentService {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly bus: BusPort;
  private readonly events: EventsPort;
  private readonly orgs: OrgsPort;
  private readonly integrations: IntegrationsPort;
  private readonly media: MediaPort;
  private readonly config: Deps['config'];

  constructor(deps: Deps, ports: ContentPorts) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.bus = ports.bus;
    this.config = deps.config;
    this.events = ports.events;
    this.orgs = ports.orgs;
    this.integrations = ports.integrations;
    this.media = ports.media;
  }

  /** The project named (a bound scope's own when none is), else the organization's default one. */
  private async resolveProject(scope: Scope, projectId: string | undefined): Promise<string> {
    return (await this.orgs.projectFor(scope, projectId)) ?? this.orgs.defaultProjectId(scope.orgId);
  }

  /** The integration must be this organization's (visible to the project) and publish to the post's platform. */
  private async checkIntegration(
    scope: Scope,
    projectId: string,
    platform: Platform,
    integrationId: string | null | undefined,
    db: Db = this.db,
  ): Promise<void> {
    if (!integrationId) return;
    const row = await this.integrations.row({ orgId: scope.orgId, projectId }, integrationId, db);
    if (!row) throw unprocessable('INTEGRATION_MISSING', `Integration ${integrationId} does not exist in this organization or project`);
    if (row.provider !== providerOfPlatform(platform)) {
      throw badRequest(`Integration ${integrationId} is a ${row.provider} account; ${platform} posts need a ${providerOfPlatform(platform)} one`, [
        { field: 'body.integrationId', message: 'provider does not match the platform' },
      ]);
    }
  }

  /** A key bound to a project attaches only media it can see (its project's and organization-wide uploads). */
  private async checkMedia(scope: Scope, platform: Platform, mediaIds: string[], db: Db = this.db): Promise<void> {
    if (mediaIds.length === 0) return;
    if (mediaIds.length > MAX_MEDIA[platform])
      throw badRequest(`${platform} posts carry at most ${MAX_MEDIA[platform]} media`, [{ field: 'body.mediaIds', message: `at most ${MAX_MEDIA[platform]}` }]);
    const rows = await this.media.many(scope, mediaIds, db);
    const missing = mediaIds.filter((id) => !rows.some((r) => r.id === id));
    if (missing.length)
      throw badRequest(`Unknown media: ${missing.join(', ')}`, [{ field: 'body.mediaIds', message: 'must be ids returned by POST …/media/upload' }]);
    const video = rows.find((r) => !r.contentType.startsWith('image/'));
    if (video)
      throw badRequest(`Media ${video.id} is ${video.contentType}; posts publish images (video publishing is not supported yet)`, [
        { field: 'body.mediaIds', message: 'only images can be attached to posts' },
      ]);
  }

  private async wakePublisher(tx: Db): Promise<void> {
    await this.bus.publishInTx(tx, PUBLISHER_WAKE, null);
  }

  /**
   * Creates a draft (`post.created`). The one entry point for drafts: the API, the CONTENT_WRITER
   * agent's `create_draft` tool and the `content.createDraft` workflow step.
   */
  async createDraft(scope: Scope, input: DraftInput): Promise<Post> {
    if (!(PLATFORMS as readonly string[]).includes(input.platform)) {
      throw badRequest(`platform must be one of ${PLATFORMS.join(', ')}`, [{ field: 'body.platform', message: `must be one of ${PLATFORMS.join(', ')}` }]);
    }
    const hashtags = [...new Set(input.hashtags ?? [])];
    const mediaIds = [...new Set(input.mediaIds ?? [])];
    checkPost(input.platform, input.body, hashtags);
    const projectId = await this.resolveProject(scope, input.projectId);
    await this.checkIntegration(scope, projectId, input.platform, input.integrationId);
    await this.checkMedia(scope, input.platform, mediaIds);
    const scheduledAt = toDate(input.scheduledAt, 'body.scheduledAt') ?? null;
    const now = this.clock.now();
    const agentRunId = agentRunOf(scope.actor);
    return transaction(this.db, async (tx) => {
      const [row] = await tx
        .insert(posts)
        .values({
          id: newId('post', now.getTime()),
          orgId: scope.orgId,
          projectId,
          platform: input.platform,
          body: input.body,
          hashtags,
          mediaIds,
          scheduledAt,
          integrationId: input.integrationId ?? null,
          status: 'DRAFT',
          createdBy: scope.actor,
          agentRunId,
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      const post = publicPost(row!);
      await this.events.record(tx, { orgId: scope.orgId, projectId, type: 'post.created', payload: { post, actor: scope.actor } });
      return post;
    });
  }

  async row(scope: Scope, id: string, db: Db = this.db, lock = false): Promise<PostRow> {
    const query = db
      .select()
      .from(posts)
      .where(inScope(scope, posts, eq(posts.id, id)));
    const [row] = lock ? await query.for('update') : await query;
    if (!row) throw notFound('Post');
    return row;
  }

  async get(scope: Scope, id: string): Promise<Post> {
    return publicPost(await this.row(scope, id));
  }

  async list(scope: Scope, query: PostListQuery) {
    const page = pageOf(query);
    const conditions: (SQL | undefined)[] = [];
    if (query.status) {
      conditions.push(inArray(posts.status, statusesOf(query.status, POST_STATUSES)));
    }
    if (query.platform) {
      const platforms = query.platform
        .split(',')
        .map((s) => s.trim().toUpperCase())
        .filter(Boolean);
      const bad = platforms.filter((s) => !(PLATFORMS as readonly string[]).includes(s));
      if (bad.length)
        throw badRequest(`Unknown platform ${bad.join(', ')}; allowed: ${PLATFORMS.join(', ')}`, [
          { field: 'querystring.platform', message: `must be one of ${PLATFORMS.join(', ')}` },
        ]);
      conditions.push(inArray(posts.platform, platforms));
    }
    if (query.projectId) conditions.push(eq(posts.projectId, query.projectId));
    if (query.q && query.q.trim()) conditions.push(sql`${posts.body} ilike ${`%${escapeLike(query.q.trim())}%`}`);
    const where = inScope(scope, posts, ...conditions);
    const order = orderBy(query.sort, SORTABLE, '-createdAt', posts.id);
    const [items, counted] = await Promise.all([
      this.db
        .select()
        .from(posts)
        .where(where)
        .orderBy(...order)
        .limit(page.limit)
        .offset(page.offset),
      this.db
        .select({ n: sql<number>`count(*)::int` })
        .from(posts)
        .where(where),
    ]);
    return envelope(items.map(publicPost), counted[0]?.n ?? 0, page);
  }

  /**
   * Changes a post while DRAFT, APPROVED, SCHEDULED or FAILED (409 otherwise). A change of text,
   * hashtags, media or platform revokes an approval (back to DRAFT). A new time on an approved post
   * reschedules it: future → SCHEDULED, none or past → APPROVED (publish it with …/publish).
   */
  async update(scope: Scope, id: string, patch: PostPatch): Promise<Post> {
    const targetProject = patch.projectId === undefined ? undefined : await this.resolveProject(scope, patch.projectId);
    return transaction(this.db, async (tx) => {
      const before = await this.row(scope, id, tx, true);
      if (!allowed('edit', before.status)) throw conflict(`A ${before.status} post cannot be changed`);
      const platform = (patch.platform ?? before.platform) as Platform;
      const body = patch.body ?? before.body;
      const hashtags = patch.hashtags ? [...new Set(patch.hashtags)] : before.hashtags;
      const mediaIds = patch.mediaIds ? [...new Set(patch.mediaIds)] : before.mediaIds;
      const projectId = targetProject ?? before.projectId;
      const integrationId = patch.integrationId !== undefined ? patch.integrationId : before.integrationId;
      const scheduledAt = patch.scheduledAt !== undefined ? (toDate(patch.scheduledAt, 'body.scheduledAt') ?? null) : before.scheduledAt;
      checkPost(platform, body, hashtags);
      // Inside the transaction: on the embedded database a query outside it would wait for it forever.
      if (patch.integrationId !== undefined || patch.platform !== undefined || targetProject)
        await this.checkIntegration(scope, projectId, platform, integrationId, tx);
      if (patch.mediaIds || patch.platform) await this.checkMedia(scope, platform, mediaIds, tx);

      const contentChanged =
        body !== before.body ||
        platform !== before.platform ||
        JSON.stringify(hashtags) !== JSON.stringify(before.hashtags) ||
        JSON.stringify(mediaIds) !== JSON.stringify(before.mediaIds);
      const now = this.clock.now();
      let status = before.status;
      const next: Partial<PostRow> = { platform, body, hashtags, mediaIds, projectId, integrationId, scheduledAt, updatedAt: now };
      if (contentChanged && before.status !== 'DRAFT') {
        status = 'DRAFT';
        Object.assign(next, { approvedBy: null, approvedAt: null });
      } else if (before.status === 'APPROVED' || before.status === 'SCHEDULED') {
        const future = scheduledAt !== null && scheduledAt.getTime() > now.getTime();
        if (future && !integrationId) throw unprocessable('INTEGRATION_MISSING', 'A scheduled post needs an integration to publish through');
        status = future ? 'SCHEDULED' : 'APPROVED';
      }
      next.status = status;
      const [after] = await tx
        .update(posts)
        .set(next)
        .where(inScope(scope, posts, eq(posts.id, id)))
        .returning();
      if (status === 'SCHEDULED') await this.wakePublisher(tx);
      return publicPost(after!);
    });
  }

  async delete(scope: Scope, id: string): Promise<void> {
    await transaction(this.db, async (tx) => {
      const row = await this.row(scope, id, tx, true);
      if (!allowed('delete', row.status)) throw conflict('The post is being published; delete it once that ends');
      await tx.delete(posts).where(inScope(scope, posts, eq(posts.id, id)));
    });
  }

  /**
   * Approves a DRAFT (or a FAILED post, to try again), optionally with an edited body
   * (`post.approved` with approvedBy and editedBody). A future scheduledAt makes it SCHEDULED; else
   * with an integration it is published now; without one it stays APPROVED.
   */
  async approve(scope: Scope, id: string, input: { body?: string } = {}): Promise<Post> {
    return transaction(this.db, async (tx) => {
      const before = await this.row(scope, id, tx, true);
      if (!allowed('approve', before.status)) throw conflict(`A ${before.status} post cannot be approved`);
      const body = input.body ?? before.body;
      checkPost(before.platform as Platform, body, before.hashtags);
      const now = this.clock.now();
      const future = before.scheduledAt !== null && before.scheduledAt.getTime() > now.getTime();
      if (before.integrationId) {
        const integration = await this.integrations.row({ orgId: scope.orgId, projectId: before.projectId }, before.integrationId, tx);
        if (!integration) throw unprocessable('INTEGRATION_MISSING', `Integration ${before.integrationId} no longer exists; set another integrationId`);
      } else if (future) {
        throw unprocessable('INTEGRATION_MISSING', 'A scheduled post needs an integration to publish through; set integrationId');
      }
      const status = future ? 'SCHEDULED' : before.integrationId ? 'PUBLISHING' : 'APPROVED';
      const [after] = await tx
        .update(posts)
        .set({
          body,
          status,
          approvedBy: scope.actor,
          approvedAt: now,
          error: null,
          failedAt: null,
          ...(status === 'PUBLISHING' ? this.freshPublishing(now) : {}),
          updatedAt: now,
        })
        .where(inScope(scope, posts, eq(posts.id, id)))
        .returning();
      const post = publicPost(after!);
      const payload: Record<string, unknown> = { post, approvedBy: scope.actor };
      if (input.body !== undefined && input.body !== before.body) payload.editedBody = input.body;
      await this.events.record(tx, { orgId: scope.orgId, projectId: before.projectId, type: 'post.approved', payload });
      if (status !== 'APPROVED') await this.wakePublisher(tx);
      return post;
    });
  }

  private freshPublishing(now: Date): Partial<PostRow> {
    return { nextAttemptAt: now, attempts: 0, firstAttemptAt: null, lockedUntil: null, inFlight: false, attemptLog: [] };
  }

  /**
   * Publishes an approved, scheduled or failed post now (422 INTEGRATION_MISSING without an
   * integration). A DRAFT is approved first when `approveDraft` (workflow steps act as approvers).
   */
  async publishNow(scope: Scope, id: string, options: { approveDraft?: boolean } = {}): Promise<Post> {
    return transaction(this.db, async (tx) => {
      const before = await this.row(scope, id, tx, true);
      const draft = before.status === 'DRAFT' && options.approveDraft;
      if (!allowed('publish', before.status) && !draft) {
        throw conflict(before.status === 'DRAFT' ? 'Approve the draft before publishing it' : `A ${before.status} post cannot be published`);
      }
      const integration = before.integrationId
        ? await this.integrations.row({ orgId: scope.orgId, projectId: before.projectId }, before.integrationId, tx)
        : undefined;
      if (!integration)
        throw unprocessable(
          'INTEGRATION_MISSING',
          before.integrationId ? `Integration ${before.integrationId} no longer exists` : 'The post has no integration to publish through; set integrationId',
        );
      const now = this.clock.now();
      const [after] = await tx
        .update(posts)
        .set({
          status: 'PUBLISHING',
          error: null,
          failedAt: null,
          ...(draft ? { approvedBy: scope.actor, approvedAt: now } : {}),
          ...this.freshPublishing(now),
          updatedAt: now,
        })
        .where(inScope(scope, posts, eq(posts.id, id)))
        .returning();
      const post = publicPost(after!);
      if (draft)
        await this.events.record(tx, { orgId: scope.orgId, projectId: before.projectId, type: 'post.approved', payload: { post, approvedBy: scope.actor } });
      await this.wakePublisher(tx);
      return post;
    });
  }

  /**
   * What publishing would send, without sending or changing anything (workflow test mode): the
   * platform request with the credentials left out.
   */
  async previewPublish(scope: Scope, id: string, fallbackIntegrationId?: string) {
    const row = await this.row(scope, id);
    const integrationId = row.integrationId ?? fallbackIntegrationId;
    const integration = integrationId ? await this.integrations.row({ orgId: scope.orgId, projectId: row.projectId }, integrationId) : undefined;
    if (!integration)
      throw unprocessable(
        'INTEGRATION_MISSING',
        integrationId ? `Integration ${integrationId} no longer exists` : 'The post has no integration to publish through; set integrationId',
      );
    const connector = connectorFor(integration.provider)!;
    // An OAuth connection's token is refreshed if due (a dead grant shows here as REAUTH_REQUIRED); the preview carries no secret.
    const credentials = { ...(await this.integrations.freshCredentials(integration)) };
    delete credentials.accessToken;
    delete credentials.refreshToken;
    const media = await this.media.many({ orgId: scope.orgId, projectId: null }, row.mediaIds);
    const baseUrl = integration.provider === 'linkedin' ? this.config.linkedinApiUrl : this.config.xApiUrl;
    const request = connector.preview({ baseUrl, allowPrivate: false, timeoutMs: 0 }, credentials, {
      text: composeText(row.body, row.hashtags),
      body: row.body,
      hashtags: row.hashtags,
      media: media.map((m) => ({ id: m.id, contentType: m.contentType, size: m.size, read: async () => Buffer.alloc(0) })),
    });
    return {
      postId: row.id,
      status: row.status,
      platform: row.platform,
      integrationId: integration.id,
      provider: integration.provider,
      text: composeText(row.body, row.hashtags),
      request,
    };
  }

  /** Drafts written by one agent run (content generation). */
  async byAgentRun(orgId: string, agentRunId: string, extraIds: string[] = []): Promise<Post[]> {
    const rows = await this.db
      .select()
      .from(posts)
      .where(
        inScope(
          { orgId, projectId: null },
          posts,
          extraIds.length ? or(eq(posts.agentRunId, agentRunId), inArray(posts.id, extraIds)) : eq(posts.agentRunId, agentRunId),
        ),
      )
      .orderBy(asc(posts.id));
    return rows.map(publicPost);
  }

  /**
   * Scheduled, publishing, published and failed posts in [from, to), by time (`at`: published, else
   * scheduled, else failed), grouped into every day of the window in the time zone.
   */
  async calendar(scope: Scope, query: { from: string; to: string; projectId?: string; timezone?: string; platform?: string }) {
    const tz = assertTimezone(query.timezone ?? 'UTC');
    const range = parseRange(query.from, query.to, tz);
    const days = Math.ceil((range.to.getTime() - range.from.getTime()) / 86_400_000);
    if (days > 400) throw badRequest('A calendar window is at most 400 days', [{ field: 'to', message: 'window longer than 400 days' }]);
    if (query.projectId && scope.projectId && query.projectId !== scope.projectId) throw notFound('Project');
    const at = sql`coalesce(${posts.publishedAt}, ${posts.scheduledAt}, ${posts.failedAt})`;
    const rows = await this.db
      .select()
      .from(posts)
      .where(
        inScope(
          scope,
          posts,
          inArray(posts.status, ['SCHEDULED', 'PUBLISHING', 'PUBLISHED', 'FAILED']),
          query.projectId ? eq(posts.projectId, query.projectId) : undefined,
          query.platform ? eq(posts.platform, query.platform.toUpperCase()) : undefined,
          sql`${at} >= ${range.from.toISOString()}::timestamptz`,
          sql`${at} < ${range.to.toISOString()}::timestamptz`,
        ),
      )
      .orderBy(at, posts.id)
      .limit(5000);
    const entries = rows.map((r) => {
      const when = (r.publishedAt ?? r.scheduledAt ?? r.failedAt)!;
      return {
        postId: r.id,
        projectId: r.projectId,
        platform: r.platform,
        status: r.status,
        at: when,
        date: localDate(when.getTime(), tz),
        title: excerpt(r.body),
        excerpt: excerpt(r.body, 200),
        hashtags: r.hashtags,
        integrationId: r.integrationId,
        url: r.url,
        externalId: r.externalId,
      };
    });
    const byDate = new Map<string, typeof entries>();
    for (const e of entries) byDate.set(e.date, [...(byDate.get(e.date) ?? []), e]);
    const dayList: { date: string; entries: typeof entries }[] = [];
    const lastDate = localDate(range.to.getTime() - 1, tz);
    for (let ms = range.from.getTime(), guard = 0; guard < 402; guard++, ms += 86_400_000) {
      const date = localDate(ms, tz);
      if (dayList.at(-1)?.date !== date) dayList.push({ date, entries: byDate.get(date) ?? [] });
      if (date === lastDate) break;
    }
    return { from: range.from, to: range.to, timezone: tz, days: dayList, entries };
  }
}

export function integrationMissing(message: string): AppError {
  return unprocessable('INTEGRATION_MISSING', message);
}
