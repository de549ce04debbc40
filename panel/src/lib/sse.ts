import { EventSource } from 'eventsource';
import { currentToken } from './session';

/**
 * An EventSource on one of our SSE routes, with the access token in the Authorization header,
 * fresh on every connection (never in the URL). `query` is read at each connection, so a reconnect
 * can ask only for what came after the last event seen (`since`).
 */
export function apiEventSource(path: string, query: () => Record<string, string | undefined> = () => ({})): EventSource {
  return new EventSource(path, {
    fetch: async (input, init) => {
      const token = await currentToken();
      const target = new URL(String(input), globalThis.location?.href);
      for (const [name, value] of Object.entries(query())) if (value !== undefined) target.searchParams.set(name, value);
      return fetch(target.href, { ...init, headers: { ...init.headers, ...(token ? { authorization: `Bearer ${token}` } : {}) } });
    },
  });
}
