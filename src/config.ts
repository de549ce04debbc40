import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { parsePlans, PlansConfigError, type Plans } from './shared/plans.ts';

/** Every environment variable the service reads, parsed once. Nothing else reads process.env. */
export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  publicUrl: string;
  nodeEnv: string;
  production: boolean;
  appSecret: string;
  bootstrap: { email: string; password: string; org: string } | undefined;
  allowSignup: boolean;
  accessTokenTtlS: number;
  refreshTokenTtlS: number;
  ssePingMs: number;
  webhookRetryDelaysS: number[];
  webhookAllowPrivate: boolean;
  webhookTimeoutMs: number;
  /** How long SIGTERM waits for in-flight requests and work before the process exits anyway (the work is then left to its lease). */
  shutdownGraceMs: number;
  openaiApiKey: string | undefined;
  anthropicApiKey: string | undefined;
  openaiCompatibleBaseUrl: string | undefined;
  openaiCompatibleApiKey: string | undefined;
  defaultModel: string;
  modelPrices: Record<string, { inputPerMTok: number; outputPerMTok: number }>;
  /** Agents: model calls streamed (SSE) or not, default step limit, concurrent runs per instance, run lease. */
  modelStreaming: boolean;
  agentMaxSteps: number;
  agentConcurrency: number;
  agentLeaseMs: number;
  outboundLeaseMs: number;
  /** Lets the agents' fetch_web_page tool reach private and loopback addresses (never in production). */
  agentWebAllowPrivate: boolean;
  /** Workflow run driver: runs executed at once per instance, claim lease, poll interval; run stream buffer per client. */
  workflowConcurrency: number;
  /** Backpressure at the triggers that can answer 429 (workflows/backlog.ts). */
  runQueue: { perWorkflow: number; perOrg: number; maxAgeMs: number; inFlight: number };
  workflowLeaseMs: number;
  workflowPollMs: number;
  /** Limits of one evaluation of a workflow expression (JSONata): time, nesting, size of what it builds. */
  expressionLimits: { timeoutMs: number; maxDepth: number; maxSize: number };
  /** Expression worker threads, and how many of them one organization's evaluations may hold at once (platform/expressions/pool.ts). */
  expressionPool: { threads: number; perOrg: number };
  runStreamBufferBytes: number;
  rateLimit: { max: number; windowMs: number; authMax: number };
  /** Addresses/CIDRs of the proxies whose X-Forwarded-For is believed; false: none (the socket's address counts). */
  trustProxy: string[] | false;
  /** Open SSE streams allowed per credential and per organization (per instance). */
  sseMaxPerCredential: number;
  sseMaxPerOrg: number;
  /** Time allowed to receive a whole request (headers and body); responses such as SSE streams are not limited. */
  requestTimeoutMs: number;
  logLevel: string;
  /** `json` lines, `pretty` (pino-pretty), or `auto`: pretty when standard output is a terminal. */
  logFormat: 'auto' | 'json' | 'pretty';
  bodyLimitBytes: number;
  /** Social connectors: API base URLs (stand-ins in tests), publishing retries and the publisher poll. */
  linkedinApiUrl: string;
  xApiUrl: string;
  publishRetryDelaysS: number[];
  publishRetryWindowS: number;
  publisherPollMs: number;
  mediaMaxBytes: number;
  /** Outgoing mail (invitations, password resets): an `smtp://` or `smtps://` URL, or unset for no mail; the From address. */
  smtpUrl: string | undefined;
  /**
   * OAuth 2.0 clients (CONTRACT §10): per provider the client id and secret (unset: that provider's
   * connect flow answers 422 INTEGRATION_NOT_CONFIGURED) and its authorization and token endpoints.
   */
  oauth: Record<OAuthProvider, OAuthClientConfig>;
  /** Google analytics APIs: GA4 Data API, GA4 Admin API, Search Console API (bases; stand-ins in tests). */
  ga4ApiUrl: string;
  ga4AdminApiUrl: string;
  gscApiUrl: string;
  /** The hour (UTC, 0–23) of the daily analytics sync. */
  analyticsSyncHour: number;
  /** The WhatsApp Cloud API (Graph API) base, with its version; a loopback stand-in in tests. */
  whatsappApiBaseUrl: string;
  /** The Telegram Bot API base; a loopback stand-in in tests. */
  telegramApiBaseUrl: string;
  /** Requests a minute per client address on each provider webhook route (WhatsApp, Telegram, e-mail relay). */
  providerWebhookRateMax: number;
  smtpFrom: string;
  /** Prometheus metrics: their own port (unset: off; 0: any free port) and an optional bearer token. */
  metricsPort: number | undefined;
  metricsToken: string | undefined;
  /** OTLP/HTTP base URL traces are exported to (unset: no tracing). */
  otlpEndpoint: string | undefined;
  /** Plans (CONTRACT §12): null when PLANS is unset (every organization unlimited); the plan new organizations get. */
  plans: Plans | null;
  defaultPlan: string | null;
}

type Env = Record<string, string | undefined>;

export type OAuthProvider = 'linkedin' | 'x' | 'google';
export interface OAuthClientConfig {
  clientId: string | undefined;
  clientSecret: string | undefined;
  authUrl: string;
  tokenUrl: string;
}

export class ConfigError extends Error {}

const url = (env: Env, name: string, fallback: string) => (str(env, name) ?? fallback).replace(/\/+$/, '');

/**
 * The expression workers: one per core, 2 to 4 (two, so that one is free for another organization
 * while one organization's evaluations hold the rest), and one organization may hold all but one.
 */
function expressionPool(env: Env): Config['expressionPool'] {
  const threads = int(env, 'EXPRESSION_THREADS', Math.min(4, Math.max(2, availableParallelism())), 1);
  return { threads, perOrg: Math.min(threads, int(env, 'EXPRESSION_THREADS_PER_ORG', Math.max(1, threads - 1), 1)) };
}

function int(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  return n;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function str(env: Env, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw === '' ? undefined : raw;
}

function parseDelays(raw: string | undefined): number[] {
  const text = raw ?? '60,300,900,1800';
  const delays = text.split(',').map((s) => Number(s.trim()));
  if (delays.length === 0 || delays.some((d) => !Number.isFinite(d) || d < 0)) {
    throw new ConfigError(`WEBHOOK_RETRY_DELAYS_S must be a comma-separated list of seconds, got "${text}"`);
  }
  return delays;
}

/** A comma-separated list of waits in seconds (fractions allowed, so tests can use short ones). */
function parseSeconds(name: string, text: string): number[] {
  const values = text.split(',').map((s) => Number(s.trim()));
  if (values.length === 0 || values.some((d) => !Number.isFinite(d) || d < 0)) {
    throw new ConfigError(`${name} must be a comma-separated list of seconds, got "${text}"`);
  }
  return values;
}

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** TRUST_PROXY: unset, or addresses/CIDRs (and proxy-addr's names) of the proxies in front of the service. */
function parseTrustProxy(raw: string | undefined): string[] | false {
  if (raw === undefined) return false;
  const entries = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = entries.filter((entry) => {
    if (PROXY_NAMES.includes(entry)) return false;
    const [address, prefix, ...rest] = entry.split('/');
    const family = isIP(address ?? '');
    if (family === 0 || rest.length > 0) return true;
    if (prefix === undefined) return false;
    const bits = Number(prefix);
    return !/^\d{1,3}$/.test(prefix) || bits > (family === 4 ? 32 : 128);
  });
  if (entries.length === 0 || bad.length > 0) {
    throw new ConfigError(`TRUST_PROXY must be a comma-separated list of proxy addresses or CIDRs (or loopback, linklocal, uniquelocal), got "${raw}"`);
  }
  return entries;
}

/** SMTP_URL: `smtp://[user:pass@]host[:port]` (STARTTLS when offered) or `smtps://…` (TLS from the start). */
function parseSmtpUrl(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('SMTP_URL must be a URL such as smtp://user:password@mail.example.com:587');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw new ConfigError(`SMTP_URL must start with smtp:// or smtps://, got "${url.protocol}//…"`);
  if (!url.hostname) throw new ConfigError('SMTP_URL needs a host name');
  return raw;
}

function parsePrices(raw: string | undefined): Config['modelPrices'] {
  if (!raw) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('MODEL_PRICES must be JSON: { "<modelId>": { "inputPerMTok": n, "outputPerMTok": n } }');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ConfigError('MODEL_PRICES must be a JSON object');
  const out: Config['modelPrices'] = {};
  for (const [id, price] of Object.entries(parsed as Record<string, unknown>)) {
    const p = price as { inputPerMTok?: unknown; outputPerMTok?: unknown };
    if (typeof p?.inputPerMTok !== 'number' || typeof p?.outputPerMTok !== 'number') {
      throw new ConfigError(`MODEL_PRICES["${id}"] needs numeric inputPerMTok and outputPerMTok`);
    }
    out[id] = { inputPerMTok: p.inputPerMTok, outputPerMTok: p.outputPerMTok };
  }
  return out;
}

/** In development a missing APP_SECRET is generated once and kept in DATA_DIR so sessions survive restarts. */
function resolveSecret(env: Env, dataDir: string, production: boolean): string {
  const given = str(env, 'APP_SECRET');
  if (given) {
    if (given.length < 16) throw new ConfigError('APP_SECRET must be at least 16 characters');
    return given;
  }
  if (production) throw new ConfigError('APP_SECRET is required when NODE_ENV=production');
  const file = join(dataDir, 'app-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(file, secret + '\n', { mode: 0o600 });
  return secret;
}

/** METRICS_PORT: unset means off; 0 any free port; never the public port. */
function parseMetricsPort(raw: string | undefined, publicPort: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new ConfigError(`METRICS_PORT must be a port number (0–65535), got "${raw}"`);
  if (n !== 0 && n === publicPort) throw new ConfigError('METRICS_PORT must differ from PORT: metrics are never served on the public port');
  return n;
}

function logFormat(value: string | undefined): Config['logFormat'] {
  if (value === undefined) return 'auto';
  if (value === 'auto' || value === 'json' || value === 'pretty') return value;
  throw new ConfigError(`LOG_FORMAT must be auto, json or pretty, got "${value}"`);
}

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = str(env, 'NODE_ENV') ?? 'development';
  const production = nodeEnv === 'production';
  const port = int(env, 'PORT', 3000);
  const dataDir = resolve(str(env, 'DATA_DIR') ?? './data');
  const bootstrapEmail = str(env, 'BOOTSTRAP_EMAIL');
  const bootstrapPassword = str(env, 'BOOTSTRAP_PASSWORD');
  if (Boolean(bootstrapEmail) !== Boolean(bootstrapPassword)) {
    throw new ConfigError('BOOTSTRAP_EMAIL and BOOTSTRAP_PASSWORD must be set together');
  }
  return {
    port,
    host: str(env, 'HOST') ?? '127.0.0.1',
    databaseUrl: str(env, 'DATABASE_URL'),
    dataDir,
    publicUrl: (str(env, 'PUBLIC_URL') ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    nodeEnv,
    production,
    appSecret: resolveSecret(env, dataDir, production),
    bootstrap:
      bootstrapEmail && bootstrapPassword
        ? { email: bootstrapEmail, password: bootstrapPassword, org: str(env, 'BOOTSTRAP_ORG') ?? 'My organization' }
        : undefined,
    allowSignup: bool(env, 'ALLOW_SIGNUP', !production),
    accessTokenTtlS: int(env, 'ACCESS_TOKEN_TTL_S', 900, 1),
    refreshTokenTtlS: int(env, 'REFRESH_TOKEN_TTL_S', 30 * 24 * 3600, 60),
    ssePingMs: int(env, 'SSE_PING_MS', 25000, 10),
    webhookRetryDelaysS: parseDelays(str(env, 'WEBHOOK_RETRY_DELAYS_S')),
    webhookAllowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE', !production),
    webhookTimeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100),
    shutdownGraceMs: int(env, 'SHUTDOWN_GRACE_MS', 10_000, 0),
    openaiApiKey: str(env, 'OPENAI_API_KEY'),
    anthropicApiKey: str(env, 'ANTHROPIC_API_KEY'),
    openaiCompatibleBaseUrl: str(env, 'OPENAI_COMPATIBLE_BASE_URL'),
    openaiCompatibleApiKey: str(env, 'OPENAI_COMPATIBLE_API_KEY'),
    defaultModel: str(env, 'DEFAULT_MODEL') ?? 'offline',
    modelPrices: parsePrices(str(env, 'MODEL_PRICES')),
    modelStreaming: bool(env, 'MODEL_STREAMING', true),
    agentMaxSteps: int(env, 'AGENT_MAX_STEPS', 12, 1),
    agentConcurrency: int(env, 'AGENT_CONCURRENCY', 4, 1),
    agentLeaseMs: int(env, 'AGENT_LEASE_MS', 60_000, 100),
    outboundLeaseMs: int(env, 'OUTBOUND_LEASE_MS', 60_000, 100),
    agentWebAllowPrivate: bool(env, 'AGENT_WEB_ALLOW_PRIVATE', false) && !production,
    workflowConcurrency: int(env, 'WORKFLOW_CONCURRENCY', 32, 1),
    runQueue: {
      perWorkflow: int(env, 'RUN_QUEUE_MAX_PER_WORKFLOW', 1000, 0),
      perOrg: int(env, 'RUN_QUEUE_MAX_PER_ORG', 5000, 0),
      maxAgeMs: int(env, 'RUN_QUEUE_MAX_AGE_MS', 250, 0),
      // The embedded store has one connection: fewer triggers at once keep it for the runs.
      inFlight: int(env, 'RUN_TRIGGERS_IN_FLIGHT', str(env, 'DATABASE_URL') ? 200 : 64, 0),
    },
    workflowLeaseMs: int(env, 'WORKFLOW_LEASE_MS', 30_000, 100),
    workflowPollMs: int(env, 'WORKFLOW_POLL_MS', 1000, 10),
    expressionLimits: {
      timeoutMs: int(env, 'EXPRESSION_TIMEOUT_MS', 1000, 10),
      maxDepth: int(env, 'EXPRESSION_MAX_DEPTH', 500, 10),
      maxSize: int(env, 'EXPRESSION_MAX_SIZE', 1_000_000, 1000),
    },
    expressionPool: expressionPool(env),
    runStreamBufferBytes: int(env, 'RUN_STREAM_BUFFER_BYTES', 1024 * 1024, 1),
    rateLimit: {
      max: int(env, 'RATE_LIMIT_MAX', 6000, 1),
      windowMs: int(env, 'RATE_LIMIT_WINDOW_MS', 60000, 1),
      authMax: int(env, 'AUTH_RATE_LIMIT_MAX', 20, 1),
    },
    trustProxy: parseTrustProxy(str(env, 'TRUST_PROXY')),
    sseMaxPerCredential: int(env, 'SSE_MAX_PER_CREDENTIAL', 20, 1),
    sseMaxPerOrg: int(env, 'SSE_MAX_PER_ORG', 1000, 1),
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 60_000, 100),
    logLevel: str(env, 'LOG_LEVEL') ?? (production ? 'info' : 'info'),
    logFormat: logFormat(str(env, 'LOG_FORMAT')),
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024),
    linkedinApiUrl: (str(env, 'LINKEDIN_API_URL') ?? 'https://api.linkedin.com').replace(/\/+$/, ''),
    xApiUrl: (str(env, 'X_API_URL') ?? 'https://api.x.com').replace(/\/+$/, ''),
    publishRetryDelaysS: parseSeconds('PUBLISH_RETRY_DELAYS_S', str(env, 'PUBLISH_RETRY_DELAYS_S') ?? '30,120,300'),
    publishRetryWindowS: int(env, 'PUBLISH_RETRY_WINDOW_S', 900, 1),
    publisherPollMs: int(env, 'PUBLISHER_POLL_MS', 1000, 10),
    mediaMaxBytes: int(env, 'MEDIA_MAX_BYTES', 50 * 1024 * 1024, 1),
    smtpUrl: parseSmtpUrl(str(env, 'SMTP_URL')),
    oauth: {
      linkedin: {
        clientId: str(env, 'LINKEDIN_CLIENT_ID'),
        clientSecret: str(env, 'LINKEDIN_CLIENT_SECRET'),
        authUrl: url(env, 'LINKEDIN_AUTH_URL', 'https://www.linkedin.com/oauth/v2/authorization'),
        tokenUrl: url(env, 'LINKEDIN_TOKEN_URL', 'https://www.linkedin.com/oauth/v2/accessToken'),
      },
      x: {
        clientId: str(env, 'X_CLIENT_ID'),
        clientSecret: str(env, 'X_CLIENT_SECRET'),
        authUrl: url(env, 'X_AUTH_URL', 'https://x.com/i/oauth2/authorize'),
        tokenUrl: url(env, 'X_TOKEN_URL', 'https://api.x.com/2/oauth2/token'),
      },
      google: {
        clientId: str(env, 'GOOGLE_CLIENT_ID'),
        clientSecret: str(env, 'GOOGLE_CLIENT_SECRET'),
        authUrl: url(env, 'GOOGLE_AUTH_URL', 'https://accounts.google.com/o/oauth2/v2/auth'),
        tokenUrl: url(env, 'GOOGLE_TOKEN_URL', 'https://oauth2.googleapis.com/token'),
      },
    },
    ga4ApiUrl: url(env, 'GA4_API_URL', 'https://analyticsdata.googleapis.com'),
    ga4AdminApiUrl: url(env, 'GA4_ADMIN_API_URL', 'https://analyticsadmin.googleapis.com'),
    gscApiUrl: url(env, 'GSC_API_URL', 'https://searchconsole.googleapis.com'),
    analyticsSyncHour: (() => {
      const hour = int(env, 'ANALYTICS_SYNC_HOUR', 4, 0);
      if (hour > 23) throw new ConfigError(`ANALYTICS_SYNC_HOUR must be an hour from 0 to 23, got "${hour}"`);
      return hour;
    })(),
    whatsappApiBaseUrl: (str(env, 'WHATSAPP_API_BASE_URL') ?? 'https://graph.facebook.com/v21.0').replace(/\/+$/, ''),
    providerWebhookRateMax: int(env, 'PROVIDER_WEBHOOK_RATE_LIMIT_MAX', 60_000, 1),
    telegramApiBaseUrl: (str(env, 'TELEGRAM_API_BASE_URL') ?? 'https://api.telegram.org').replace(/\/+$/, ''),
    smtpFrom: str(env, 'SMTP_FROM') ?? `no-reply@${new URL(str(env, 'PUBLIC_URL') ?? `http://localhost:${port}`).hostname}`,
    metricsPort: parseMetricsPort(str(env, 'METRICS_PORT'), port),
    metricsToken: str(env, 'METRICS_TOKEN'),
    otlpEndpoint: str(env, 'OTEL_EXPORTER_OTLP_ENDPOINT'),
    ...(() => {
      try {
        return parsePlans(str(env, 'PLANS'), str(env, 'DEFAULT_PLAN'));
      } catch (error) {
        if (error instanceof PlansConfigError) throw new ConfigError(error.message);
        throw error;
      }
    })(),
  };
}
