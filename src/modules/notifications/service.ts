import { and, desc, eq, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db.ts';
import { notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { envelope, pageOf, type ListQuery } from '../../platform/http/pagination.ts';
import type { NotificationsPorts, OrgStreamPort } from './ports.ts';
import type { Scope } from '../../platform/context.ts';
import { inScope } from '../../platform/tenant.ts';
import { notificationReads, notifications } from './tables.ts';

export interface NewNotification {
  orgId: string;
  /** The project it is about (a report's, an approval's run, a post's…); null for organization-level ones (budget). */
  projectId?: string | null;
  userId?: string | null;
  /** What it is about: webhook.disabled, approval.requested, report.created, budget.warning … */
  kind: string;
  title: string;
  body: string;
  link?: string | null;
}

type Row = typeof notifications.$inferSelect;

/** `readAt` is the reader's own; a notification stays unread for everyone else. */
export function publicNotification(row: Row, readAt: Date | null = null) {
  return {
    id: row.id,
    kind: row.kind,
    title: row.title,
    body: row.body,
    link: row.link,
    userId: row.userId,
    projectId: row.projectId,
    read: readAt !== null,
    readAt,
    createdAt: row.createdAt,
  };
}

/** The one way every module tells people something: stored, and pushed on the organization stream. */
export class NotificationsService {
  private readonly db: Db;
  private readonly stream: OrgStreamPort;

  constructor(deps: Deps, ports: NotificationsPorts) {
    this.db = deps.db;
    this.stream = ports.orgStream;
  }

  /** With a transaction, the notification and its stream message exist only if it commits. */
  async notify(input: NewNotification, tx?: Db): Promise<ReturnType<typeof publicNotification>> {
    const db = tx ?? this.db;
    const [row] = await db
      .insert(notifications)
      .values({
        id: newId('notification'),
        orgId: input.orgId,
        projectId: input.projectId ?? null,
        userId: input.userId ?? null,
        kind: input.kind,
        title: input.title.slice(0, 300),
        body: input.body.slice(0, 4000),
        link: input.link ?? null,
      })
      .returning();
    const out = publicNotification(row!);
    // `data.projectId` lets the stream keep a project-bound key to its project's notifications.
    const message = { kind: 'notification', data: JSON.parse(JSON.stringify(out)), userId: out.userId };
    if (tx) await this.stream.publishInTx(tx, input.orgId, message);
    else await this.stream.publish(input.orgId, message);
    return out;
  }

  /**
   * A user sees the organization's and their own; an API key sees every member's; a key bound to a
   * project sees only that project's (CONTRACT §2: no organization-wide ones).
   */
  private visible(scope: Scope): SQL {
    const userId = scope.actor.type === 'user' ? scope.actor.id : null;
    return inScope(scope, notifications, userId ? or(isNull(notifications.userId), eq(notifications.userId, userId)) : undefined);
  }

  /**
   * The reader's read time. `notifications.read_at` was shared by every reader before read state
   * was per reader; a notification read then stays read, and it is never set any more.
   */
  private readAt() {
    return sql<Date | null>`coalesce(${notificationReads.readAt}, ${notifications.readAt})`.mapWith(notifications.readAt);
  }

  async list(scope: Scope, query: ListQuery & { unread?: boolean; kind?: string }) {
    const page = pageOf(query);
    // Read state is each reader's own: the actor, a user or an API key.
    const mine = and(eq(notificationReads.notificationId, notifications.id), eq(notificationReads.readerId, scope.actor.id));
    const where = and(
      this.visible(scope),
      query.unread ? and(isNull(notificationReads.readAt), isNull(notifications.readAt)) : undefined,
      query.kind ? eq(notifications.kind, query.kind) : undefined,
    );
    const [items, counted] = await Promise.all([
      this.db
        .select({ row: notifications, readAt: this.readAt() })
        .from(notifications)
        .leftJoin(notificationReads, mine)
        .where(where)
        .orderBy(desc(notifications.id))
        .limit(page.limit)
        .offset(page.offset),
      this.db
        .select({ n: sql<number>`count(*)::int` })
        .from(notifications)
        .leftJoin(notificationReads, mine)
        .where(where),
    ]);
    return envelope(
      items.map((i) => publicNotification(i.row, i.readAt)),
      counted[0]?.n ?? 0,
      page,
    );
  }

  /** Marks it read for this reader only; marking twice keeps the first time. */
  async markRead(scope: Scope, id: string, at: Date): Promise<void> {
    const [row] = await this.db
      .select({ id: notifications.id })
      .from(notifications)
      .where(and(this.visible(scope), eq(notifications.id, id)));
    if (!row) throw notFound('Notification');
    await this.db.insert(notificationReads).values({ notificationId: row.id, readerId: scope.actor.id, orgId: scope.orgId, readAt: at }).onConflictDoNothing();
  }
}
