import { request, type IncomingMessage } from 'node:http';

/** One frame of an SSE stream (comments are not reported). */
export interface Frame {
  event: string;
  id?: string;
  data: string;
}

export interface StreamOutcome {
  /** The HTTP status of the answer (0: no answer: refused, reset or timed out before the headers). */
  status: number;
  /** How the stream ended: the server closed it, the reader cut it, or an error broke it. */
  end: 'closed' | 'cut' | 'error';
  frames: number;
}

/**
 * Reads one SSE connection frame by frame with node:http (no agent: each stream its own socket),
 * calling `onFrame` for each; resolves when the stream ends. `cut` ends it from the reader's side
 * (a client going away mid-replay). Never rejects.
 */
export function readStream(
  url: string,
  headers: Record<string, string>,
  onFrame: (frame: Frame) => void,
  options: { signal?: AbortSignal; openTimeoutMs?: number } = {},
): { done: Promise<StreamOutcome>; cut: () => void } {
  let cutByReader = false;
  let response: IncomingMessage | null = null;
  let settle: (outcome: StreamOutcome) => void = () => {};
  const done = new Promise<StreamOutcome>((resolve) => (settle = resolve));
  let frames = 0;
  let status = 0;
  let finished = false;
  const finish = (end: StreamOutcome['end']) => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', cut);
    settle({ status, end: cutByReader ? 'cut' : end, frames });
  };
  const req = request(url, { headers: { accept: 'text/event-stream', ...headers }, agent: false });
  const timer = setTimeout(() => {
    if (!response) req.destroy(new Error('no answer in time'));
  }, options.openTimeoutMs ?? 10_000);
  function cut(): void {
    cutByReader = true;
    req.destroy();
    response?.destroy();
    finish('cut');
  }
  options.signal?.addEventListener('abort', cut, { once: true });
  if (options.signal?.aborted) queueMicrotask(cut);
  req.on('error', () => finish('error'));
  req.on('response', (res) => {
    response = res;
    status = res.statusCode ?? 0;
    clearTimeout(timer);
    let buffer = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      if (status !== 200) return;
      buffer += chunk;
      let at: number;
      while ((at = buffer.indexOf('\n\n')) !== -1) {
        const block = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        const frame: Frame = { event: '', data: '' };
        for (const line of block.split('\n')) {
          if (line.startsWith('event: ')) frame.event = line.slice(7);
          else if (line.startsWith('id: ')) frame.id = line.slice(4);
          else if (line.startsWith('data: ')) frame.data += line.slice(6);
        }
        if (!frame.event && !frame.data) continue; // a comment (`: ping`)
        frames++;
        if (!cutByReader) onFrame(frame);
      }
    });
    res.on('end', () => finish('closed'));
    res.on('close', () => finish(res.complete ? 'closed' : 'error'));
    res.on('error', () => finish('error'));
  });
  req.end();
  return { done, cut };
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
