import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** What the loopback model answers to one Chat Completions request. */
export interface Reply {
  content?: string;
  reasoning?: string;
  toolCalls?: { name: string; arguments: Record<string, unknown> | string }[];
  usage?: { prompt: number; completion: number };
  /** An HTTP error status instead of an answer. */
  status?: number;
  /** Hold the response open until the client goes away (for cancellation tests). */
  hold?: boolean;
  /** Answer after this many milliseconds. */
  delayMs?: number;
}

export interface ChatRequest {
  model: string;
  stream?: boolean;
  messages: { role: string; content: unknown; tool_calls?: { id: string; function: { name: string; arguments: string } }[]; tool_call_id?: string }[];
  tools?: { type: string; function: { name: string; description?: string; parameters: unknown } }[];
  [key: string]: unknown;
}

export type Script = (request: ChatRequest, index: number) => Reply;

/**
 * An OpenAI-compatible Chat Completions server on 127.0.0.1 (POST /v1/chat/completions), streaming
 * (SSE chunks with a final usage chunk) and non-streaming, with tool calls and usage — the outside
 * party of the real provider path. Its answers come from a script the test sets.
 */
export class ModelServer {
  readonly requests: ChatRequest[] = [];
  /** Requests whose client hung up before an answer (aborted calls). */
  readonly aborted: number[] = [];
  script: Script = () => ({ content: 'ok' });
  private server: Server | null = null;
  private held = new Set<ServerResponse>();
  private holdWaiters: (() => void)[] = [];

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as { port: number };
    return `http://127.0.0.1:${port}/v1`;
  }

  /** Resolves once a held request is waiting. */
  waitForHeld(): Promise<void> {
    if (this.held.size > 0) return Promise.resolve();
    return new Promise((resolve) => this.holdWaiters.push(resolve));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404).end();
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest;
    const index = this.requests.push(body) - 1;
    const reply = this.script(body, index);
    if (reply.hold) {
      this.held.add(res);
      res.on('close', () => {
        this.held.delete(res);
        this.aborted.push(index);
      });
      res.writeHead(200, { 'content-type': body.stream ? 'text/event-stream' : 'application/json' });
      res.flushHeaders();
      for (const w of this.holdWaiters.splice(0)) w();
      return;
    }
    if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    if (reply.status && reply.status >= 400) {
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `model server error ${reply.status}`, type: 'server_error' } }));
      return;
    }
    const usage = {
      prompt_tokens: reply.usage?.prompt ?? 100,
      completion_tokens: reply.usage?.completion ?? 20,
      total_tokens: (reply.usage?.prompt ?? 100) + (reply.usage?.completion ?? 20),
    };
    const toolCalls = (reply.toolCalls ?? []).map((c, i) => ({
      id: `call_${index}_${i}`,
      type: 'function',
      function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
    }));
    const finish = toolCalls.length ? 'tool_calls' : 'stop';
    const base = { id: `chatcmpl-${index}`, created: 1_700_000_000, model: body.model };
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          ...base,
          object: 'chat.completion',
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: reply.content ?? null,
                ...(reply.reasoning ? { reasoning_content: reply.reasoning } : {}),
                ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
              },
              finish_reason: finish,
            },
          ],
          usage,
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (data: unknown) => res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', ...(data as object) })}\n\n`);
    send({ choices: [{ index: 0, delta: { role: 'assistant' } }] });
    if (reply.reasoning) send({ choices: [{ index: 0, delta: { reasoning_content: reply.reasoning } }] });
    if (reply.content) {
      // Two chunks, so the client really assembles the text.
      const cut = Math.ceil(reply.content.length / 2);
      send({ choices: [{ index: 0, delta: { content: reply.content.slice(0, cut) } }] });
      send({ choices: [{ index: 0, delta: { content: reply.content.slice(cut) } }] });
    }
    toolCalls.forEach((call, i) => {
      const args = call.function.arguments;
      const cut = Math.ceil(args.length / 2);
      send({
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: i, id: call.id, type: 'function', function: { name: call.function.name, arguments: args.slice(0, cut) } }] },
          },
        ],
      });
      send({ choices: [{ index: 0, delta: { tool_calls: [{ index: i, function: { arguments: args.slice(cut) } }] } }] });
    });
    send({ choices: [{ index: 0, delta: {}, finish_reason: finish }] });
    send({ choices: [], usage });
    res.end('data: [DONE]\n\n');
  }

  /** The tool results of the last request's conversation, parsed. */
  static toolResults(request: ChatRequest): { name: string; output: unknown }[] {
    const names = new Map<string, string>();
    const out: { name: string; output: unknown }[] = [];
    for (const m of request.messages) {
      for (const c of m.tool_calls ?? []) names.set(c.id, c.function.name);
      if (m.role === 'tool') out.push({ name: names.get(m.tool_call_id ?? '') ?? '?', output: JSON.parse(String(m.content)) });
    }
    return out;
  }

  async stop(): Promise<void> {
    for (const res of this.held) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
