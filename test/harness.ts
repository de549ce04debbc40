import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../src/app.ts';
import { loadConfig, type Config } from '../src/config.ts';
import type { Clock } from '../src/platform/clock.ts';
import type { Database } from '../src/platform/db.ts';
import type { App } from '../src/platform/http/types.ts';
import type { Role } from '../src/modules/orgs/service.ts';
import { memberships } from '../src/modules/orgs/tables.ts';
import { newId } from '../src/platform/ids.ts';
import { freshDatabase } from './database.ts';

export interface Credentials {
  token?: string;
  apiKey?: string;
}

export interface OrgFixture {
  orgId: string;
  projectId: string;
  ownerId: string;
  ownerEmail: string;
  password: string;
  /** Owner's access token. */
  token: string;
  refreshToken: string;
  /** An API key with scope `*`. */
  apiKey: string;
}

export interface TestApp {
  app: App;
  database: Database;
  config: Config;
  orgA: OrgFixture;
  orgB: OrgFixture;
  /** app.inject with credentials: `{ token }` or `{ apiKey }`. */
  call(options: InjectOptions & { auth?: Credentials }): Promise<LightMyRequestResponse>;
  /** A user with the given role in an organization, and their token. */
  member(orgId: string, role: Role): Promise<{ userId: string; token: string }>;
  /** An API key of an organization with the given scopes. */
  key(orgId: string, scopes: string[], projectId?: string): Promise<string>;
  close(): Promise<void>;
  /** Closes the app (not the database) and builds a new one on the same database, as a restart would. */
  restart(options?: Pick<TestAppOptions, 'env' | 'workers'>): Promise<App>;
}

export const TEST_PASSWORD = 'correct horse battery staple';

export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    APP_SECRET: 'test-secret-that-is-long-enough',
    DATA_DIR: '/tmp/svc-test-data',
    RATE_LIMIT_MAX: '100000',
    AUTH_RATE_LIMIT_MAX: '100000',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    ...overrides,
  });
}

let counter = 0;

export interface TestAppOptions {
  env?: Record<string, string>;
  clock?: Clock;
  /** Start the background workers (default true). */
  workers?: boolean;
}

export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = await freshDatabase();
  const config = testConfig(options.env);
  const app = await buildApp({ config, database, clock: options.clock, logger: false, workers: options.workers });
  await app.ready();
  const { auth, apiKeys, orgs } = app.services;

  const call: TestApp['call'] = (opts) => {
    const headers: Record<string, string> = { ...(opts.headers as Record<string, string> | undefined) };
    if (opts.auth?.token) headers.authorization = `Bearer ${opts.auth.token}`;
    if (opts.auth?.apiKey) headers['x-api-key'] = opts.auth.apiKey;
    const { auth: _auth, ...rest } = opts;
    return app.inject({ ...rest, headers });
  };

  const makeOrg = async (label: string): Promise<OrgFixture> => {
    const email = `owner-${label.toLowerCase()}-${++counter}-${Date.now()}@example.com`;
    const { user, organization } = await auth.createUserWithOrg({ email, password: TEST_PASSWORD, name: `Owner ${label}`, organizationName: `Org ${label}` });
    const login = await auth.login(email, TEST_PASSWORD);
    const key = await apiKeys.create(organization.id, { name: 'all', scopes: ['*'] });
    return {
      orgId: organization.id,
      projectId: await orgs.defaultProjectId(organization.id),
      ownerId: user.id,
      ownerEmail: email,
      password: TEST_PASSWORD,
      token: login.tokens.accessToken,
      refreshToken: login.tokens.refreshToken,
      apiKey: key.key,
    };
  };

  const orgA = await makeOrg('A');
  const orgB = await makeOrg('B');

  return {
    app,
    database,
    config,
    orgA,
    orgB,
    call,
    member: async (orgId, role) => {
      const email = `member-${role}-${++counter}-${Date.now()}@example.com`;
      const { user } = await auth.createUserWithOrg({ email, password: TEST_PASSWORD });
      await database.db.insert(memberships).values({ id: newId('membership'), orgId, userId: user.id, role });
      const login = await auth.login(email, TEST_PASSWORD);
      return { userId: user.id, token: login.tokens.accessToken };
    },
    key: async (orgId, scopes, projectId) => (await apiKeys.create(orgId, { name: 'test', scopes, projectId })).key,
    close: async () => {
      await app.close();
      await database.close();
    },
    restart: async (restartOptions = {}) => {
      await app.close();
      const next = await buildApp({
        config: testConfig(restartOptions.env ?? options.env),
        database,
        clock: options.clock,
        logger: false,
        workers: restartOptions.workers,
      });
      await next.ready();
      return next;
    },
  };
}
