import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel } from 'ai';
import type { Config } from '../../../config.ts';
import { unprocessable } from '../../../platform/errors.ts';
import { OfflineLanguageModel } from './offline.ts';

export const OFFLINE_MODEL = 'offline';
export const PROVIDERS = ['openai', 'anthropic', 'openai-compatible'] as const;
const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._\-:/@]{0,127}$/;

export interface ResolvedModel {
  modelId: string;
  provider: string;
  model: LanguageModel;
  offline: boolean;
}

const notAllowed = (message: string) => unprocessable('MODEL_NOT_ALLOWED', message);

/**
 * Model ids are `<provider>:<model>`. A provider is usable when configured: `openai` with
 * OPENAI_API_KEY, `anthropic` with ANTHROPIC_API_KEY, `openai-compatible` with
 * OPENAI_COMPATIBLE_BASE_URL; `offline` always. Anything else is 422 MODEL_NOT_ALLOWED.
 */
export class ModelRegistry {
  private readonly config: Config;
  private readonly cache = new Map<string, ResolvedModel>();
  private readonly offline = new OfflineLanguageModel();

  constructor(config: Config) {
    this.config = config;
  }

  /** The configured providers, for documentation and GET …/agent-types. */
  providers(): string[] {
    return [OFFLINE_MODEL, ...PROVIDERS.filter((p) => this.configured(p))];
  }

  private configured(provider: string): boolean {
    if (provider === 'openai') return Boolean(this.config.openaiApiKey);
    if (provider === 'anthropic') return Boolean(this.config.anthropicApiKey);
    if (provider === 'openai-compatible') return Boolean(this.config.openaiCompatibleBaseUrl);
    return false;
  }

  /** Throws 422 MODEL_NOT_ALLOWED unless the id names a configured provider. */
  check(modelId: string): string {
    return this.resolve(modelId).modelId;
  }

  resolve(modelId: string): ResolvedModel {
    const cached = this.cache.get(modelId);
    if (cached) return cached;
    const resolved = this.build(modelId);
    this.cache.set(modelId, resolved);
    return resolved;
  }

  private build(modelId: string): ResolvedModel {
    if (modelId === OFFLINE_MODEL) return { modelId, provider: OFFLINE_MODEL, model: this.offline, offline: true };
    const cut = modelId.indexOf(':');
    const provider = cut === -1 ? '' : modelId.slice(0, cut);
    const name = cut === -1 ? '' : modelId.slice(cut + 1);
    if (!(PROVIDERS as readonly string[]).includes(provider)) {
      throw notAllowed(`Unknown model "${modelId.slice(0, 80)}"; use offline or <provider>:<model> with provider one of ${PROVIDERS.join(', ')}`);
    }
    if (!MODEL_NAME.test(name)) throw notAllowed(`Invalid model name "${name.slice(0, 80)}"`);
    if (!this.configured(provider)) throw notAllowed(`Provider ${provider} is not configured on this server`);
    let model: LanguageModel;
    if (provider === 'openai') model = createOpenAI({ apiKey: this.config.openaiApiKey })(name);
    else if (provider === 'anthropic') model = createAnthropic({ apiKey: this.config.anthropicApiKey })(name);
    else {
      model = createOpenAICompatible({
        name: 'openai-compatible',
        baseURL: this.config.openaiCompatibleBaseUrl!.replace(/\/+$/, ''),
        apiKey: this.config.openaiCompatibleApiKey,
        includeUsage: true,
      }).chatModel(name);
    }
    return { modelId, provider, model, offline: false };
  }
}
