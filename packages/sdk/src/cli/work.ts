import { createReadStream, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parse } from 'csv-parse';
import type { Command } from 'commander';
import type { AutomationClient, Schemas } from '../client.ts';
import { ApiError } from '../errors.ts';
import { streamRunEvents, type RunStreamEvent } from '../streams.ts';
import { CliError, clientFor, globals, orgOf, output, Progress, table, type GlobalOptions } from './context.ts';

type Delivery = Schemas['WebhookDelivery'];
type Workflow = Schemas['Workflow'];
type Run = Schemas['Run'];

/** The most rows one POST …/leads/import takes (CONTRACT §3). */
export const IMPORT_MAX_ROWS = 10_000;
/** The format tag of an exported workflow file. */
export const WORKFLOW_FILE_FORMAT = 'automation.workflow/v1';

/** `2026-11-01`, an ISO timestamp, or a duration back from now: `90m`, `6h`, `2d`. */
export function parseSince(value: string, now = Date.now()): Date {
  const relative = /^(\d+)\s*(s|m|h|d|w)$/.exec(value.trim());
  if (relative) {
    const unit = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 }[relative[2] as 's'];
    return new Date(now - Number(relative[1]) * unit * 1000);
  }
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw new CliError(`--since: "${value}" is neither a time (2026-11-01, 2026-11-01T10:00:00Z) nor a duration (90m, 6h, 2d)`);
  return date;
}

/** Every page of a list envelope, newest first, until `stop` says so. */
async function* pages<T>(fetchPage: (page: number) => Promise<{ items: T[]; total: number; pageSize: number }>): AsyncGenerator<T> {
  for (let page = 1; ; page++) {
    const envelope = await fetchPage(page);
    for (const item of envelope.items) yield item;
    if (envelope.items.length < envelope.pageSize || page * envelope.pageSize >= envelope.total) return;
  }
}

function readJsonArg(value: string | undefined): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  const text = value.startsWith('@') ? readFileSync(value.slice(1), 'utf8') : value;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    throw new CliError(`--input is not JSON: ${(error as Error).message}`);
  }
}

export function registerWorkCommands(cli: Command): void {
  // ---- webhook endpoints ----
  const webhooks = cli.command('webhooks').description('webhook endpoints: list, test, deliveries, replay failed deliveries');
  webhooks
    .command('list')
    .description('the webhook endpoints')
    .action(async (_opts: unknown, command: Command) => {
      const g = globals(command);
      const client = clientFor(g);
      const orgId = await orgOf(client);
      const list: Schemas['WebhookEndpoint'][] = [];
      for await (const e of pages((page) => client.ops.listWebhookEndpoints({ path: { orgId }, query: { page, pageSize: 100 } }))) list.push(e);
      output(g, list, () =>
        list.length
          ? table([
              ['id', 'url', 'events', 'active', 'failures'],
              ...list.map((e) => [
                e.id,
                e.url,
                e.events.join(','),
                e.active ? 'yes' : `no${e.disabledReason ? ` (${e.disabledReason})` : ''}`,
                e.consecutiveFailures,
              ]),
            ])
          : 'No webhook endpoints',
      );
    });
  webhooks
    .command('test')
    .description('send a `ping` to an endpoint and show its answer')
    .argument('<endpointId>')
    .action(async (endpointId: string, _opts: unknown, command: Command) => {
      const g = globals(command);
      const client = clientFor(g);
      const result = await client.ops.testWebhookEndpoint({ path: { orgId: await orgOf(client), id: endpointId } });
      output(g, result, () =>
        result.ok
          ? `ok: ${result.statusCode} in ${result.durationMs} ms`
          : `failed: ${result.error ?? `HTTP ${result.statusCode}`} (${result.durationMs} ms)${result.responseBodyPreview ? `\n${result.responseBodyPreview}` : ''}`,
      );
      if (!result.ok) process.exitCode = 1;
    });
  webhooks
    .command('deliveries')
    .description("an endpoint's delivery attempts of the last 7 days, newest first")
    .argument('<endpointId>')
    .option('--status <status>', 'pending, succeeded or failed')
    .option('--limit <n>', 'at most this many', '50')
    .action(async (endpointId: string, opts: { status?: 'pending' | 'succeeded' | 'failed'; limit: string }, command: Command) => {
      const g = globals(command);
      const client = clientFor(g);
      const orgId = await orgOf(client);
      const limit = Number(opts.limit);
      const list: Delivery[] = [];
      for await (const d of pages((page) =>
        client.ops.listWebhookEndpointDeliveries({ path: { orgId, id: endpointId }, query: { page, pageSize: 100, status: opts.status } }),
      )) {
        list.push(d);
        if (list.length >= limit) break;
      }
      output(g, list, () =>
        list.length
          ? table([
              ['id', 'event', 'type', 'attempt', 'status', 'code', 'at'],
              ...list.map((d) => [d.id, d.eventId, d.eventType, d.attempt, d.status, d.statusCode ?? d.error ?? '', d.createdAt]),
            ])
          : 'No deliveries',
      );
    });
  webhooks
    .command('replay')
    .description('deliver again every event whose delivery failed since a time (one new delivery per event; skips events delivered since or still retrying)')
    .argument('<endpointId>')
    .requiredOption('--since <time>', 'a time (2026-11-01T10:00:00Z) or a duration back from now (90m, 6h, 2d)')
    .option('--dry-run', 'list what would be sent, send nothing')
    .action(async (endpointId: string, opts: { since: string; dryRun?: boolean }, command: Command) => {
      const g = globals(command);
      const client = clientFor(g);
      const orgId = await orgOf(client);
      const since = parseSince(opts.since);
      // Newest first: the first row seen of an event is its latest attempt.
      const latest = new Map<string, Delivery>();
      for await (const d of pages((page) => client.ops.listWebhookEndpointDeliveries({ path: { orgId, id: endpointId }, query: { page, pageSize: 100 } }))) {
        if (new Date(d.createdAt) < since) break;
        if (!latest.has(d.eventId)) latest.set(d.eventId, d);
      }
      const failed = [...latest.values()].filter((d) => d.status === 'failed').reverse();
      const resent: { eventId: string; eventType: string; failedDeliveryId: string; deliveryId?: string; error?: string }[] = [];
      for (const d of failed) {
        if (opts.dryRun) {
          resent.push({ eventId: d.eventId, eventType: d.eventType, failedDeliveryId: d.id });
          continue;
        }
        try {
          const next = await client.ops.resendWebhookEndpointDelivery({ path: { orgId, id: endpointId, deliveryId: d.id } });
          resent.push({ eventId: d.eventId, eventType: d.eventType, failedDeliveryId: d.id, deliveryId: next.id });
        } catch (error) {
          if (!(error instanceof ApiError)) throw error;
          resent.push({ eventId: d.eventId, eventType: d.eventType, failedDeliveryId: d.id, error: error.message });
        }
      }
      const errors = resent.filter((r) => r.error).length;
      output(g, { since: since.toISOString(), dryRun: Boolean(opts.dryRun), count: resent.length, errors, deliveries: resent }, () => [
        opts.dryRun
          ? `${resent.length} failed event(s) since ${since.toISOString()} would be sent again`
          : `Sent ${resent.length - errors} failed event(s) since ${since.toISOString()} again${errors ? `; ${errors} could not be queued` : ''}`,
        ...resent.map((r) => `  ${r.eventType} ${r.eventId}${r.deliveryId ? ` → ${r.deliveryId}` : ''}${r.error ? ` (error: ${r.error})` : ''}`),
      ]);
      if (errors) process.exitCode = 1;
    });

  // ---- workflows ----
  const workflows = cli.command('workflows').description('workflows: list, export, import, run');
  workflows
    .command('list')
    .description('the workflows')
    .action(async (_opts: unknown, command: Command) => {
      const g = globals(command);
      const client = clientFor(g);
      const orgId = await orgOf(client);
      const list: Workflow[] = [];
      for await (const w of pages((page) => client.ops.listWorkflows({ path: { orgId }, query: { page, pageSize: 100 } }))) list.push(w);
      output(g, list, () =>
        list.length
          ? table([['id', 'name', 'active', 'nodes', 'version'], ...list.map((w) => [w.id, w.name, w.active ? 'yes' : 'no', w.nodes.length, w.version])])
          : 'No workflows',
      );
    });
  workflows
    .command('export')
    .description('write a workflow (name, description, nodes, edges, budget) to a JSON file, or to stdout')
    .argument('<workflowId>')
    .option('-o, --output <file>', 'the file (default: stdout)')
    .action(async (workflowId: string, opts: { output?: string }, command: Command) => {
      const g = globals(command);
      const client = clientFor(g);
      const w = await client.ops.getWorkflow({ path: { orgId: await orgOf(client), id: workflowId } });
      const file = {
        format: WORKFLOW_FILE_FORMAT,
        name: w.name,
        description: w.description ?? null,
        active: w.active,
        budgetUsd: w.budgetUsd ?? null,
        nodes: w.nodes,
        edges: w.edges,
        exportedFrom: { id: w.id, version: w.version },
      };
      const text = JSON.stringify(file, null, 2) + '\n';
      if (!opts.output) {
        process.stdout.write(text);
        return;
      }
      writeFileSync(opts.output, text);
      output(
        g,
        { file: opts.output, workflowId: w.id, name: w.name, nodes: w.nodes.length },
        () => `Exported ${w.name} (${w.nodes.length} nodes) to ${opts.output}`,
      );
    });
  workflows
    .command('import')
    .description('create a workflow from an exported file (or update one with --update)')
    .argument('<file>')
    .option('--name <name>', "another name than the file's")
    .option('--project <projectId>', "the project (default: the organization's first)")
    .option('--update <workflowId>', "replace this workflow's nodes and edges instead of creating one")
    .action(async (path: string, opts: { name?: string; project?: string; update?: string }, command: Command) => {
      const g = globals(command);
      if (!existsSync(path)) throw new CliError(`No such file: ${path}`);
      let file: { format?: string; name?: string; description?: string | null; active?: boolean; budgetUsd?: number | null; nodes?: unknown; edges?: unknown };
      try {
        file = JSON.parse(readFileSync(path, 'utf8')) as typeof file;
      } catch (error) {
        throw new CliError(`${path} is not JSON: ${(error as Error).message}`);
      }
      if (!Array.isArray(file.nodes)) throw new CliError(`${path} is not a workflow file: it has no "nodes" list`);
      const client = clientFor(g);
      const orgId = await orgOf(client);
      type Body = NonNullable<Parameters<typeof client.ops.createWorkflow>[0]>['body'];
      const body = {
        name: opts.name ?? file.name ?? 'Imported workflow',
        nodes: file.nodes as Body['nodes'],
        edges: (file.edges ?? []) as Body['edges'],
        ...(file.description !== undefined ? { description: file.description } : {}),
        ...(file.budgetUsd !== undefined ? { budgetUsd: file.budgetUsd } : {}),
        ...(file.active !== undefined ? { active: file.active } : {}),
      };
      const w = opts.update
        ? await client.ops.updateWorkflow({ path: { orgId, id: opts.update }, body })
        : await client.ops.createWorkflow({ path: { orgId }, body: { ...body, ...(opts.project ? { projectId: opts.project } : {}) } });
      output(g, w, () => `${opts.update ? 'Updated' : 'Imported'} ${w.name} as ${w.id} (${w.nodes.length} nodes)`);
    });
  workflows
    .command('run')
    .description('start a run; with --follow, show its progress until it ends (exit code 1 unless it succeeded)')
    .argument('<workflowId>')
    .option('--input <json>', "the run's input: JSON, or @file.json")
    .option('--test', 'test mode: steps that send (publish, message, webhooks) only say what they would send')
    .option('-f, --follow', 'follow the run stream to the end')
    .action(async (workflowId: string, opts: { input?: string; test?: boolean; follow?: boolean }, command: Command) => {
      const g = globals(command);
      const client = clientFor(g);
      const orgId = await orgOf(client);
      const input = readJsonArg(opts.input);
      const run = await client.ops.runWorkflow({
        path: { orgId, id: workflowId },
        body: { ...(input ? { input } : {}), ...(opts.test ? { testMode: true } : {}) },
      });
      if (!opts.follow) {
        output(g, run, () => `Started run ${run.id} (${run.status}); follow it with \`automation runs follow ${run.id}\``);
        return;
      }
      if (!g.json) process.stderr.write(`Run ${run.id} started\n`);
      const final = await followRun(client, g, orgId, run.id, workflowId);
      output(g, final, () => summary(final));
      if (final.status !== 'SUCCEEDED') process.exitCode = 1;
    });

  const runs = cli.command('runs').description('workflow runs');
  runs
    .command('follow')
    .description("follow a run's stream until it ends (exit code 1 unless it succeeded)")
    .argument('<runId>')
    .action(async (runId: string, _opts: unknown, command: Command) => {
      const g = globals(command);
      const client = clientFor(g);
      const orgId = await orgOf(client);
      const run = await client.ops.getRun({ path: { orgId, runId } });
      const final = await followRun(client, g, orgId, runId, run.workflowId);
      output(g, final, () => summary(final));
      if (final.status !== 'SUCCEEDED') process.exitCode = 1;
    });
  runs
    .command('get')
    .description('a run with its steps')
    .argument('<runId>')
    .action(async (runId: string, _opts: unknown, command: Command) => {
      const g = globals(command);
      const client = clientFor(g);
      const run = await client.ops.getRun({ path: { orgId: await orgOf(client), runId } });
      output(g, run, () => summary(run));
    });

  // ---- leads ----
  const leads = cli.command('leads').description('leads');
  leads
    .command('import')
    .description(
      'import leads from a CSV file with a header row (name, email, phone, company, website, source, tags, custom.<key>), in chunks; de-duplicated like single creates',
    )
    .argument('<file>')
    .option('--chunk-size <n>', `rows per request (at most ${IMPORT_MAX_ROWS})`, '1000')
    .option('--dry-run', 'check every row and count, store nothing')
    .action(async (path: string, opts: { chunkSize: string; dryRun?: boolean }, command: Command) => {
      const g = globals(command);
      if (!existsSync(path)) throw new CliError(`No such file: ${path}`);
      const chunkSize = Number(opts.chunkSize);
      if (!Number.isInteger(chunkSize) || chunkSize < 1 || chunkSize > IMPORT_MAX_ROWS)
        throw new CliError(`--chunk-size must be a whole number from 1 to ${IMPORT_MAX_ROWS}`);
      const client = clientFor(g);
      const orgId = await orgOf(client);
      const result = await importCsv(client, g, orgId, path, chunkSize, Boolean(opts.dryRun));
      output(g, result, () => [
        `${opts.dryRun ? 'Checked' : 'Imported'} ${result.rows.toLocaleString('en-US')} rows: ${result.created.toLocaleString('en-US')} created, ${result.merged.toLocaleString('en-US')} merged, ${result.rejected.length.toLocaleString('en-US')} rejected${opts.dryRun ? ' (dry run: nothing stored)' : ''}`,
        ...result.rejected.slice(0, 20).map((r) => `  row ${r.row}: ${r.error}`),
        ...(result.rejected.length > 20 ? [`  … and ${result.rejected.length - 20} more (--json lists all)`] : []),
      ]);
    });
}

function summary(run: Run): string {
  const seconds =
    run.startedAt && run.finishedAt ? ` in ${((new Date(run.finishedAt).getTime() - new Date(run.startedAt).getTime()) / 1000).toFixed(1)} s` : '';
  const error = run.error ? `: ${run.error.message}${run.error.nodeId ? ` (node ${run.error.nodeId})` : ''}` : '';
  return `Run ${run.id} ${run.status}${seconds}; cost $${run.costUsd.toFixed(4)}${error}`;
}

/** Follows the run stream with a progress display on stderr; returns the final run record. */
async function followRun(client: AutomationClient, g: GlobalOptions, orgId: string, runId: string, workflowId: string): Promise<Run> {
  const workflow = await client.ops.getWorkflow({ path: { orgId, id: workflowId } }).catch(() => null);
  const names = new Map((workflow?.nodes ?? []).map((n) => [n.id, n.name ?? n.id]));
  const total = workflow?.nodes.length ?? 0;
  const finished = new Set<string>();
  const say = (line: string) => {
    if (!g.json) process.stderr.write(line + '\n');
  };
  const node = (id: string) => names.get(id) ?? id;
  const step = () => (total ? `[${finished.size}/${total}] ` : '');
  for await (const message of streamRunEvents(client, runId, {
    orgId,
    onReconnect: ({ since }) => say(`  (connection dropped; resuming after event ${since ?? 0})`),
  })) {
    const e = message as RunStreamEvent;
    switch (e.event) {
      case 'node.started':
        say(`${step()}▶ ${node(e.data.nodeId)}${e.data.attempt > 1 ? ` (attempt ${e.data.attempt})` : ''}`);
        break;
      case 'node.finished':
        finished.add(e.data.nodeId);
        say(`${step()}✓ ${node(e.data.nodeId)} — ${e.data.itemCount} item(s), ${e.data.durationMs} ms`);
        break;
      case 'node.failed': {
        const error = typeof e.data.error === 'string' ? e.data.error : e.data.error.message;
        say(`${step()}✗ ${node(e.data.nodeId)}: ${error}${e.data.willRetry ? ' (will retry)' : ''}`);
        break;
      }
      case 'node.waiting':
        say(`${step()}… ${node(e.data.nodeId)} waits${e.data.until ? ` until ${e.data.until}` : ' for an approval'}`);
        break;
      case 'log':
        say(`    ${e.data.level}: ${e.data.message}`);
        break;
      case 'run.finished':
        say(`Run ${e.data.status}`);
        break;
      default:
        break;
    }
  }
  return client.ops.getRun({ path: { orgId, runId } });
}

/** One CSV cell, quoted. */
const cell = (value: string) => `"${value.replace(/"/g, '""')}"`;

interface ImportSummary {
  file: string;
  rows: number;
  created: number;
  merged: number;
  /** `row` counts from 1, the first row under the header (blank lines are not counted, as the server counts them). */
  rejected: { row: number; error: string }[];
  dryRun: boolean;
}

/** Reads the CSV as a stream, sends it in chunks of `chunkSize` rows (each with the header) to POST …/leads/import. */
async function importCsv(client: AutomationClient, g: GlobalOptions, orgId: string, path: string, chunkSize: number, dryRun: boolean): Promise<ImportSummary> {
  // The server parses each chunk with the same rules (header, bom, blank lines skipped).
  const countRows = async () => {
    let n = -1;
    for await (const _ of createReadStream(path).pipe(parse({ bom: true, skip_empty_lines: true, relax_column_count: true, trim: true }))) n++;
    return Math.max(0, n);
  };
  const total = await countRows();
  const progress = new Progress(g, total, dryRun ? 'Checking' : 'Importing');
  const summary: ImportSummary = { file: path, rows: 0, created: 0, merged: 0, rejected: [], dryRun };
  let header: string | null = null;
  let chunk: string[] = [];
  let offset = 0;

  const send = async () => {
    if (!chunk.length) return;
    const body = `${header}\n${chunk.join('\n')}\n`;
    const rows = chunk.length;
    chunk = [];
    const result = await sendChunk(client, orgId, body, dryRun);
    summary.created += result.created;
    summary.merged += result.merged;
    for (const r of result.rejected) summary.rejected.push({ row: r.row + offset, error: r.error });
    offset += rows;
    summary.rows += rows;
    progress.update(
      summary.rows,
      `${summary.created.toLocaleString('en-US')} created, ${summary.merged.toLocaleString('en-US')} merged, ${summary.rejected.length.toLocaleString('en-US')} rejected`,
    );
  };

  progress.update(0);
  for await (const record of createReadStream(path).pipe(parse({ bom: true, skip_empty_lines: true, relax_column_count: true, trim: true }))) {
    const line = (record as string[]).map(cell).join(',');
    if (header === null) {
      header = line;
      continue;
    }
    chunk.push(line);
    if (chunk.length >= chunkSize) await send();
  }
  if (header === null) throw new CliError(`${path} is empty: it needs a header row (name, email, phone, company, website, source, tags, custom.<key>)`);
  await send();
  progress.done();
  return summary;
}

/** One chunk; a 429 waits its Retry-After and tries again (a few times). */
async function sendChunk(
  client: AutomationClient,
  orgId: string,
  csv: string,
  dryRun: boolean,
): Promise<{ created: number; merged: number; rejected: { row: number; error: string }[] }> {
  for (let attempt = 1; ; attempt++) {
    const { data, error, response } = await client.POST('/api/v1/orgs/{orgId}/leads/import', {
      params: { path: { orgId }, query: dryRun ? { dryRun: true } : {} },
      body: csv as never,
      bodySerializer: (b: unknown) => b as string,
      headers: { 'content-type': 'text/csv' },
    });
    if (response.ok && data) return data;
    const apiError = new ApiError({ status: response.status, body: error, method: 'POST', url: response.url, retryAfter: response.headers.get('retry-after') });
    if (response.status === 429 && attempt < 5 && apiError.retryAfter !== undefined && apiError.retryAfter <= 60) {
      await new Promise((r) => setTimeout(r, apiError.retryAfter! * 1000));
      continue;
    }
    throw apiError;
  }
}
