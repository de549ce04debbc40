import { createServer } from 'node:http';

/**
 * The loopback model of bench/agents.ts, in its own process: an OpenAI-compatible Chat Completions
 * server answering at once, streamed. A conversation without tool results gets one `lead_stats`
 * tool call; one with a tool result gets the final answer.
 */
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string; stream?: boolean; messages: { role: string }[] };
    const answered = body.messages.some((m) => m.role === 'tool');
    const base = { id: 'bench', object: 'chat.completion.chunk', created: 1_700_000_000, model: body.model };
    const usage = { prompt_tokens: 200, completion_tokens: 20, total_tokens: 220 };
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (choices: unknown[], extra: object = {}) => res.write(`data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`);
    if (answered) {
      send([{ index: 0, delta: { role: 'assistant', content: 'The pipeline is healthy.' } }]);
      send([{ index: 0, delta: {}, finish_reason: 'stop' }]);
    } else {
      send([
        {
          index: 0,
          delta: {
            role: 'assistant',
            content: 'Checking the numbers.',
            tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'lead_stats', arguments: '{}' } }],
          },
        },
      ]);
      send([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]);
    }
    send([], { usage });
    res.end('data: [DONE]\n\n');
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as { port: number }).port }));
