import { execFile, execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/**
 * A PostgreSQL cluster of the run's own: initdb in a temporary directory, a port of its own and its
 * socket in that directory, so restarting it touches nothing else on the machine. As root, the
 * server programs run as the `postgres` user (initdb refuses root).
 */
export class Cluster {
  readonly dir: string;
  /** When the database was down: [stopped, answering again] in epoch ms, for the 5xx accounting. */
  readonly downtimes: { from: number; to: number }[] = [];
  private readonly asRoot = userInfo().uid === 0;

  readonly port: number;

  constructor(port: number) {
    this.port = port;
    this.dir = mkdtempSync(join(tmpdir(), 'chaos-pg-'));
    if (this.asRoot) chownSync(this.dir, pgUid(), pgGid());
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/chaos`;
  }

  private async tool(name: string, args: string[]): Promise<string> {
    const bin = await binDir();
    const [file, argv] = this.asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, name), ...args]] : [join(bin, name), args];
    const { stdout } = await run(file, argv, { cwd: tmpdir(), maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  }

  private get data(): string {
    return join(this.dir, 'data');
  }

  async init(): Promise<void> {
    await this.tool('initdb', ['-D', this.data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--no-instructions']);
    await this.start();
    const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${this.port}/postgres` });
    await client.connect();
    await client.query('CREATE DATABASE chaos');
    await client.end();
  }

  /** Starts the server and waits until it accepts connections. */
  async start(): Promise<void> {
    const options = [
      `-p ${this.port}`,
      `-k ${this.dir}`,
      '-c listen_addresses=127.0.0.1',
      '-c max_connections=300',
      '-c shared_buffers=256MB',
      // Durable as a production server is: a restart must not lose what was committed.
      '-c fsync=on',
      '-c synchronous_commit=on',
      '-c log_min_messages=warning',
    ].join(' ');
    await this.tool('pg_ctl', ['-D', this.data, '-o', options, '-l', join(this.dir, 'server.log'), '-w', '-t', '60', 'start']);
  }

  /** Fast shutdown (active transactions rolled back, clients disconnected), `downMs` down, start again. */
  async restart(downMs: number): Promise<void> {
    const from = Date.now();
    await this.tool('pg_ctl', ['-D', this.data, '-m', 'fast', '-w', '-t', '60', 'stop']);
    await new Promise((r) => setTimeout(r, downMs));
    await this.start();
    this.downtimes.push({ from, to: Date.now() });
  }

  /** Stops the server; removes its directory unless `keep` (to look into it afterwards). */
  async destroy(keep = false): Promise<void> {
    await this.tool('pg_ctl', ['-D', this.data, '-m', keep ? 'fast' : 'immediate', '-w', 'stop']).catch(() => undefined);
    if (!keep) rmSync(this.dir, { recursive: true, force: true });
  }
}

async function binDir(): Promise<string> {
  const { stdout } = await run('pg_config', ['--bindir']).catch(() => ({ stdout: '/usr/lib/postgresql/15/bin' }));
  return stdout.trim();
}

function pgUid(): number {
  return Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
}

function pgGid(): number {
  return Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
}
