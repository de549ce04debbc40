/**
 * What a logged error may carry. Database errors come with the failed statement's parameters
 * (drizzle's `params`, PGlite's `params`, the message "Failed query: … params: …", and the
 * server's `detail` "Key (email)=(…)"): lead PII and key hashes. They are logged by statement
 * (verb and table), SQLSTATE and constraint instead; other errors keep their usual fields.
 */
const DROPPED = new Set(['params', 'parameters', 'values', 'detail', 'where', 'internalQuery', 'queryOptions', 'query', 'cause', 'message', 'stack', 'name']);
const MAX_MESSAGE = 300;

/** `insert "leads"`, `select "api_keys"`: which statement failed, without its text or values. */
export function statementName(sql: string): string {
  const name = '((?:"[^"]+"|\\w+)(?:\\.(?:"[^"]+"|\\w+))?)';
  // A write names its target even behind a WITH; a read its first table.
  const write = new RegExp(`\\b(insert)\\s+into\\s+${name}|\\b(update)\\s+(?:only\\s+)?${name}\\s+set\\b|\\b(delete)\\s+from\\s+${name}`, 'i').exec(sql);
  if (write) {
    const [verb, table] = write[1] ? [write[1], write[2]] : write[3] ? [write[3], write[4]] : [write[5], write[6]];
    return `${verb!.toLowerCase()} ${table}`;
  }
  const verb = /^\s*(\w+)/.exec(sql)?.[1]?.toLowerCase() ?? 'query';
  const table = new RegExp(`\\bfrom\\s+${name}`, 'i').exec(sql)?.[1];
  return table ? `${verb} ${table}` : verb;
}

function isQueryError(error: Record<string, unknown>): boolean {
  return typeof error.query === 'string' || Array.isArray(error.params) || (typeof error.message === 'string' && error.message.startsWith('Failed query:'));
}

export interface LoggedError {
  type: string;
  message: string;
  stack: string;
  statement?: string;
  cause?: LoggedError;
  [key: string]: unknown;
}

export function serializeError(error: unknown, depth = 0): LoggedError {
  if (!(error instanceof Error) && (error === null || typeof error !== 'object')) return { type: typeof error, message: String(error), stack: '' };
  const e = error as Error & Record<string, unknown>;
  // Bundled libraries (PGlite) have minified class names: their `name` says more then.
  const ctor = e.constructor?.name ?? '';
  const type = ctor.length > 2 ? ctor : typeof e.name === 'string' && e.name ? e.name : 'Error';
  const out: LoggedError = { type, message: '', stack: '' };
  const query = isQueryError(e);
  const sql =
    typeof e.query === 'string'
      ? e.query
      : typeof e.message === 'string' && e.message.startsWith('Failed query:')
        ? e.message.slice(14).split('\nparams:')[0]!
        : undefined;
  if (sql !== undefined) out.statement = statementName(sql);
  const message = String(e.message ?? '');
  // A database error names the bad value last: `invalid input syntax for type uuid: "…"`.
  const masked = typeof e.severity === 'string' ? message.replace(/: ".*"$/s, ': [value]') : message;
  out.message = (message.startsWith('Failed query:') ? 'Failed query' : masked).slice(0, MAX_MESSAGE);
  for (const [key, value] of Object.entries(e)) {
    if (DROPPED.has(key) || value === undefined || typeof value === 'function') continue;
    if (query && typeof value === 'object' && value !== null) continue;
    out[key] = value;
  }
  // The first line of a stack repeats the message: keep only the frames.
  const frames = typeof e.stack === 'string' ? e.stack.split('\n').filter((line) => /^\s+at /.test(line)) : [];
  out.stack = [`${type}: ${out.message}`, ...frames].join('\n');
  if (e.cause !== undefined && depth < 5) out.cause = serializeError(e.cause, depth + 1);
  return out;
}

/**
 * Whether log lines are written for a person (pino-pretty: colours, local times, one readable line
 * per entry) rather than as JSON lines: `LOG_FORMAT=pretty`, or `auto` when standard output is a
 * terminal (a developer's `npm start`). A pipe, a file or a container's log collector gets JSON.
 */
export function prettyLogs(format: 'auto' | 'json' | 'pretty', stdoutIsTerminal = Boolean(process.stdout.isTTY)): boolean {
  return format === 'pretty' || (format === 'auto' && stdoutIsTerminal);
}

/** pino's pretty transport (a worker thread writing to standard output), as pino and Fastify take it. */
export const PRETTY_TRANSPORT = {
  target: 'pino-pretty',
  options: { destination: 1, colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: false },
} as const;
