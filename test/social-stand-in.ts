import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * LinkedIn Posts/Images API and X API v2 stand-ins on loopback. The bearer token picks the
 * behaviour, so one server serves every test case:
 *   ok…        success (LinkedIn: 201 + x-restli-id; X: 201 { data: { id } })
 *   revoked…   401
 *   flaky…     429 with Retry-After: 1 on the first post call, then success
 *   throttled… 429 with Retry-After: 3600 (beyond the retry window)
 *   down…      500 forever
 *   noid…      201 without the post id
 * With `oauth` (test/oauth-provider.ts), a token that stand-in issued is judged by it: expired → 401.
 * `GET /v2/userinfo` (LinkedIn's OpenID Connect userinfo) and `GET /2/users/me` (X) answer the account
 * behind the token.
 */
export interface Received {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  token: string;
}

export interface StandIn {
  url: string;
  received: Received[];
  /** Post calls (not uploads) made with a token. */
  postCalls(token: string): Received[];
  close(): Promise<void>;
}

/** What the API needs from the authorization server's stand-in (test/oauth-provider.ts OAuthStandIn). */
export interface TokenAuthority {
  isIssued(accessToken: string): boolean;
  isValid(accessToken: string): boolean;
  subjectOf(accessToken: string): string | undefined;
}

export async function startSocialStandIn(options: { oauth?: TokenAuthority } = {}): Promise<StandIn> {
  const received: Received[] = [];
  const seen = new Map<string, number>();
  let next = 1000;
  let base = '';

  const handle = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const path = (req.url ?? '/').split('?')[0]!;
    received.push({ method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body, token });
    const send = (status: number, json?: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(json === undefined ? '' : JSON.stringify(json));
    };
    if (!token) return send(401, { message: 'no token' });
    if (token.startsWith('revoked')) return send(401, { message: 'Invalid access token', serviceErrorCode: 65600 });
    if (token.startsWith('down')) return send(500, { message: 'internal error' });
    if (options.oauth?.isIssued(token) && !options.oauth.isValid(token)) {
      return send(401, { status: 401, serviceErrorCode: 65601, code: 'EXPIRED_ACCESS_TOKEN', message: 'The token used in the request has expired' });
    }
    if (req.method === 'GET' && path === '/v2/userinfo') {
      const sub = options.oauth?.subjectOf(token) ?? `member-${token.slice(0, 12).replace(/[^A-Za-z0-9_-]/g, '')}`;
      return send(200, {
        sub,
        email_verified: true,
        name: 'Stand-in Member',
        locale: { country: 'US', language: 'en' },
        given_name: 'Stand-in',
        family_name: 'Member',
        email: `${sub}@example.com`,
      });
    }
    if (req.method === 'GET' && path === '/2/users/me') {
      const id = options.oauth?.subjectOf(token) ?? 'x-user';
      return send(200, { data: { id: `2244${id.length}`, name: 'Stand-in User', username: id.replace(/[^A-Za-z0-9_]/g, '_') } });
    }
    const isPost = path === '/rest/posts' || path === '/2/tweets';
    if (isPost) {
      const count = (seen.get(token) ?? 0) + 1;
      seen.set(token, count);
      if (token.startsWith('flaky') && count === 1) return send(429, { title: 'Too Many Requests' }, { 'retry-after': '1' });
      if (token.startsWith('throttled')) return send(429, { title: 'Too Many Requests' }, { 'retry-after': '3600' });
    }
    const id = ++next;
    if (req.method === 'POST' && path === '/rest/images') {
      return send(200, { value: { uploadUrl: `${base}/upload/${id}`, image: `urn:li:image:C${id}`, uploadUrlExpiresAt: Date.now() + 3600_000 } });
    }
    if (req.method === 'PUT' && path.startsWith('/upload/')) return send(201);
    if (req.method === 'POST' && path === '/2/media/upload') return send(200, { data: { id: `77${id}`, media_key: `3_77${id}` } });
    if (req.method === 'POST' && path === '/rest/posts') {
      if (token.startsWith('noid')) return send(201);
      return send(201, undefined, { 'x-restli-id': `urn:li:share:7${id}` });
    }
    if (req.method === 'POST' && path === '/2/tweets') {
      if (token.startsWith('noid')) return send(201, { data: {} });
      const text = (JSON.parse(body.toString('utf8')) as { text: string }).text;
      return send(201, { data: { id: `18${id}`, text } });
    }
    send(404, { message: 'not found' });
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    received,
    postCalls: (token) => received.filter((r) => r.token === token && (r.path.startsWith('/rest/posts') || r.path.startsWith('/2/tweets'))),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
