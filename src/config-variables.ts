/**
 * The documentation of every environment variable src/config.ts reads: the README's configuration
 * table is generated from this list (`npm run docs:config`), and test/readme.test.ts fails when the
 * two differ or when config.ts reads a variable missing here. Pure data, no imports.
 */
export interface ConfigVariable {
  /** One variable, or several documented together (set together). */
  names: string[];
  /** As shown in the table (Markdown). */
  default: string;
  meaning: string;
}

export const CONFIG_VARIABLES: ConfigVariable[] = [
  { names: ['PORT'], default: '`3000`', meaning: 'listen port' },
  { names: ['HOST'], default: '`127.0.0.1`', meaning: 'listen address (`0.0.0.0` in containers)' },
  {
    names: ['DATABASE_URL'],
    default: 'unset',
    meaning: 'unset: embedded PGlite in `DATA_DIR`; `memory://`: embedded, in memory; `postgres://…`: PostgreSQL server',
  },
  { names: ['DATA_DIR'], default: '`./data`', meaning: 'embedded database, media files, generated secret' },
  { names: ['PUBLIC_URL'], default: '`http://localhost:$PORT`', meaning: 'absolute links (media URLs, docs, logged base URL)' },
  {
    names: ['NODE_ENV'],
    default: '`development`',
    meaning: '`production` turns on the strict rules: `APP_SECRET` required, sign-up off, webhooks only to public HTTPS addresses',
  },
  {
    names: ['APP_SECRET'],
    default: 'generated into `DATA_DIR/app-secret` in development; required in production',
    meaning: 'at least 16 characters; signs access tokens, encrypts stored secrets',
  },
  {
    names: ['BOOTSTRAP_EMAIL', 'BOOTSTRAP_PASSWORD'],
    default: 'unset',
    meaning: 'set together: at start, if no user has that e-mail, create the user, an organization and its project "Default"',
  },
  { names: ['BOOTSTRAP_ORG'], default: '`My organization`', meaning: 'name of that organization' },
  { names: ['ALLOW_SIGNUP'], default: '`true` in development, `false` in production', meaning: 'enables `POST /api/v1/auth/register`' },
  { names: ['ACCESS_TOKEN_TTL_S'], default: '`900`', meaning: 'access token lifetime, seconds' },
  { names: ['REFRESH_TOKEN_TTL_S'], default: '`2592000` (30 days)', meaning: 'refresh token lifetime, seconds' },
  { names: ['SSE_PING_MS'], default: '`25000`', meaning: 'interval of the `: ping` keep-alive comment on event streams' },
  { names: ['WEBHOOK_RETRY_DELAYS_S'], default: '`60,300,900,1800`', meaning: 'waits between the delivery attempts of a webhook' },
  {
    names: ['WEBHOOK_ALLOW_PRIVATE'],
    default: '`true` in development, `false` in production',
    meaning: 'allow loopback/private webhook targets and plain `http`',
  },
  {
    names: ['WEBHOOK_TIMEOUT_MS'],
    default: '`10000`',
    meaning: 'total deadline of one webhook delivery and of workflow HTTP calls (DNS, connect, TLS, answer)',
  },
  {
    names: ['SHUTDOWN_GRACE_MS'],
    default: '`10000`',
    meaning:
      'on SIGTERM/SIGINT, how long in-flight requests and work may take to finish; after it the process exits and unfinished work is taken over by another instance (or this one after a restart) once its lease expires',
  },
  { names: ['OPENAI_API_KEY'], default: 'unset', meaning: 'enables models `openai:*`' },
  { names: ['ANTHROPIC_API_KEY'], default: 'unset', meaning: 'enables models `anthropic:*`' },
  {
    names: ['OPENAI_COMPATIBLE_BASE_URL', 'OPENAI_COMPATIBLE_API_KEY'],
    default: 'unset',
    meaning: 'enable models `openai-compatible:*` (Chat Completions API: Ollama, vLLM, llama.cpp, LiteLLM…)',
  },
  {
    names: ['DEFAULT_MODEL'],
    default: '`offline`',
    meaning: 'model used when a request names none, e.g. `openai:gpt-4.1-mini` once its key is set; `offline` needs no network',
  },
  {
    names: ['MODEL_PRICES'],
    default: 'built-in table',
    meaning: 'JSON `{ "<modelId>": { "inputPerMTok": n, "outputPerMTok": n } }` (USD per million tokens) merged over the built-in prices',
  },
  { names: ['MODEL_STREAMING'], default: '`true`', meaning: 'agents call models streamed (SSE) or with one plain request per step' },
  {
    names: ['AGENT_MAX_STEPS'],
    default: '`12`',
    meaning: "default limit of model calls per agent run (a saved agent's `maxSteps` overrides it); a run that reaches it ends `max_steps`",
  },
  { names: ['AGENT_CONCURRENCY'], default: '`4`', meaning: 'agent runs executed at once per instance' },
  { names: ['AGENT_LEASE_MS'], default: '`60000`', meaning: 'lease of a running agent run; a run whose instance died is ended `failed` once it expires' },
  {
    names: ['OUTBOUND_LEASE_MS'],
    default: '`60000`',
    meaning: 'lease of a conversation message being sent; one whose instance died is sent again once it expires (e-mail with the same Message-ID)',
  },
  {
    names: ['AGENT_WEB_ALLOW_PRIVATE'],
    default: '`false`',
    meaning: "let the agents' `fetch_web_page` tool reach private and loopback addresses (ignored in production); see [docs/agents.md](docs/agents.md)",
  },
  { names: ['WORKFLOW_CONCURRENCY'], default: '`32`', meaning: 'workflow runs executed at once by one instance' },
  {
    names: ['RUN_QUEUE_MAX_PER_WORKFLOW'],
    default: '`1000`',
    meaning:
      'runs of one workflow waiting to start past which its webhook trigger and `POST …/run` answer 429 `RATE_LIMIT` with `Retry-After` (`0`: no bound); runs started by events and schedules are never refused',
  },
  { names: ['RUN_QUEUE_MAX_PER_ORG'], default: '`5000`', meaning: 'the same bound for all the workflows of one organization together (`0`: no bound)' },
  {
    names: ['RUN_QUEUE_MAX_AGE_MS'],
    default: '`250`',
    meaning:
      "refuse those triggers (429, `Retry-After`) while the organization's oldest run waiting to start has waited longer than this (in a queue of at least `WORKFLOW_CONCURRENCY` runs), or the trigger itself did before its run was queued while others were in flight: past capacity the excess is refused instead of queued for minutes (`0`: no bound)",
  },
  {
    names: ['RUN_TRIGGERS_IN_FLIGHT'],
    default: '`64` embedded, `200` on PostgreSQL',
    meaning:
      'those triggers one instance handles at once; more are refused at once (429, `Retry-After`), before any database work, so that they do not wait for the database in front of the runs under way (`0`: no bound)',
  },
  { names: ['WORKFLOW_LEASE_MS'], default: '`30000`', meaning: 'how long an instance holds a claimed workflow run before another may take it over' },
  { names: ['WORKFLOW_POLL_MS'], default: '`1000`', meaning: 'how often the run driver looks for runs to execute' },
  {
    names: ['EXPRESSION_TIMEOUT_MS'],
    default: '`1000`',
    meaning: 'longest evaluation of one workflow expression (`{{ … }}`, conditions); past it the node fails with `EXPRESSION_LIMIT`',
  },
  {
    names: ['EXPRESSION_MAX_DEPTH'],
    default: '`500`',
    meaning: 'deepest nesting of one evaluation (recursion) and of the values it builds; past it `EXPRESSION_LIMIT`',
  },
  {
    names: ['EXPRESSION_MAX_SIZE'],
    default: '`1000000`',
    meaning: 'longest string, longest sequence and largest value (items plus characters) one evaluation may build; past it `EXPRESSION_LIMIT`',
  },
  {
    names: ['EXPRESSION_THREADS'],
    default: 'the number of cores, at least `2`, at most `4`',
    meaning:
      'worker threads that evaluate workflow and campaign expressions (all but plain paths such as `lead.email`), so that none holds the server; one that runs past `EXPRESSION_TIMEOUT_MS` is terminated (`EXPRESSION_LIMIT`) and replaced',
  },
  {
    names: ['EXPRESSION_THREADS_PER_ORG'],
    default: '`EXPRESSION_THREADS` − 1 (at least `1`)',
    meaning:
      "of those threads, how many one organization's evaluations may hold at once; the rest wait for its turn, and a free thread goes to the organization that used the least expression time lately",
  },
  { names: ['RUN_STREAM_BUFFER_BYTES'], default: '`1048576` (1 MB)', meaning: 'buffered output allowed per run-stream client' },
  { names: ['LINKEDIN_API_URL'], default: '`https://api.linkedin.com`', meaning: 'LinkedIn API base URL' },
  { names: ['X_API_URL'], default: '`https://api.x.com`', meaning: 'X API base URL' },
  {
    names: ['LINKEDIN_CLIENT_ID', 'LINKEDIN_CLIENT_SECRET'],
    default: 'unset',
    meaning:
      "the LinkedIn app's OAuth 2.0 client (redirect URL `PUBLIC_URL/api/v1/oauth/callback`); unset: connecting LinkedIn with OAuth answers 422 `INTEGRATION_NOT_CONFIGURED` (a pasted token still works)",
  },
  {
    names: ['X_CLIENT_ID', 'X_CLIENT_SECRET'],
    default: 'unset',
    meaning: "the X app's OAuth 2.0 client (a public client may leave the secret unset); as for LinkedIn",
  },
  {
    names: ['GOOGLE_CLIENT_ID', 'GOOGLE_CLIENT_SECRET'],
    default: 'unset',
    meaning: 'the Google OAuth client for GA4 and Search Console; unset: no analytics connections',
  },
  {
    names: ['LINKEDIN_AUTH_URL', 'LINKEDIN_TOKEN_URL'],
    default: '`https://www.linkedin.com/oauth/v2/authorization`, `…/accessToken`',
    meaning: "LinkedIn's OAuth endpoints",
  },
  { names: ['X_AUTH_URL', 'X_TOKEN_URL'], default: '`https://x.com/i/oauth2/authorize`, `https://api.x.com/2/oauth2/token`', meaning: "X's OAuth endpoints" },
  {
    names: ['GOOGLE_AUTH_URL', 'GOOGLE_TOKEN_URL'],
    default: '`https://accounts.google.com/o/oauth2/v2/auth`, `https://oauth2.googleapis.com/token`',
    meaning: "Google's OAuth endpoints",
  },
  {
    names: ['GA4_API_URL', 'GA4_ADMIN_API_URL', 'GSC_API_URL'],
    default: '`https://analyticsdata.googleapis.com`, `https://analyticsadmin.googleapis.com`, `https://searchconsole.googleapis.com`',
    meaning: 'the GA4 Data API, the GA4 Admin API (properties) and the Search Console API',
  },
  { names: ['ANALYTICS_SYNC_HOUR'], default: '`4`', meaning: "the hour (UTC, 0–23) of each analytics integration's daily sync" },
  { names: ['PUBLISH_RETRY_DELAYS_S'], default: '`30,120,300`', meaning: 'waits between attempts to publish a post' },
  { names: ['PUBLISH_RETRY_WINDOW_S'], default: '`900`', meaning: 'no publishing retry later than this many seconds (at most 900) after the first attempt' },
  { names: ['PUBLISHER_POLL_MS'], default: '`1000`', meaning: 'how often scheduled posts are looked for' },
  { names: ['MEDIA_MAX_BYTES'], default: '`52428800` (50 MB)', meaning: 'largest media upload' },
  {
    names: ['RATE_LIMIT_MAX'],
    default: '`6000`',
    meaning:
      "requests per window per credential (an API key, or a user's sessions); requests without a valid credential (none, an unknown key, a bad token) count per client address; then 429 `RATE_LIMIT` with `Retry-After`",
  },
  { names: ['RATE_LIMIT_WINDOW_MS'], default: '`60000`', meaning: 'rate-limit window, milliseconds' },
  {
    names: ['AUTH_RATE_LIMIT_MAX'],
    default: '`20`',
    meaning:
      'requests per window per client address on the password routes (`POST /api/v1/auth/login`, `/auth/register`, `/auth/password-reset` and its `/confirm`, `/auth/password`, `/auth/invitations/accept`); not refresh, logout or me',
  },
  {
    names: ['TRUST_PROXY'],
    default: 'unset',
    meaning:
      'comma-separated addresses or CIDRs (or `loopback`, `linklocal`, `uniquelocal`) of the reverse proxies in front of the service, whose `X-Forwarded-For` gives the client address; unset: forwarded headers are ignored and the connecting address counts',
  },
  {
    names: ['SSE_MAX_PER_CREDENTIAL'],
    default: '`20`',
    meaning: "open event streams per credential (API key, or a user's sessions); one more gives 429 `RATE_LIMIT` with `Retry-After`",
  },
  { names: ['SSE_MAX_PER_ORG'], default: '`1000`', meaning: 'open event streams per organization; one more gives 429 `RATE_LIMIT` with `Retry-After`' },
  {
    names: ['REQUEST_TIMEOUT_MS'],
    default: '`60000`',
    meaning:
      'time allowed to receive a whole request, headers and body; a slower client gets 408 and the connection is closed (responses, such as event streams, are not limited)',
  },
  {
    names: ['LOG_LEVEL'],
    default: '`info`',
    meaning:
      '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`; logs go to stdout (as LOG_FORMAT says), with credentials redacted, query strings, workflow trigger tokens and media signatures masked in paths, and failed queries named by statement without their values',
  },
  {
    names: ['LOG_FORMAT'],
    default: '`auto`',
    meaning:
      '`json` (one JSON line per entry), `pretty` (readable lines, pino-pretty) or `auto`: pretty when standard output is a terminal, JSON otherwise (a file, a pipe, a log collector)',
  },
  {
    names: ['SMTP_URL'],
    default: 'unset',
    meaning:
      '`smtp://user:password@host:587` (STARTTLS when the server offers it) or `smtps://…:465`: the relay that sends invitation and password-reset e-mails; unset: no e-mail is sent (invitation links are still returned to the inviter)',
  },
  { names: ['SMTP_FROM'], default: '`no-reply@` the host of `PUBLIC_URL`', meaning: 'sender of those e-mails, an address or `Name <address>`' },
  {
    names: ['WHATSAPP_API_BASE_URL'],
    default: '`https://graph.facebook.com/v21.0`',
    meaning: 'the WhatsApp Cloud API that `whatsapp` inboxes send through (with its version)',
  },
  {
    names: ['TELEGRAM_API_BASE_URL'],
    default: '`https://api.telegram.org`',
    meaning: 'the Telegram Bot API that `telegram` inboxes send through and register their webhooks with',
  },
  {
    names: ['PROVIDER_WEBHOOK_RATE_LIMIT_MAX'],
    default: '`60000`',
    meaning:
      'requests a minute per client address on each provider webhook route (WhatsApp, Telegram, the e-mail relay); providers deliver from few addresses in bursts (WhatsApp up to 1,000 messages a second), and every request is verified before anything is stored; over it: 429 with `Retry-After`',
  },
  {
    names: ['METRICS_PORT'],
    default: 'unset (off)',
    meaning:
      'serve Prometheus metrics at `http://HOST:METRICS_PORT/metrics`, a separate listener (never the public port); see [docs/operations.md](docs/operations.md#metrics-and-traces)',
  },
  { names: ['METRICS_TOKEN'], default: 'unset', meaning: 'when set, `/metrics` requires `Authorization: Bearer <METRICS_TOKEN>` (else 401)' },
  {
    names: ['OTEL_EXPORTER_OTLP_ENDPOINT'],
    default: 'unset (off)',
    meaning:
      'OTLP/HTTP collector base URL (`http://collector:4318`): traces of HTTP requests, database queries, outbound calls and model calls are exported to `…/v1/traces`',
  },
  {
    names: ['PLANS'],
    default: 'unset (every organization unlimited)',
    meaning:
      'JSON `{ "<plan>": { "features": [...], "limits": { "leads": n, "members": n, "webhookEndpoints": n, "inboxes": n, "runsPerMonth": n, "agentRunsPerMonth": n, "campaignMessagesPerMonth": n } } }`; features: `workflows`, `agents`, `content`, `conversations`, `campaigns`, `analytics`, `webhooks`; a missing limit is unlimited; see [docs/operations.md](docs/operations.md#plans-and-quotas)',
  },
  {
    names: ['DEFAULT_PLAN'],
    default: 'unset',
    meaning: 'required with `PLANS`: the plan new organizations get (and those never assigned one); `npm run cli -- set-plan` assigns another',
  },
  { names: ['BODY_LIMIT_BYTES'], default: '`1048576` (1 MB)', meaning: 'largest JSON request body; larger gives 413 `PAYLOAD_TOO_LARGE`' },
];

/** The README table, Markdown. */
export function configTable(): string {
  const rows = CONFIG_VARIABLES.map((v) => `| ${v.names.map((n) => '`' + n + '`').join(', ')} | ${v.default} | ${v.meaning} |`);
  return ['| Variable | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}
