/** USD per million tokens. */
export interface ModelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
}

/**
 * Built-in list prices (USD per million tokens) of common models. MODEL_PRICES is merged over it;
 * a model found in neither costs 0. Keys are full model ids; a dated or suffixed variant
 * (`anthropic:claude-sonnet-4-20250514`) takes the price of its longest listed prefix.
 */
export const BUILT_IN_PRICES: Record<string, ModelPrice> = {
  offline: { inputPerMTok: 0, outputPerMTok: 0 },
  'openai:gpt-5': { inputPerMTok: 1.25, outputPerMTok: 10 },
  'openai:gpt-5-mini': { inputPerMTok: 0.25, outputPerMTok: 2 },
  'openai:gpt-5-nano': { inputPerMTok: 0.05, outputPerMTok: 0.4 },
  'openai:gpt-4.1': { inputPerMTok: 2, outputPerMTok: 8 },
  'openai:gpt-4.1-mini': { inputPerMTok: 0.4, outputPerMTok: 1.6 },
  'openai:gpt-4.1-nano': { inputPerMTok: 0.1, outputPerMTok: 0.4 },
  'openai:gpt-4o': { inputPerMTok: 2.5, outputPerMTok: 10 },
  'openai:gpt-4o-mini': { inputPerMTok: 0.15, outputPerMTok: 0.6 },
  'openai:o3': { inputPerMTok: 2, outputPerMTok: 8 },
  'openai:o3-mini': { inputPerMTok: 1.1, outputPerMTok: 4.4 },
  'openai:o4-mini': { inputPerMTok: 1.1, outputPerMTok: 4.4 },
  'anthropic:claude-opus-4': { inputPerMTok: 15, outputPerMTok: 75 },
  'anthropic:claude-opus-4-1': { inputPerMTok: 15, outputPerMTok: 75 },
  'anthropic:claude-sonnet-4': { inputPerMTok: 3, outputPerMTok: 15 },
  'anthropic:claude-sonnet-4-5': { inputPerMTok: 3, outputPerMTok: 15 },
  'anthropic:claude-haiku-4-5': { inputPerMTok: 1, outputPerMTok: 5 },
  'anthropic:claude-3-7-sonnet': { inputPerMTok: 3, outputPerMTok: 15 },
  'anthropic:claude-3-5-sonnet': { inputPerMTok: 3, outputPerMTok: 15 },
  'anthropic:claude-3-5-haiku': { inputPerMTok: 0.8, outputPerMTok: 4 },
};

export class PriceTable {
  private readonly prices: Record<string, ModelPrice>;
  private readonly keys: string[];

  constructor(overrides: Record<string, ModelPrice> = {}) {
    this.prices = { ...BUILT_IN_PRICES, ...overrides };
    // Longest first, so the most specific prefix wins.
    this.keys = Object.keys(this.prices).sort((a, b) => b.length - a.length);
  }

  priceOf(modelId: string): ModelPrice {
    const exact = this.prices[modelId];
    if (exact) return exact;
    const key = this.keys.find((k) => modelId.startsWith(k + '-') || modelId.startsWith(k + ':') || modelId.startsWith(k + '@'));
    return key ? this.prices[key]! : { inputPerMTok: 0, outputPerMTok: 0 };
  }

  /** costUsd = input tokens × input price + output tokens × output price (prices per million). */
  cost(modelId: string, inputTokens: number, outputTokens: number): number {
    const p = this.priceOf(modelId);
    return roundUsd((inputTokens * p.inputPerMTok + outputTokens * p.outputPerMTok) / 1_000_000);
  }
}

/** Costs are kept to a billionth of a dollar, which also hides floating-point dust. */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e9) / 1e9;
}
