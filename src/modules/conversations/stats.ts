import { and, eq, gte, lt, sql } from 'drizzle-orm';
import type { Scope } from '../../platform/context.ts';
import { badRequest } from '../../platform/errors.ts';
import { inScope } from '../../platform/tenant.ts';
import { rangeBound } from '../../platform/range.ts';
import type { ConversationsContext } from './context.ts';
import { conversations } from './tables.ts';

/** The conversations' figures over a range: opened, closed (by the bot), hand-offs and their reasons, median first reply and hand-off times. */
export class ConversationStats {
  private readonly ctx: ConversationsContext;

  constructor(ctx: ConversationsContext) {
    this.ctx = ctx;
  }

  async stats(scope: Scope, query: { from?: string; to?: string; inboxId?: string }) {
    // CONTRACT §6: a date is that whole day (UTC), `to` included; a timestamp `to` is exclusive.
    const to = query.to ? rangeBound(query.to, 'to', 'UTC', 'querystring.to') : this.ctx.clock.now();
    const from = query.from ? rangeBound(query.from, 'from', 'UTC', 'querystring.from') : new Date(to.getTime() - 30 * 86_400_000);
    if (from >= to) throw badRequest('from must be before to', [{ field: 'querystring.from', message: 'must be before to' }]);
    const inbox = query.inboxId ? eq(conversations.inboxId, query.inboxId) : undefined;
    const inRange = (column: typeof conversations.openedAt | typeof conversations.closedAt) => and(gte(column, from), lt(column, to));
    const [[opened], [closed], reasons] = await Promise.all([
      this.ctx.db
        .select({
          n: sql<number>`count(*)::int`,
          firstReply: sql<
            number | null
          >`percentile_cont(0.5) within group (order by extract(epoch from (${conversations.firstReplyAt} - ${conversations.openedAt})))`,
          handoff: sql<
            number | null
          >`percentile_cont(0.5) within group (order by extract(epoch from (${conversations.handoffAt} - ${conversations.openedAt})))`,
        })
        .from(conversations)
        .where(inScope(scope, conversations, inbox, inRange(conversations.openedAt))),
      this.ctx.db
        .select({ n: sql<number>`count(*)::int`, byBot: sql<number>`(count(*) filter (where ${conversations.resolvedBy} = 'bot'))::int` })
        .from(conversations)
        .where(inScope(scope, conversations, inbox, inRange(conversations.closedAt))),
      this.ctx.db
        .select({ reason: conversations.handoffReason, n: sql<number>`count(*)::int` })
        .from(conversations)
        .where(inScope(scope, conversations, inbox, inRange(conversations.handoffAt)))
        .groupBy(conversations.handoffReason),
    ]);
    const handoffReasons: Record<string, number> = {};
    for (const r of reasons) handoffReasons[r.reason ?? 'unknown'] = r.n;
    const round = (v: number | string | null | undefined) => (v === null || v === undefined ? null : Math.round(Number(v)));
    return {
      opened: opened?.n ?? 0,
      closed: closed?.n ?? 0,
      closedByBot: closed?.byBot ?? 0,
      handoffs: reasons.reduce((sum, r) => sum + r.n, 0),
      handoffReasons,
      medianFirstReplySec: round(opened?.firstReply),
      medianHandoffSec: round(opened?.handoff),
    };
  }
}
