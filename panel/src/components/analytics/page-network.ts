/**
 * For component tests: the network under the typed client as a page's fetch sees it. The client
 * takes `fetch` and `Request` when it is created, so a test imports this module before anything
 * that imports the client; relative URLs resolve against the page's origin as in a browser. Each
 * request is recorded; `answer` says what the service answers.
 */
export interface Recorded {
  method: string;
  path: string;
  body: unknown;
}

export const net = {
  requests: [] as Recorded[],
  answer: (_request: Recorded): Response => new Response(null, { status: 500 }),
};

const Base = globalThis.Request;
class PageRequest extends Base {
  constructor(input: RequestInfo | URL, init?: RequestInit) {
    super(typeof input === 'string' && input.startsWith('/') ? `http://localhost${input}` : input, init);
  }
}
globalThis.Request = PageRequest as typeof Request;
globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
  const request = input instanceof Request ? input : new PageRequest(input, init);
  const text = await request.text();
  const recorded = { method: request.method, path: new URL(request.url).pathname, body: text ? (JSON.parse(text) as unknown) : undefined };
  net.requests.push(recorded);
  return net.answer(recorded);
};

export const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
