import type { RouteOptions } from 'fastify';
import type { Access } from '../context.ts';
import { RESOURCE_EXAMPLES } from './openapi-examples.ts';

/**
 * What the route schemas cannot say by themselves, added to the OpenAPI document in one place so
 * that every route gets it the same way (docs/openapi.md): operation ids, the access each operation
 * needs, the tag list, success descriptions, rate-limit headers, integer formats and examples.
 */

/** Top-level tags, in the order the reference shows them. */
export const TAGS: { name: string; description: string }[] = [
  { name: 'Authentication', description: 'Accounts and sessions: register, log in, refresh and revoke tokens, the current user.' },
  { name: 'Organizations', description: 'Organizations visible to the caller, and the one named in the path.' },
  { name: 'Projects', description: 'Projects divide an organization; an API key can be bound to one.' },
  { name: 'Members', description: 'Users of an organization and their roles (owner, admin, member, viewer).' },
  { name: 'Invitations', description: 'Invitations to join an organization, accepted with a single-use link.' },
  { name: 'API keys', description: 'Server-to-server keys with scopes; the secret is shown once.' },
  { name: 'Leads', description: 'Leads with de-duplication on email, phone and website; search, bulk actions, import, history.' },
  { name: 'Workflows', description: 'Workflow graphs of typed nodes, their node catalog and the public webhook trigger.' },
  { name: 'Runs', description: 'Workflow runs: status, steps with their items, cancel.' },
  { name: 'Approvals', description: 'Human approval steps that pause a run until approved, rejected or expired.' },
  { name: 'Templates', description: 'Built-in workflow templates to start from.' },
  { name: 'Secrets', description: 'Organization secrets for workflow steps (`$secrets.NAME`); values are never readable.' },
  { name: 'Agents', description: 'AI agents: saved agents, agent types, agent runs and their steps.' },
  { name: 'Reports', description: 'Reports written by agents, with recommendations that can be applied.' },
  { name: 'Content', description: 'Social posts: drafts, generation, approval, publishing, calendar.' },
  { name: 'Media', description: 'Uploaded images and videos, served from signed URLs.' },
  { name: 'Integrations', description: 'Connected accounts (LinkedIn, X, …) that content is published through.' },
  { name: 'Analytics', description: 'Synced GA4 and Search Console numbers by day, and threshold rules that alert on them.' },
  { name: 'Notifications', description: 'Notifications for organization members.' },
  { name: 'Inboxes', description: 'Channel accounts (api, web chat, WhatsApp, Telegram, e-mail) with their inbound URL; credentials encrypted at rest.' },
  { name: 'Conversations', description: 'Threads with contacts: messages, replies and notes, handoff, assignment, read state, close and reopen, statistics.' },
  {
    name: 'Campaigns',
    description:
      'Outreach sequences through e-mail, WhatsApp and Telegram inboxes: audiences, steps, limits and sending windows, recipients and their outcomes; one-click unsubscribe.',
  },
  { name: 'Suppressions', description: 'Addresses that receive no outreach on a channel: unsubscribed, bounced, complained, stopped or added by hand.' },
  { name: 'Webhook endpoints', description: 'Signed outbound webhooks: endpoints, deliveries, test and resend.' },
  { name: 'Streams', description: 'Server-Sent Events: the organization stream, run and agent-run streams.' },
  { name: 'Usage', description: 'AI usage and cost; the monthly budget.' },
  { name: 'Usage and statistics', description: 'Aggregated statistics over leads, runs, content and usage.' },
  { name: 'Plan', description: "The organization's plan, its features and limits." },
];

/** Path segments that name a collection although they do not end in "s". */
const UNCOUNTABLE = new Set(['content', 'media']);
/** Path segments that name one thing (`GET /usage` getUsage, `PUT /budget` setBudget). */
const SINGLETONS = new Set(['usage', 'stats', 'budget', 'plan', 'auth', 'me']);

/** Names the derivation would get wrong or ambiguous, by `METHOD path` (path after /api/v1). */
const OPERATION_ID_OVERRIDES: Record<string, string> = {
  'POST /auth/register': 'register',
  'POST /auth/login': 'login',
  'POST /auth/refresh': 'refreshTokens',
  'POST /auth/logout': 'logout',
  'GET /auth/me': 'getCurrentUser',
  'POST /auth/password': 'changePassword',
  'POST /auth/password-reset': 'requestPasswordReset',
  'POST /auth/password-reset/confirm': 'confirmPasswordReset',
  'POST /auth/invitations/accept': 'acceptInvitation',
  'GET /media/:mediaId/:file': 'downloadMediaFile',
  'POST /hooks/:workflowId/:token': 'triggerWorkflowWebhook',
  'GET /orgs/:orgId/events': 'streamOrgEvents',
  'POST /orgs/:orgId/leads/bulk': 'bulkUpdateLeads',
  'POST /orgs/:orgId/notifications/:id/read': 'markNotificationRead',
  'POST /orgs/:orgId/workflows/:id/webhook-token': 'rotateWorkflowWebhookToken',
  'POST /orgs/:orgId/agents/run': 'runAdHocAgent',
  'GET /orgs/:orgId/usage': 'getUsage',
  'POST /orgs/:orgId/stats/query': 'queryStats',
};

const pascal = (word: string) =>
  word
    .split('-')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
function singular(word: string): string {
  if (UNCOUNTABLE.has(word) || SINGLETONS.has(word)) return word;
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.endsWith('xes')) return word.slice(0, -2);
  if (word.endsWith('s')) return word.slice(0, -1);
  return word;
}

/**
 * A stable camelCase name from method and path: `GET /leads` listLeads, `POST /leads` createLead,
 * `GET|PATCH|DELETE /leads/:id` getLead/updateLead/deleteLead, `PUT /secrets/:name` setSecret,
 * `GET /leads/:id/events` listLeadEvents, `POST /workflows/:id/run` runWorkflow,
 * `POST /leads/import` importLeads, `GET /leads/stats` getLeadStats, SSE routes stream….
 */
export function operationIdFor(method: string, url: string, sse = false): string {
  const path = url.replace(/^\/api\/v1/, '');
  const override = OPERATION_ID_OVERRIDES[`${method} ${path}`];
  if (override) return override;
  const statics: { name: string; hasId: boolean }[] = [];
  for (const part of path
    .replace(/^\/orgs\/:orgId(?=\/)/, '')
    .split('/')
    .filter(Boolean)) {
    if (part.startsWith(':')) {
      if (statics.length > 0) statics[statics.length - 1]!.hasId = true;
    } else {
      statics.push({ name: part, hasId: false });
    }
  }
  const last = statics[statics.length - 1]!;
  const before = statics.slice(0, -1);
  const owners = before.map((s) => pascal(singular(s.name))).join('');
  const camel = (verb: string, rest: string) => `${verb}${rest}`.replace(/^./, (c) => c.toLowerCase());
  if (sse) return camel('stream', `${owners}${pascal(last.name)}`);
  if (last.hasId) {
    const verb = { GET: 'get', PATCH: 'update', PUT: 'set', DELETE: 'delete', POST: 'post' }[method] ?? method.toLowerCase();
    return camel(verb, `${owners}${pascal(singular(last.name))}`);
  }
  const parent = before[before.length - 1];
  // A collection: the first segment, or one under an item (`/leads/:id/events`).
  if (!parent || (parent.hasId && method === 'GET')) {
    const collection = !SINGLETONS.has(last.name) && (last.name.endsWith('s') || UNCOUNTABLE.has(last.name));
    if (method === 'GET') return camel(collection ? 'list' : 'get', `${owners}${pascal(last.name)}`);
    if (method === 'POST') return camel('create', `${owners}${pascal(singular(last.name))}`);
    if (method === 'PUT') return camel('set', `${owners}${pascal(singular(last.name))}`);
    if (method === 'DELETE') return camel('delete', `${owners}${pascal(singular(last.name))}`);
  }
  // A collection under an item: `POST /conversations/:id/messages` createConversationMessage.
  if (method === 'POST' && parent?.hasId && !SINGLETONS.has(last.name) && /^[a-z]+s$/.test(last.name))
    return camel('create', `${owners}${pascal(singular(last.name))}`);
  // An action: on an item (`POST /workflows/:id/run` runWorkflow, `…/apply-recommendation`
  // applyReportRecommendation) or on a collection (`POST /leads/import` importLeads).
  const [verb = '', ...noun] = last.name.split('-');
  if (method === 'GET') return camel('get', `${before.map((s) => pascal(singular(s.name))).join('')}${pascal(last.name)}`);
  if (!parent) return camel(verb, noun.map(pascal).join(''));
  const object = parent.hasId
    ? owners
    : `${before
        .slice(0, -1)
        .map((s) => pascal(singular(s.name)))
        .join('')}${pascal(parent.name)}`;
  return camel(verb, `${object}${noun.map(pascal).join('')}`);
}

/** Access of the routes outside /orgs/:orgId that decide it in their handlers. */
const ACCESS_OVERRIDES: Record<string, string> = {
  'GET /media/:mediaId/:file': 'No credentials: the signed file name in the URL (as the upload returned it) is the credential.',
  'POST /hooks/:workflowId/:token': 'No credentials: the secret token in the path is the credential (a new one: `POST …/workflows/:id/webhook-token`).',
  'GET /auth/me': 'A user session (access token); API keys are refused (403).',
  'POST /auth/password': 'A user session (access token); API keys are refused (403).',
  'POST /orgs': 'A user session (access token); API keys are refused (403).',
  'GET /orgs': 'Any valid credential: a user sees their organizations, an API key its own.',
};

/** Who may call an operation, as a sentence and as the list of API-key scopes (any one suffices). */
export function accessOf(access: Access | undefined, isPublic: boolean, underOrg: boolean): { text: string; scopes: string[] } {
  if (isPublic) return { text: '**Access:** No credentials needed.', scopes: [] };
  if (!access) {
    return {
      text: `**Access:** ${underOrg ? 'Any member of the organization, or any of its API keys.' : "Any valid credential (a user's access token or an API key); no scope needed."}`,
      scopes: [],
    };
  }
  const scopes = access.scope === undefined ? [] : Array.isArray(access.scope) ? access.scope : [access.scope];
  const sentences: string[] = [];
  if (access.admin) sentences.push('Only a user session of an owner or admin; API keys are refused (403).');
  else if (access.sessionOnly) sentences.push('Only a user session; API keys are refused (403).');
  else if (scopes.length === 0) sentences.push('Any member of the organization, or any of its API keys.');
  else sentences.push(`API keys need the scope ${scopes.map((s) => `\`${s}\``).join(' or ')}${scopes.includes('*') ? '' : ' (or `*`)'}.`);
  if (access.manage) sentences.push('Sessions must be an owner or admin.');
  const writes = access.write ?? scopes.some((s) => s.endsWith(':write'));
  if (writes && !access.admin) sentences.push('Viewers are refused (403).');
  if (access.orgLevel) sentences.push('Refused to API keys bound to a project (403).');
  return { text: `**Access:** ${sentences.join(' ')}`, scopes: access.admin || access.sessionOnly ? [] : scopes };
}

interface RouteTransformInput {
  schema: Record<string, unknown>;
  url: string;
  route: RouteOptions;
}

/** @fastify/swagger `transform`: per route, with its config at hand. Never mutates the route's schema. */
export function transformRoute({ schema, url, route }: RouteTransformInput): { schema: Record<string, unknown>; url: string } {
  if (!schema || schema.hide) return { schema, url };
  const method = (Array.isArray(route.method) ? route.method[0] : route.method) as string;
  const config = (route.config ?? {}) as { access?: Access; sse?: boolean };
  const security = schema.security as unknown[] | undefined;
  const isPublic = Array.isArray(security) && security.length === 0;
  const special = ACCESS_OVERRIDES[`${method} ${url.replace(/^\/api\/v1/, '')}`];
  const { text, scopes } = special ? { text: `**Access:** ${special}`, scopes: [] } : accessOf(config.access, isPublic, url.includes('/orgs/:orgId'));
  const description = [schema.description, text].filter(Boolean).join('\n\n');
  return {
    url,
    schema: {
      ...schema,
      operationId: schema.operationId ?? operationIdFor(method, url, config.sse === true),
      description,
      'x-required-scopes': scopes,
    },
  };
}

const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': {
    description:
      'Requests allowed in the current window: `RATE_LIMIT_MAX` a minute per credential (per client address without a valid one); the password routes have their own limit per address, `AUTH_RATE_LIMIT_MAX`.',
    schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 2_147_483_647 },
  },
  'RateLimit-Remaining': {
    description: 'Requests left in the current window.',
    schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 2_147_483_647 },
  },
  'RateLimit-Reset': {
    description: 'Seconds until the current window ends and the count starts again.',
    schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 2_147_483_647 },
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again.',
    schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 2_147_483_647 },
  },
};

type Json = Record<string, unknown>;
const INT32 = 2_147_483_647;

/** Integers say how large they get: int32 when their bounds fit, int64 otherwise (JSON: within 2^53). */
function addIntegerFormats(node: unknown): void {
  if (Array.isArray(node)) {
    for (const child of node) addIntegerFormats(child);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const schema = node as Json;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('integer') && schema.format === undefined) {
    const min = (schema.minimum ?? schema.exclusiveMinimum) as number | undefined;
    const max = (schema.maximum ?? schema.exclusiveMaximum) as number | undefined;
    schema.format = min !== undefined && max !== undefined && min >= -INT32 - 1 && max <= INT32 ? 'int32' : 'int64';
  }
  for (const value of Object.values(schema)) addIntegerFormats(value);
}

const human = (name: string) =>
  name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .replace(/\bapi\b/, 'API');
const pluralOf = (words: string) => (/[^aeiou]y$/.test(words) ? `${words.slice(0, -1)}ies` : words.endsWith('s') ? words : `${words}s`);
const refName = (schema: Json | undefined) => (typeof schema?.$ref === 'string' ? schema.$ref.split('/').pop()! : undefined);

/** Success descriptions that say more than the derivation can. */
const SUCCESS_OVERRIDES: Record<string, string> = {
  'createLead 200': 'An existing lead of the project matched on email, phone or website and was updated; `deduplicated.matchedOn` says which.',
  'createLead 201': 'Created: the new lead.',
  'setSecret 200': "Replaced: the secret's name and times (never its value).",
  'setSecret 201': "Created: the secret's name and times (never its value).",
  'runWorkflow 201': 'Started: the run record with status `QUEUED` (without steps); follow it with `GET …/runs/:runId/events`.',
  'runWorkflow 200': 'The run record with status `QUEUED` (without steps).',
  'listOrgs 200': 'The organizations of the caller as a JSON array, not a list envelope (a user has few; an API key sees its own). CONTRACT keeps this shape.',
  'listTemplates 200':
    'The built-in templates as a JSON array, not a list envelope: a short fixed catalog (CONTRACT §4). `GET …/templates/:id` gives one with its nodes and edges.',
  'getTemplate 200': 'The template with its full definition (`nodes`, `edges`, `active`): the workflow `POST …/templates/:id/use` creates from it.',
};

function describeBody(content: Json | undefined): string {
  if (!content) return 'no body';
  if (content['text/event-stream']) return 'a Server-Sent Events stream (`text/event-stream`) that stays open';
  const [type, media] = Object.entries(content)[0] as [string, Json];
  const schema = media?.schema as Json | undefined;
  if (type !== 'application/json') return `the body as \`${type}\``;
  const name = refName(schema);
  if (name) return `the ${human(name)}`;
  if (schema?.type === 'array') {
    const item = refName(schema.items as Json);
    return `${item ? `the ${pluralOf(human(item))}` : (shape(schema.items as Json, '[{ ', ' }]') ?? 'the items')} as a JSON array (not paged, not a list envelope)`;
  }
  const props = (schema?.properties ?? {}) as Json;
  const items = props.items as Json | undefined;
  if (items?.type === 'array' && props.total) {
    const item = refName(items.items as Json);
    return `a page of ${item ? pluralOf(human(item)) : (shape(items.items as Json, '{ ', ' }') ?? 'items')}: the list envelope \`{ items, total, page, pageSize }\``;
  }
  return shape(schema, '{ ', ' }') ?? 'a JSON object';
}

/** An inline object's top-level fields, e.g. `{ created, merged, rejected }`. */
function shape(schema: Json | undefined, open: string, close: string): string | undefined {
  const keys = Object.keys((schema?.properties ?? {}) as Json);
  return keys.length > 0 ? `\`${open}${keys.join(', ')}${close}\`` : undefined;
}

function successDescription(operationId: string, status: string, response: Json, componentDescriptions: Set<unknown>): string {
  const override = SUCCESS_OVERRIDES[`${operationId} ${status}`];
  if (override) return override;
  // A description the route wrote itself stays; the ones @fastify/swagger fills in do not.
  const own = response.description;
  if (typeof own === 'string' && own !== 'Default Response' && !componentDescriptions.has(own) && own !== 'text/event-stream') return own;
  const body = describeBody(response.content as Json | undefined);
  const sentence = body.charAt(0).toUpperCase() + body.slice(1);
  if (status === '204') return 'Done; no body.';
  if (status === '201') return `Created: ${body}.`;
  if (status === '202') return `Accepted: ${body}; the work continues in the background.`;
  return `${sentence}.`;
}

/**
 * @fastify/swagger `transformObject`: document-wide additions. Works on a copy, so the schemas the
 * routes validate and serialize with stay as they are.
 */
export function transformDocument(input: { openapiObject?: Json; swaggerObject?: Json }): Json {
  const doc = structuredClone((input.openapiObject ?? input.swaggerObject)!) as Json & { paths: Record<string, Record<string, Json>>; components: Json };
  const components = doc.components as { schemas?: Record<string, Json>; headers?: Json };
  components.headers = { ...components.headers, ...RATE_LIMIT_HEADERS };
  const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });

  const componentDescriptions = new Set(Object.values(components.schemas ?? {}).map((schema) => schema.description));
  const used = new Set<string>();
  for (const operations of Object.values(doc.paths)) {
    for (const operation of Object.values(operations)) {
      for (const tag of (operation.tags as string[] | undefined) ?? []) used.add(tag);
      const responses = (operation.responses ?? {}) as Record<string, Json>;
      for (const [status, response] of Object.entries(responses)) {
        // Every API route is rate limited (the limit hook runs before anything else answers).
        response.headers = {
          ...(response.headers as Json),
          'RateLimit-Limit': ref('RateLimit-Limit'),
          'RateLimit-Remaining': ref('RateLimit-Remaining'),
          'RateLimit-Reset': ref('RateLimit-Reset'),
        };
        if (status === '429') (response.headers as Json)['Retry-After'] = ref('Retry-After');
        if (/^2/.test(status)) response.description = successDescription(String(operation.operationId), status, response, componentDescriptions);
      }
    }
  }
  const known = new Set(TAGS.map((t) => t.name));
  doc.tags = [...TAGS.filter((t) => used.has(t.name)), ...[...used].filter((t) => !known.has(t)).map((name) => ({ name }))];

  for (const [name, examples] of Object.entries(RESOURCE_EXAMPLES)) {
    const schema = components.schemas?.[name];
    if (schema) schema.examples = examples;
  }
  addIntegerFormats(doc.paths);
  addIntegerFormats(components.schemas);
  return doc;
}
