import { request } from 'undici';

export interface SseMessage {
  event?: string;
  id?: string;
  data?: unknown;
  comment?: string;
}

/** A real SSE client reading a live response frame by frame. */
export class SseClient {
  readonly messages: SseMessage[] = [];
  status = 0;
  contentType = '';
  ended = false;
  errorBody: unknown = undefined;
  private controller = new AbortController();
  private waiters: { test: () => boolean; resolve: () => void }[] = [];

  static async open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const client = new SseClient();
    await client.connect(url, headers);
    return client;
  }

  private async connect(url: string, headers: Record<string, string>): Promise<void> {
    const res = await request(url, { headers, signal: this.controller.signal });
    this.status = res.statusCode;
    this.contentType = String(res.headers['content-type'] ?? '');
    if (res.statusCode !== 200) {
      this.errorBody = await res.body.json().catch(() => undefined);
      this.ended = true;
      return;
    }
    void (async () => {
      let buffer = '';
      try {
        for await (const chunk of res.body) {
          buffer += (chunk as Buffer).toString('utf8');
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) !== -1) {
            this.parse(buffer.slice(0, cut));
            buffer = buffer.slice(cut + 2);
          }
        }
      } catch {
        // aborted by close()
      }
      this.ended = true;
      this.check();
    })();
  }

  private parse(frame: string): void {
    const msg: SseMessage = {};
    for (const line of frame.split('\n')) {
      if (line.startsWith(':')) msg.comment = line.slice(1).trim();
      else if (line.startsWith('event: ')) msg.event = line.slice(7);
      else if (line.startsWith('id: ')) msg.id = line.slice(4);
      else if (line.startsWith('data: ')) msg.data = JSON.parse(line.slice(6));
    }
    this.messages.push(msg);
    this.check();
  }

  private check(): void {
    this.waiters = this.waiters.filter((w) => {
      if (w.test()) w.resolve();
      return !w.test();
    });
  }

  events(name?: string): SseMessage[] {
    return this.messages.filter((m) => m.event && (!name || m.event === name));
  }

  until(test: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
    if (test()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`SSE: ${what} not met; got ${JSON.stringify(this.messages.map((m) => m.event ?? m.comment))}`)),
        timeoutMs,
      );
      this.waiters.push({
        test,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  waitForEvent(name: string, timeoutMs?: number): Promise<void> {
    return this.until(() => this.events(name).length > 0, timeoutMs, `event ${name}`);
  }

  waitForEnd(timeoutMs?: number): Promise<void> {
    return this.until(() => this.ended, timeoutMs, 'end of stream');
  }

  close(): void {
    this.controller.abort();
  }
}
