/**
 * What the chaos run gives each load, and what a load gives back. The run (chaos/run.ts) owns the
 * PostgreSQL cluster, the service's instances, the shared stand-ins and the faults; a load
 * (chaos/loads/*.ts) creates what it needs through the HTTP API, sends its traffic at a steady
 * rate, and at the end checks its promises against its own records, the stand-ins' and the
 * database.
 */
import type { SmtpStandIn } from '../test/smtp.ts';
import type { ModelServer } from '../test/model-server.ts';

/** One answer of the service (status 0: no answer — the connection failed or timed out). */
export interface Answer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
  text: string;
  headers: Headers;
  ms: number;
  /** Which instance answered (index into the run's instances). */
  instance: number;
}

export interface RequestOptions {
  body?: unknown;
  /** A raw body, sent as is with `contentType` (a signed provider webhook, a CSV). */
  raw?: string | Buffer | FormData;
  contentType?: string;
  headers?: Record<string, string>;
  /** Who calls: the owner's session (default), the load's API key with every scope, or nobody. */
  auth?: 'owner' | 'key' | 'none';
  /** The latency/5xx bucket in the report ("lead.create", "inbound.whatsapp", …); default the method and path shape. */
  routeClass?: string;
  /** Send to this instance; default: the next live one in turn. */
  instance?: number;
  /** Give up after this long (status 0); default 30 s. */
  timeoutMs?: number;
}

export interface Api {
  /** `/api/v1/orgs/<orgId>`: prefix it to an organization's path. */
  readonly org: string;
  readonly orgId: string;
  /** The organization's default project. */
  readonly projectId: string;
  /** An API key of the organization with every scope. */
  readonly apiKey: string;
  /** http://127.0.0.1:<port> of a live instance (in turn), or of `instance`. */
  base(instance?: number): string;
  /** The owner's current access token (refreshed by the run). */
  accessToken(): string;
  /** Never throws on a status or a network error (status 0); records latency and status. */
  request(method: string, path: string, options?: RequestOptions): Promise<Answer>;
  /** As request, retried (with a short pause) while the answer is 0 or 5xx or 429, up to `withinMs`; the last answer. */
  until(method: string, path: string, options?: RequestOptions & { withinMs?: number }): Promise<Answer>;
}

/** Seeded randomness: the same seed gives the same load choices and fault schedule. */
export interface Rng {
  next(): number;
  int(below: number): number;
  pick<T>(items: readonly T[]): T;
  /** A short random id (letters and digits) from the seeded stream. */
  id(length?: number): string;
}

export interface StandInRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  raw: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
  at: number;
}

export type StandInAnswer = { status?: number; body?: string; headers?: Record<string, string> } | void;

/**
 * A real HTTP server on loopback (a webhook receiver, a provider's API, a workflow's HTTP target).
 * The load answers in `handle` and keeps what it needs to check (the stand-in keeps nothing). The
 * run's faults make a stand-in hang (no answer until the fault ends) or answer 500 for a while;
 * `handle` is then not called.
 */
export interface StandIn {
  readonly name: string;
  url(path?: string): string;
  handle: (req: StandInRequest) => StandInAnswer | Promise<StandInAnswer>;
  /** Requests answered by `handle` / refused or held by a fault. */
  readonly counts: { handled: number; faulted: number };
}

export interface World {
  api: Api;
  rng: Rng;
  /** A query on the run's PostgreSQL (superuser); throws while the database is down. */
  sql<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /** A new loopback stand-in, subject to the run's stand-in faults unless `faults` is false. */
  standIn(name: string, options?: { faults?: boolean }): Promise<StandIn>;
  /** The shared stand-ins the instances were started with (SMTP_URL, OPENAI_COMPATIBLE_BASE_URL, WHATSAPP_API_BASE_URL, TELEGRAM_API_BASE_URL). */
  smtp: SmtpStandIn;
  model: ModelServer;
  whatsapp: StandIn;
  telegram: StandIn;
  /** The instances' APP_SECRET etc. are not needed by loads; the environment they were started with is. */
  env: Record<string, string>;
  /** Load multiplier (--rate): 1 is the default steady rate for a 2-core machine. */
  scale: number;
  /** How long the load phase lasts (--duration), ms. */
  durationMs: number;
  /** Aborted when the load phase ends (stop sending, end stream readers). */
  signal: AbortSignal;
  log(message: string): void;
  /** Count something for the report ("webhook deliveries", "stream reconnects", …). */
  count(name: string, by?: number): void;
}

/** One promise's outcome: how many things were checked, and the ids of those that broke it. */
export interface Check {
  promise: string;
  count: number;
  violations: string[];
}

export interface Load {
  readonly name: string;
  /** Creates what the load needs, on a healthy system before faults start. */
  setup(world: World): Promise<void>;
  /** Units of traffic per second at scale 1 (tick is called this often, spread evenly). */
  readonly ratePerSecond: number;
  /** One unit of traffic. A failed request is not an error: the load keeps only what was accepted. */
  tick(world: World): Promise<void>;
  /**
   * Optional long-lived work started after setup (stream readers, a poller deciding approvals),
   * ending when world.signal aborts.
   */
  background?(world: World): Promise<void>;
  /**
   * After the load and the faults ended, with every instance up: wait (bounded, `deadline` epoch
   * ms) for the system to finish what it accepted, then check the load's promises.
   */
  check(world: World, deadline: number): Promise<Check[]>;
}
