import type { Command } from 'commander';
import { createClient, type AutomationClient } from '../client.ts';
import { ApiError } from '../errors.ts';
import { configPath, readConfig, writeConfig, type StoredConfig } from './config.ts';

export interface GlobalOptions {
  url?: string;
  apiKey?: string;
  org?: string;
  json?: boolean;
}

/** A failure the CLI reports in one line (and with --json as `{ "error": … }`), exit code 1. */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

export function globals(command: Command): GlobalOptions {
  return command.optsWithGlobals() as GlobalOptions;
}

/** The server URL and credentials: flags, then AUTOMATION_URL / AUTOMATION_API_KEY / AUTOMATION_ORG, then the config file. */
export function settings(options: GlobalOptions, env: NodeJS.ProcessEnv = process.env) {
  const stored = readConfig();
  const url = options.url ?? env.AUTOMATION_URL ?? stored.url;
  const apiKey = options.apiKey ?? env.AUTOMATION_API_KEY ?? stored.apiKey;
  const orgId = options.org ?? env.AUTOMATION_ORG ?? stored.orgId;
  return { stored, url, apiKey, orgId };
}

/** A client with the configured credentials; a renewed session is written back to the config file. */
export function clientFor(options: GlobalOptions, { auth = true } = {}): AutomationClient {
  const { stored, url, apiKey, orgId } = settings(options);
  if (!url) throw new CliError('No server URL: run `automation login --url …`, `automation config set --url …`, or set AUTOMATION_URL');
  const useSession = !apiKey && stored.refreshToken && (!stored.url || stored.url === url);
  if (auth && !apiKey && !useSession)
    throw new CliError('Not signed in: run `automation login`, `automation config set --api-key …`, or set AUTOMATION_API_KEY');
  return createClient({
    baseUrl: url,
    orgId,
    ...(apiKey
      ? { apiKey }
      : useSession
        ? {
            accessToken: stored.accessToken,
            refreshToken: stored.refreshToken,
            onTokens: (tokens) =>
              writeConfig({ ...readConfig(), accessToken: tokens.accessToken, refreshToken: tokens.refreshToken ?? readConfig().refreshToken }),
          }
        : {}),
  });
}

/** The organization a command acts on: --org, AUTOMATION_ORG, the stored one, else the caller's only (or first) one. */
export async function orgOf(client: AutomationClient): Promise<string> {
  if (client.orgId) return client.orgId;
  const orgs = await client.ops.listOrgs();
  const first = orgs[0];
  if (!first) throw new CliError('You belong to no organization: create one with `automation orgs create --name …`');
  if (orgs.length > 1) process.stderr.write(`note: using organization ${first.id} (${first.name}); choose one with --org or \`automation orgs use <id>\`\n`);
  client.orgId = first.id;
  return first.id;
}

export function updateConfig(change: Partial<StoredConfig>): StoredConfig {
  const next = { ...readConfig(), ...change };
  writeConfig(next);
  return next;
}

export { configPath };

/** Prints a result: JSON with --json, else the human text. */
export function output(options: GlobalOptions, data: unknown, human: () => string | string[]): void {
  if (options.json) {
    process.stdout.write(JSON.stringify(data ?? null, null, 2) + '\n');
    return;
  }
  const text = human();
  process.stdout.write((Array.isArray(text) ? text.join('\n') : text) + '\n');
}

/** A plain table of rows (first row: the header). */
export function table(rows: (string | number | boolean | null | undefined)[][]): string {
  const cells = rows.map((r) => r.map((c) => (c === null || c === undefined ? '' : String(c))));
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}

/** How a failure is reported: one line to stderr (or the error body as JSON with --json). */
export function reportError(error: unknown, json: boolean): number {
  if (error instanceof ApiError) {
    if (json) process.stderr.write(JSON.stringify({ error: { status: error.status, ...error.body } }, null, 2) + '\n');
    else {
      const message = typeof error.body.message === 'string' ? error.body.message : error.message;
      process.stderr.write(`error: ${message} (${error.status}${error.code ? ` ${error.code}` : ''})\n`);
      const details = error.details;
      if (Array.isArray(details))
        for (const d of details.slice(0, 10) as { field?: string; message?: string }[])
          process.stderr.write(`  ${d.field ?? ''} ${d.message ?? JSON.stringify(d)}\n`);
      if (error.status === 401) process.stderr.write('  sign in again with `automation login`, or check the API key\n');
    }
    return 1;
  }
  const message = error instanceof Error ? error.message : String(error);
  if (json) process.stderr.write(JSON.stringify({ error: { message } }) + '\n');
  else process.stderr.write(`error: ${message}\n`);
  return error instanceof CliError ? error.exitCode : 1;
}

/** A one-line progress bar on stderr, drawn only on a terminal (and never with --json). */
export class Progress {
  private readonly on: boolean;
  private readonly total: number;
  private readonly label: string;
  private last = '';
  constructor(options: GlobalOptions, total: number, label: string) {
    this.on = !options.json && Boolean(process.stderr.isTTY);
    this.total = total;
    this.label = label;
  }
  update(done: number, note = ''): void {
    if (!this.on) return;
    const width = 30;
    const ratio = this.total > 0 ? Math.min(1, done / this.total) : 0;
    const filled = Math.round(ratio * width);
    const line = `${this.label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done.toLocaleString('en-US')}/${this.total.toLocaleString('en-US')} ${note}`;
    if (line === this.last) return;
    this.last = line;
    process.stderr.write(`\r${line}\x1b[K`);
  }
  done(): void {
    if (this.on && this.last) process.stderr.write('\n');
  }
}

/** Reads a line from the terminal without echoing it (a password), or one line of piped stdin. */
export async function readSecret(prompt: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    let text = '';
    for await (const chunk of stdin) {
      text += String(chunk);
      if (text.includes('\n')) break;
    }
    return text.split(/\r?\n/)[0] ?? '';
  }
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.resume();
  stdin.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    let value = '';
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n' || char === '\u0004') {
          finish();
          resolve(value);
          return;
        }
        if (char === '\u0003') {
          finish();
          reject(new CliError('cancelled', 130));
          return;
        }
        if (char === '\u007f' || char === '\b') value = value.slice(0, -1);
        else value += char;
      }
    };
    const finish = () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
    };
    stdin.on('data', onData);
  });
}
