import { and, desc, eq, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db.ts';
import { notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { envelope, pageOf, type ListQuery } from '../../platform/http/pagination.ts';
import type { OrgStream } from '../events/org-stream.ts';
import { notifications } from './tables.ts';

export interface NewNotification {
  orgId: string;
  userId?: string | null;
  /** What it is about: webhook.disabled, approval.requested, report.created, budget.warning … */
  kind: string;
  title: string;
  body: string;
  link?: string | null;
}

type Row = typeof notifications.$inferSelect;

export function publicNotification(row: Row) {
  return { id: row.id, kind: row.kind, title: row.title, body: row.body, link: row.link, userId: row.userId, read: row.readAt !== null, readAt: row.readAt, createdAt: row.createdAt };
}

/** The one way every module tells people something: stored, and pushed on the organization stream. */
export class NotificationsService {
  private readonly db: Db;
  private readonly stream: OrgStream;

  constructor(deps: Deps, stream: OrgStream) {
    this.db = deps.db;
    this.stream = stream;
  }

  /** With a transaction, the notification and its stream message exist only if it commits. */
  async notify(input: NewNotification, tx?: Db): Promise<ReturnType<typeof publicNotification>> {
    const db = tx ?? this.db;
    const [row] = await db.insert(notifications).values({
      id: newId('notification'),
      orgId: input.orgId,
      userId: input.userId ?? null,
      kind: input.kind,
      title: input.title.slice(0, 300),
      body: input.body.slice(0, 4000),
      link: input.link ?? null,
    }).returning();
    const out = publicNotification(row!);
    const message = { kind: 'notification', data: JSON.parse(JSON.stringify(out)), userId: out.userId };
    if (tx) await this.stream.publishInTx(tx, input.orgId, message);
    else await this.stream.publish(input.orgId, message);
    return out;
  }

  private visible(orgId: string, userId: string | null): SQL {
    return and(eq(notifications.orgId, orgId), userId ? or(isNull(notifications.userId), eq(notifications.userId, userId)) : undefined)!;
  }

  async list(orgId: string, userId: string | null, query: ListQuery & { unread?: boolean; kind?: string }) {
    const page = pageOf(query);
    const where = and(
      this.visible(orgId, userId),
      query.unread ? isNull(notifications.readAt) : undefined,
      query.kind ? eq(notifications.kind, query.kind) : undefined,
    );
    const [items, counted] = await Promise.all([
      this.db.select().from(notifications).where(where).orderBy(desc(notifications.id)).limit(page.limit).offset(page.offset),
      this.db.select({ n: sql<number>`count(*)::int` }).from(notifications).where(where),
    ]);
    return envelope(items.map(publicNotification), counted[0]?.n ?? 0, page);
  }

  async markRead(orgId: string, userId: string | null, id: string, at: Date): Promise<void> {
    const updated = await this.db.update(notifications)
      .set({ readAt: sql`coalesce(${notifications.readAt}, ${at.toISOString()}::timestamptz)` })
      .where(and(this.visible(orgId, userId), eq(notifications.id, id)))
      .returning({ id: notifications.id });
    if (updated.length === 0) throw notFound('Notification');
  }
}
