import type { operations } from '../../api/schema';

export type AgentTypeName = operations['createAgent']['requestBody']['content']['application/json']['type'];

/** "MARKET_ANALYST" → "Market analyst". */
export function typeLabel(type: string): string {
  const words = type.toLowerCase().split('_');
  return words.map((w, i) => (i === 0 ? w.charAt(0).toUpperCase() + w.slice(1) : w)).join(' ');
}

/**
 * A form's optional JSON object (a run's `input`): empty is no input; anything else must be a JSON
 * object, else the message says what is wrong.
 */
export function parseInput(text: string): { value?: Record<string, unknown>; error?: string } {
  if (!text.trim()) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { error: `Not valid JSON: ${(error as Error).message}` };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { error: 'Input must be a JSON object, e.g. { "urls": ["https://example.com"] }' };
  return { value: value as Record<string, unknown> };
}
