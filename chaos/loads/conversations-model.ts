import { ModelServer, type ChatRequest, type Reply, type Script } from '../../test/model-server.ts';

/**
 * The model stand-in's answers for the conversations and agents loads, installed over whatever
 * script another load set: a request of ours is answered here, any other goes to the script that
 * was there before. Installed again (wrapping the newer script) if another load replaced it later.
 *
 * - a CHATBOT turn (model `chaos-bot`, the inboxes' `bot.modelId`): one `reply` with a short
 *   text, then, once the tool answered, a short final text — so every turn answers at most once;
 * - an agent run of the agents load (model `chaos-agent`; its task carries `chaos-agents
 *   steps=<n>`): `lead_stats` n times, each after a short pause (so the run lives long enough for its stream to be cut
 *   mid-way), then a short final text.
 */
export const BOT_MODEL = 'openai-compatible:chaos-bot';
export const AGENT_MODEL = 'openai-compatible:chaos-agent';
export const AGENT_MARK = 'chaos-agents steps=';
export const BOT_REPLY = 'Thanks, we got your message.';

const OURS = Symbol.for('chaos.conversations.model');

function textOf(request: ChatRequest): string {
  return request.messages
    .filter((m) => m.role === 'user' || m.role === 'system')
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
    .join('\n');
}

function toolRounds(request: ChatRequest): number {
  return request.messages.filter((m) => m.role === 'tool').length;
}

function ours(request: ChatRequest): Reply | null {
  if (request.model === BOT_MODEL.split(':')[1]) {
    return toolRounds(request) === 0 ? { toolCalls: [{ name: 'reply', arguments: { text: BOT_REPLY } }], delayMs: 50 } : { content: 'Answered.' };
  }
  if (request.model !== AGENT_MODEL.split(':')[1]) return null;
  const text = textOf(request);
  const at = text.indexOf(AGENT_MARK);
  const steps = at === -1 ? 1 : Number.parseInt(text.slice(at + AGENT_MARK.length), 10) || 1;
  const delayMs = 150 + ((toolRounds(request) * 97) % 400);
  if (toolRounds(request) < steps) return { toolCalls: [{ name: 'lead_stats', arguments: {} }], delayMs };
  return { content: 'Done: the lead statistics were read.', delayMs };
}

/** Puts our answers in front of the model stand-in's current script (once; again if it was replaced). */
export function installModel(model: ModelServer): void {
  const current = model.script as Script & { [OURS]?: true };
  if (current[OURS]) return;
  const wrapped: Script & { [OURS]?: true } = (request, index) => ours(request) ?? current(request, index);
  wrapped[OURS] = true;
  model.script = wrapped;
}

export { ModelServer };
