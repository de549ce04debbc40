import { readFileSync } from 'node:fs';
import { normalizeIP } from '@fastify/rate-limit';
import { and, asc, desc, eq, gt, isNotNull, sql } from 'drizzle-orm';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomToken, sha256Hex } from '../../platform/crypto.ts';
import { badRequest, forbidden, notFound, rateLimited, unauthorized, unprocessable } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { Type, errors } from '../../platform/http/schemas.ts';
import type { App } from '../../platform/http/types.ts';
import { SseStreams } from '../../platform/sse.ts';
import { EMAIL_IN_TEXT, assertKnownKeys, type ChannelAdapter, type Outcome, type Outgoing, type Prepared, type SendCheck } from './channel-types.ts';
import type { InboundRoutesService } from './hook-ports.ts';
import { contacts, conversations, inboxes, messages, widgetSessions } from './tables.ts';
import type { Config } from '../../config.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db.ts';

type InboxRow = typeof inboxes.$inferSelect;
type MessageRow = typeof messages.$inferSelect;

/**
 * `web`: our own chat widget. A site adds one script tag (the inbox's `widgetSnippet`); the script
 * opens an anonymous visitor session, posts the visitor's messages and reads the conversation over
 * SSE. Inbound is the widget's own routes (`/api/v1/widget/:inboxId/…`), open to the inbox's
 * `config.allowedOrigins` only (CORS). Outbound needs no provider: the visitor's stream is the
 * delivery, so `send` accepts at once and the message id is its `externalId`.
 */

/** How long an unused visitor session lives; each use moves it forward. */
const SESSION_TTL_MS = 30 * 86_400_000;
const TEXT_LIMIT = 4096;
/** Messages replayed when a stream opens without `since`: the latest ones. */
const REPLAY_LIMIT = 200;
/** Changes a widget stream reads from the store at a time. */
const PULL_LIMIT = 500;
const PREFIX = '/widget/:inboxId';

/** The widget's script, served as a static asset (the same bytes for every inbox). */
const WIDGET_JS = readFileSync(new URL('./widget/widget.js', import.meta.url), 'utf8');
const WIDGET_ETAG = `"${sha256Hex(WIDGET_JS).slice(0, 32)}"`;

/** The HTML a site adds to embed the widget of a web inbox. */
export function widgetSnippet(publicUrl: string, inboxId: string): string {
  return `<script src="${publicUrl}/api/v1/widget/${inboxId}/widget.js" async></script>`;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * One allowed origin as a site sends it in `Origin`: `https://host[:port]`, lower-case, nothing
 * after the port. `http://` only for loopback hosts (a developer's own machine).
 */
function originOf(value: unknown, field: string): string {
  const refuse = (message: string) => badRequest(`config.allowedOrigins: ${message}`, [{ field, message }]);
  if (typeof value !== 'string' || value === '') throw refuse('must be an origin such as https://shop.example');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw refuse(`'${value.slice(0, 100)}' is not an origin such as https://shop.example`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname))) throw refuse('must use https (http only for localhost)');
  if (url.origin !== value) throw refuse(`must be exactly an origin (scheme, host and port, no path or trailing slash): did you mean ${url.origin}?`);
  return url.origin;
}

export class WebChannel implements ChannelAdapter {
  readonly channel = 'web' as const;

  async prepare(config: Record<string, unknown>, previous: Record<string, unknown> | null): Promise<Prepared> {
    assertKnownKeys('web', 'config', config, ['allowedOrigins', 'faq']);
    const given = config.allowedOrigins ?? previous?.allowedOrigins;
    if (!Array.isArray(given) || given.length === 0) {
      throw badRequest('A web inbox needs config.allowedOrigins: the sites (https://host[:port]) that may embed its widget', [
        { field: 'body.config.allowedOrigins', message: 'must list at least one origin' },
      ]);
    }
    const origins = [...new Set(given.map((o, i) => originOf(o, `body.config.allowedOrigins.${i}`)))];
    return { config: { ...(previous ?? {}), ...config, allowedOrigins: origins } };
  }

  async send(out: Outgoing): Promise<Outcome> {
    // The visitor's stream delivers it (live, or replayed when the widget comes back).
    return { ok: true, externalId: out.message.id };
  }

  checkSend(check: SendCheck): void {
    if (check.starting) throw unprocessable('CHANNEL_CANNOT_INITIATE', 'The web widget cannot start a conversation: a visitor has to write first');
    if (check.template)
      throw badRequest('Templates are a WhatsApp feature; a web widget message is text', [
        { field: 'body.template', message: 'is not available on the web channel' },
      ]);
  }
}

/** What the widget shows of a message (never a private note). */
function widgetMessage(m: Pick<MessageRow, 'id' | 'conversationId' | 'direction' | 'sender' | 'text' | 'status'> & { at: Date | string }) {
  return {
    id: m.id,
    conversationId: m.conversationId,
    direction: m.direction,
    sender: m.sender,
    text: m.text,
    status: m.status,
    at: new Date(m.at).toISOString(),
  };
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}\.[^\s@]{2,}$/;

const Params = Type.Object({ inboxId: Type.String({ minLength: 1, maxLength: 64 }) });
const SessionHeader = Type.Object({ 'x-widget-session': Type.Optional(Type.String({ maxLength: 200, description: "the visitor's session token" })) });
const SessionAnswer = Type.Object({
  sessionToken: Type.String({ description: "the visitor's token: send it as X-Widget-Session (and `?session=` on the stream)" }),
  conversationId: Type.Optional(Type.String({ description: "the visitor's open (else latest) conversation" })),
});
const WidgetMessageSchema = Type.Object({
  id: Type.String(),
  conversationId: Type.String(),
  direction: Type.String(),
  sender: Type.String(),
  text: Type.String(),
  status: Type.String(),
  at: Type.String(),
});

declare module 'fastify' {
  interface FastifyRequest {
    /** The web inbox a widget route names (set by the widget scope's hook). */
    widgetInbox?: typeof inboxes.$inferSelect;
  }
}

function allowedOrigins(inbox: InboxRow): string[] {
  const list = inbox.config.allowedOrigins;
  return Array.isArray(list) ? list.filter((o): o is string => typeof o === 'string') : [];
}

/** The organization's live events (the events module): a visitor's stream follows its threads. */
export interface WidgetEventsPort {
  subscribe(orgId: string, handler: (message: { kind: string; data: unknown }) => void): () => void;
}

export interface WidgetRoutesOptions {
  conversations: InboundRoutesService;
  orgStream: WidgetEventsPort;
  config: Config;
  db: Db;
  clock: Clock;
}

/**
 * The widget's public routes under `/api/v1/widget/:inboxId`: the script, sessions, messages and
 * the conversation's stream. Every one answers 404 for anything but a web inbox; a request whose
 * `Origin` is not one of the inbox's allowedOrigins gets no CORS headers and, except for the script
 * (which a `<script>` tag loads without CORS), 403.
 */
export function widgetRoutes(app: App, { conversations: service, orgStream, config, db, clock }: WidgetRoutesOptions): void {
  // Visitors' streams are counted apart from the API's: a busy site must not use up an
  // organization's stream budget (or the other way round). Per session and per inbox.
  const streams = new SseStreams({ perCredential: 5, perOrg: Math.max(1000, config.sseMaxPerOrg) });

  app.register(async (scope: App) => {
    scope.addHook('preClose', async () => streams.closeAll());

    scope.addHook('onRequest', async (request, reply) => {
      const { inboxId } = request.params as { inboxId?: string };
      const inbox = inboxId && inboxId.length <= 64 ? await service.inboxById(inboxId) : undefined;
      if (!inbox || inbox.channel !== 'web') throw notFound('Widget');
      request.widgetInbox = inbox;
      const origin = request.headers.origin;
      if (origin === undefined) return;
      if (!allowedOrigins(inbox).includes(origin)) {
        if (request.routeOptions.url?.endsWith('/widget.js')) return;
        throw forbidden("This site is not one of the inbox's allowed origins");
      }
      reply.header('access-control-allow-origin', origin).header('vary', 'Origin');
      reply.header('access-control-expose-headers', 'retry-after, ratelimit-limit, ratelimit-remaining, ratelimit-reset');
    });

    const limit = (name: string, max: number, windowMs: number, key: (request: FastifyRequest) => string) => {
      const check = scope.createRateLimit({ max, timeWindow: windowMs, keyGenerator: (request) => `widget:${name}:${key(request)}` });
      return async (request: FastifyRequest, reply: FastifyReply) => {
        const state = await check(request);
        if (state.isAllowed || !state.isExceeded) return;
        reply.header('ratelimit-limit', state.max).header('ratelimit-remaining', state.remaining).header('ratelimit-reset', state.ttlInSeconds);
        throw rateLimited(state.ttlInSeconds, 'RATE_LIMIT', `Rate limit of ${state.max} requests exceeded; retry in ${Math.max(1, state.ttlInSeconds)} s`);
      };
    };
    const byAddress = (request: FastifyRequest) => normalizeIP(request.ip);
    const bySession = (request: FastifyRequest) => {
      const token = request.headers['x-widget-session'] ?? (request.query as { session?: unknown } | undefined)?.session;
      return typeof token === 'string' ? sha256Hex(token) : `ip:${normalizeIP(request.ip)}`;
    };
    const publicRoute = { rateLimit: false as const };
    const tags = ['Conversations'];

    /** The visitor of a session token, when it is this inbox's and not expired; the session's expiry moves forward. */
    const sessionOf = async (inbox: InboxRow, token: unknown) => {
      if (typeof token !== 'string' || token === '' || token.length > 200) return null;
      const now = clock.now();
      const [row] = await db
        .update(widgetSessions)
        .set({ lastSeenAt: now, expiresAt: new Date(now.getTime() + SESSION_TTL_MS) })
        .where(and(eq(widgetSessions.tokenHash, sha256Hex(token)), eq(widgetSessions.inboxId, inbox.id), gt(widgetSessions.expiresAt, now)))
        .returning();
      return row ?? null;
    };

    /** The contact's open conversation, else its latest. */
    const conversationOf = async (contactId: string) => {
      const [row] = await db
        .select({ id: conversations.id })
        .from(conversations)
        .where(eq(conversations.contactId, contactId))
        .orderBy(sql`${conversations.status} = 'OPEN' desc`, desc(conversations.lastMessageAt))
        .limit(1);
      return row?.id;
    };

    // Preflight: the allowed origins may POST JSON with the session header.
    scope.route({
      method: 'OPTIONS',
      url: `${PREFIX}/:resource`,
      config: publicRoute,
      schema: {
        tags,
        security: [],
        operationId: 'preflightWidget',
        params: Type.Object({
          inboxId: Type.String({ minLength: 1, maxLength: 64 }),
          resource: Type.String({ maxLength: 20, description: 'sessions, messages or events' }),
        }),
        summary: "CORS preflight of the widget routes: answered for the inbox's allowedOrigins only (403 for any other origin)",
        response: { 204: Type.Null({ description: 'Allowed: Access-Control-Allow-Origin, -Methods, -Headers' }), ...errors(403, 404) },
      },
      onRequest: limit('preflight', 600, 60_000, byAddress),
      handler: async (request, reply) => {
        if (request.headers.origin === undefined) throw forbidden('A preflight request names its Origin');
        reply
          .header('access-control-allow-methods', 'GET, POST, OPTIONS')
          .header('access-control-allow-headers', 'content-type, x-widget-session, last-event-id')
          .header('access-control-max-age', '600')
          .code(204)
          .send(null);
      },
    });

    scope.get(
      `${PREFIX}/widget.js`,
      {
        config: publicRoute,
        schema: {
          tags,
          security: [],
          params: Params,
          operationId: 'getWidgetScript',
          summary: "The web widget's script for a web inbox (what its widgetSnippet loads)",
          produces: ['text/javascript'],
          response: { 200: Type.String({ description: 'JavaScript' }), ...errors(404) },
        },
        onRequest: limit('script', 600, 60_000, byAddress),
      },
      async (request, reply) => {
        reply
          .header('cache-control', 'public, max-age=300')
          .header('etag', WIDGET_ETAG)
          .header('x-content-type-options', 'nosniff')
          .header('cross-origin-resource-policy', 'cross-origin');
        if (request.headers['if-none-match'] === WIDGET_ETAG) return (reply as FastifyReply).code(304).send();
        return reply.type('text/javascript; charset=utf-8').send(WIDGET_JS);
      },
    );

    scope.post(
      `${PREFIX}/sessions`,
      {
        config: publicRoute,
        schema: {
          tags,
          security: [],
          params: Params,
          headers: SessionHeader,
          summary: 'Opens a web widget visitor session (an anonymous contact), or resumes the one X-Widget-Session names',
          body: Type.Optional(
            Type.Object(
              {
                name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
                email: Type.Optional(Type.String({ minLength: 3, maxLength: 320, description: 'links the visitor to a lead' })),
                phone: Type.Optional(Type.String({ minLength: 6, maxLength: 40, description: 'links the visitor to a lead' })),
              },
              { additionalProperties: false },
            ),
          ),
          response: { 200: SessionAnswer, 201: SessionAnswer, ...errors(400, 403, 404, 429) },
        },
        onRequest: limit('sessions', 30, 60_000, byAddress),
      },
      async (request, reply) => {
        const inbox = request.widgetInbox!;
        const body = (request.body ?? {}) as { name?: string; email?: string; phone?: string };
        if (body.email !== undefined && !EMAIL.test(body.email))
          throw badRequest('email is not an e-mail address', [{ field: 'body.email', message: 'must be an e-mail address' }]);
        const presented = request.headers['x-widget-session'];
        const resumed = await sessionOf(inbox, presented);
        let contactId: string;
        let token: string;
        if (resumed) {
          contactId = resumed.contactId;
          token = presented as string;
          if (body.name)
            await db
              .update(contacts)
              .set({ name: body.name })
              .where(and(eq(contacts.id, contactId), sql`${contacts.name} is null`));
        } else {
          const now = clock.now();
          token = `wst_${randomToken(32)}`;
          contactId = newId('contact');
          await db.transaction(async (tx) => {
            await tx.insert(contacts).values({
              id: contactId,
              orgId: inbox.orgId,
              projectId: inbox.projectId,
              inboxId: inbox.id,
              address: `visitor:${randomToken(12)}`,
              name: body.name ?? null,
            });
            await tx.insert(widgetSessions).values({
              id: `wss_${randomToken(16)}`,
              orgId: inbox.orgId,
              inboxId: inbox.id,
              contactId,
              tokenHash: sha256Hex(token),
              lastSeenAt: now,
              expiresAt: new Date(now.getTime() + SESSION_TTL_MS),
            });
          });
        }
        if (body.email || body.phone) await service.identifyContact(inbox, contactId, body);
        const conversationId = await conversationOf(contactId);
        reply.code(resumed ? 200 : 201);
        return { sessionToken: token, ...(conversationId ? { conversationId } : {}) };
      },
    );

    scope.post(
      `${PREFIX}/messages`,
      {
        config: publicRoute,
        schema: {
          tags,
          security: [],
          params: Params,
          headers: SessionHeader,
          summary: "A web widget visitor's message (X-Widget-Session): stored in the visitor's conversation",
          body: Type.Object({ text: Type.String({ minLength: 1, maxLength: TEXT_LIMIT }) }, { additionalProperties: false }),
          response: { 201: Type.Object({ message: WidgetMessageSchema, conversationId: Type.String() }), ...errors(400, 401, 403, 404, 429) },
        },
        onRequest: [limit('messages-ip', 300, 60_000, byAddress), limit('messages', 20, 60_000, bySession)],
      },
      async (request, reply) => {
        const inbox = request.widgetInbox!;
        const session = await sessionOf(inbox, request.headers['x-widget-session']);
        if (!session) throw unauthorized('Unknown or expired widget session: open a new one');
        const { text } = request.body as { text: string };
        if (text.trim() === '') throw badRequest('text is empty', [{ field: 'body.text', message: 'must not be blank' }]);
        const [contact] = await db.select().from(contacts).where(eq(contacts.id, session.contactId));
        if (!contact) throw unauthorized('Unknown or expired widget session: open a new one');
        // An anonymous visitor stays a contact until it gives an e-mail address (CONTRACT §8).
        const email = EMAIL_IN_TEXT.exec(text)?.[0];
        if (email && !contact.leadId) await service.identifyContact(inbox, contact.id, { email });
        const { message } = await service.receiveInbound(inbox, { contact: { address: contact.address }, text, linkLead: false });
        reply.code(201);
        return { message: widgetMessage(message), conversationId: message.conversationId };
      },
    );

    scope.get(
      `${PREFIX}/events`,
      {
        config: { ...publicRoute, sse: true },
        schema: {
          tags,
          security: [],
          params: Params,
          summary: "The web widget visitor's conversation (SSE): its messages (never private notes), the latest 200 (or those after `since`), then live",
          description:
            "Each event is a message as it is now (`event: message`), sent again when its status changes; `id:` is an increasing sequence number of the visitor's stream, and `since=<id>` replays what changed after it (SPEC's stream rules; `Last-Event-ID` is not used).",
          querystring: Type.Object({
            session: Type.String({ minLength: 1, maxLength: 200, description: "the visitor's session token" }),
            since: Type.Optional(
              Type.String({ pattern: '^[0-9]{1,15}$', maxLength: 15, description: 'the `id:` of the last event seen: replay what changed after it' }),
            ),
          }),
          produces: ['text/event-stream'],
          response: {
            200: Type.String({ description: "text/event-stream: `event: message`, `id:` the stream's sequence number" }),
            ...errors(400, 401, 403, 404, 429),
          },
        },
        onRequest: limit('events', 60, 60_000, byAddress),
      },
      async (request, reply) => {
        const inbox = request.widgetInbox!;
        const query = request.query as { session: string; since?: string };
        const session = await sessionOf(inbox, query.session);
        if (!session) throw unauthorized('Unknown or expired widget session: open a new one');
        const contactId = session.contactId;
        const stream = streams.open(request, reply, { credential: session.id, orgId: inbox.id }, { pingMs: config.ssePingMs });
        // The visitor's messages are read from the store by their stream position (messages.stream_seq,
        // given by the database in commit order per contact): a live change only says "read again", so
        // the stream sends every change once, in order, with no gap between the replay and live.
        let last = query.since === undefined ? null : Number(query.since);
        const mine = and(eq(conversations.contactId, contactId), eq(conversations.inboxId, inbox.id), eq(messages.private, false));
        const read = (after: number | null) => {
          const base = db.select({ message: messages }).from(messages).innerJoin(conversations, eq(conversations.id, messages.conversationId));
          return after === null
            ? base
                .where(and(mine, isNotNull(messages.streamSeq)))
                .orderBy(desc(messages.streamSeq))
                .limit(REPLAY_LIMIT)
                .then((rows) => rows.reverse())
            : base
                .where(and(mine, gt(messages.streamSeq, after)))
                .orderBy(asc(messages.streamSeq))
                .limit(PULL_LIMIT);
        };
        let pulling = false;
        let again = false;
        const pull = async (): Promise<void> => {
          if (pulling) {
            again = true;
            return;
          }
          pulling = true;
          try {
            do {
              again = false;
              const rows = await read(last);
              for (const { message } of rows) {
                if (stream.closed) return;
                if (stream.overflowing) {
                  stream.send('reset', { reason: 'buffer exceeded; open the stream again with since' });
                  stream.close();
                  return;
                }
                stream.send('message', widgetMessage(message), String(message.streamSeq));
                last = message.streamSeq;
              }
              if (rows.length === PULL_LIMIT) again = true;
              last ??= 0;
            } while (again && !stream.closed);
          } catch (error) {
            request.log.error({ err: error }, 'widget stream read failed');
            stream.close();
          } finally {
            pulling = false;
          }
        };
        // The visitor's threads: a message that opens another one names the contact.
        const known = new Set<string>();
        const unsubscribe = orgStream.subscribe(inbox.orgId, (event) => {
          const data = event.data as Record<string, unknown> | null;
          const about =
            event.kind === 'conversation.message' ? data : event.kind === 'message.sent' ? (data?.payload as Record<string, unknown> | undefined) : undefined;
          const conversationId = about?.conversationId;
          if (typeof conversationId !== 'string') return;
          const conversation = about?.conversation as { contact?: { id?: string } } | undefined;
          if (conversation?.contact?.id === contactId) known.add(conversationId);
          if (known.has(conversationId)) void pull();
        });
        stream.onClose(unsubscribe);
        // And at every ping interval: a live notice lost on the way (another instance's, while this
        // one's LISTEN connection was down) costs the visitor a few seconds, not the message.
        const poll = setInterval(() => void pull(), Math.max(1000, config.ssePingMs));
        stream.onClose(() => clearInterval(poll));
        try {
          const threads = await db
            .select({ id: conversations.id })
            .from(conversations)
            .where(and(eq(conversations.contactId, contactId), eq(conversations.inboxId, inbox.id)));
          for (const t of threads) known.add(t.id);
        } catch (error) {
          request.log.error({ err: error }, 'widget stream replay failed');
          stream.close();
          return;
        }
        await pull();
      },
    );
  });
}
