import type { Instance } from './instances.ts';
import type { Answer, Api, RequestOptions } from './world.ts';

/** One 5xx answer, kept with its time to tell whether PostgreSQL was down then. */
export interface ServerError {
  at: number;
  routeClass: string;
  status: number;
  instance: number;
  body: string;
}

/**
 * What every request of the run answered: latencies per route class and time window (for the
 * soak's flatness), the 5xx answers with their times, and the requests that got no answer.
 */
export class Recorder {
  /** The load's start: windows count from here; setup's requests before it are in no window. */
  started = Date.now();
  /** windows[w].get(routeClass) = latencies (ms) of the requests answered in window w. */
  readonly windows: Map<string, number[]>[] = [];
  readonly serverErrors: ServerError[] = [];
  readonly unanswered = new Map<string, number>();
  readonly statuses = new Map<string, Map<number, number>>();

  readonly windowMs: number;

  constructor(windowMs: number) {
    this.windowMs = windowMs;
  }

  window(at: number): number {
    return Math.floor((at - this.started) / this.windowMs);
  }

  record(routeClass: string, answer: Answer, at: number, body: string): void {
    const byStatus = this.statuses.get(routeClass) ?? new Map<number, number>();
    byStatus.set(answer.status, (byStatus.get(answer.status) ?? 0) + 1);
    this.statuses.set(routeClass, byStatus);
    if (answer.status === 0) {
      this.unanswered.set(routeClass, (this.unanswered.get(routeClass) ?? 0) + 1);
      return;
    }
    if (answer.status >= 500) this.serverErrors.push({ at, routeClass, status: answer.status, instance: answer.instance, body: body.slice(0, 300) });
    if (at < this.started) return;
    const w = this.window(at);
    while (this.windows.length <= w) this.windows.push(new Map());
    const list = this.windows[w]!.get(routeClass) ?? [];
    list.push(answer.ms);
    this.windows[w]!.set(routeClass, list);
  }
}

/** "GET /leads/:id" from "/api/v1/orgs/<org>/leads/ld_01…": ids and tokens become ':id'. */
export function routeClassOf(method: string, path: string): string {
  const shape = path
    .split('?')[0]!
    .replace(/^\/api\/v1\/orgs\/[^/]+/, '')
    .replace(/^\/api\/v1/, '')
    .split('/')
    .map((part) => (/\d/.test(part) && part.length > 6 ? ':id' : part))
    .join('/');
  return `${method} ${shape || '/'}`;
}

export interface Credentials {
  email: string;
  password: string;
}

/**
 * The run's HTTP client: requests go to the live instances in turn (no proxy; a client that meets a
 * dead instance gets no answer, as a real one would), signed in as the bootstrap owner or with an
 * API key of every scope.
 */
export class ChaosApi implements Api {
  org = '';
  orgId = '';
  projectId = '';
  apiKey = '';
  private token = '';
  private turn = 0;

  private readonly instances: Instance[];
  private readonly recorder: Recorder;
  private readonly owner: Credentials;

  constructor(instances: Instance[], recorder: Recorder, owner: Credentials) {
    this.instances = instances;
    this.recorder = recorder;
    this.owner = owner;
  }

  private live(): Instance[] {
    const up = this.instances.filter((i) => i.state === 'up');
    return up.length ? up : this.instances;
  }

  private pick(instance?: number): Instance {
    if (instance !== undefined) return this.instances[instance]!;
    const live = this.live();
    return live[this.turn++ % live.length]!;
  }

  base(instance?: number): string {
    return `http://127.0.0.1:${this.pick(instance).port}`;
  }

  accessToken(): string {
    return this.token;
  }

  /** Signs in, finds the organization and its project, and makes the API key. */
  async signIn(): Promise<void> {
    const login = await this.until('POST', '/api/v1/auth/login', { auth: 'none', body: this.owner, routeClass: 'auth.login' });
    if (login.status !== 200) throw new Error(`login: ${login.status} ${login.text}`);
    this.token = login.json.tokens.accessToken;
    const me = await this.until('GET', '/api/v1/auth/me');
    this.orgId = me.json.memberships[0].organizationId;
    this.org = `/api/v1/orgs/${this.orgId}`;
    const projects = await this.until('GET', `${this.org}/projects`);
    const list = (Array.isArray(projects.json) ? projects.json : projects.json.items) as { id: string; name: string }[];
    this.projectId = list[0]!.id;
    if (!this.apiKey) {
      const key = await this.until('POST', `${this.org}/api-keys`, { body: { name: 'chaos', scopes: ['*'] } });
      if (key.status !== 201) throw new Error(`api key: ${key.status} ${key.text}`);
      this.apiKey = key.json.key;
    }
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<Answer> {
    const target = this.pick(options.instance);
    const headers: Record<string, string> = { ...options.headers };
    const auth = options.auth ?? 'owner';
    if (auth === 'owner' && this.token) headers.authorization = `Bearer ${this.token}`;
    if (auth === 'key') headers['x-api-key'] = this.apiKey;
    let body: string | Buffer | FormData | undefined;
    if (options.raw !== undefined) {
      body = options.raw;
      if (options.contentType) headers['content-type'] = options.contentType;
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const at = Date.now();
    const started = performance.now();
    let answer: Answer;
    let text = '';
    try {
      const res = await fetch(`http://127.0.0.1:${target.port}${path}`, {
        method,
        headers,
        body: body as BodyInit | undefined,
        signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
      });
      text = await res.text();
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      answer = { status: res.status, json, text, headers: res.headers, ms: performance.now() - started, instance: target.index };
    } catch {
      answer = { status: 0, json: undefined, text: '', headers: new Headers(), ms: performance.now() - started, instance: target.index };
    }
    this.recorder.record(options.routeClass ?? routeClassOf(method, path), answer, at, text);
    return answer;
  }

  async until(method: string, path: string, options: RequestOptions & { withinMs?: number } = {}): Promise<Answer> {
    const deadline = Date.now() + (options.withinMs ?? 120_000);
    for (;;) {
      const answer = await this.request(method, path, options);
      const retry = answer.status === 0 || answer.status >= 500 || answer.status === 429;
      if (!retry || Date.now() > deadline) return answer;
      await new Promise((r) => setTimeout(r, 250 + Math.random() * 500));
    }
  }
}
