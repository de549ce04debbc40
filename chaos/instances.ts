import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/processes.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export type InstanceState = 'starting' | 'up' | 'stopping' | 'down';

/** One RSS reading of an instance's process. */
export interface RssSample {
  at: number;
  bytes: number;
}

/** One life of an instance: from a start to its end (kill, SIGTERM or the run's end). */
export interface Life {
  instance: number;
  pid: number;
  startedAt: number;
  endedAt?: number;
  end?: 'kill -9' | 'SIGTERM' | 'run end' | 'crashed';
  exitCode?: number | null;
  rss: RssSample[];
}

/**
 * One `node src/main.ts` of the run, on its own port, restartable: the run kills it (-9), stops it
 * (SIGTERM, which must exit 0 within the grace time) and starts it again. Its output goes to a log
 * file of the run's directory.
 */
export class Instance {
  state: InstanceState = 'down';
  port = 0;
  metricsPort = 0;
  readonly lives: Life[] = [];
  private child: ChildProcess | null = null;
  /** Called when the process exits on its own while up (the run restarts it, as a supervisor would). */
  onCrash?: (instance: Instance) => void;
  private log: WriteStream;

  readonly index: number;
  private readonly env: Record<string, string>;

  constructor(index: number, env: Record<string, string>, outDir: string) {
    this.index = index;
    this.env = env;
    this.log = createWriteStream(join(outDir, `instance-${index}.log`), { flags: 'a' });
  }

  get life(): Life | undefined {
    return this.lives.at(-1);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async start(readyWithinMs = 120_000): Promise<void> {
    this.state = 'starting';
    if (!this.port) this.port = await freePort();
    if (!this.metricsPort) this.metricsPort = await freePort();
    const child = spawn(process.execPath, ['src/main.ts'], {
      cwd: ROOT,
      env: { ...this.env, PORT: String(this.port), HOST: '127.0.0.1', METRICS_PORT: String(this.metricsPort) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const life: Life = { instance: this.index, pid: child.pid!, startedAt: Date.now(), rss: [] };
    this.lives.push(life);
    this.log.write(`\n--- ${new Date().toISOString()} start pid ${child.pid}\n`);
    child.stdout!.on('data', (chunk: Buffer) => this.log.write(chunk));
    child.stderr!.on('data', (chunk: Buffer) => this.log.write(chunk));
    child.once('exit', (code, signal) => {
      life.endedAt ??= Date.now();
      life.exitCode = code;
      this.log.write(`--- ${new Date().toISOString()} exit ${code ?? signal}\n`);
      if (this.child === child) {
        this.child = null;
        const crashed = this.state === 'up';
        this.state = 'down';
        if (crashed) {
          life.end = 'crashed';
          this.onCrash?.(this);
        }
      }
    });
    const until = Date.now() + readyWithinMs;
    while (Date.now() < until) {
      if (this.child !== child) throw new Error(`instance ${this.index} exited while starting (see instance-${this.index}.log)`);
      const ready = await fetch(`http://127.0.0.1:${this.port}/readyz`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
      if (ready?.ok) {
        this.state = 'up';
        return;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`instance ${this.index} not ready within ${readyWithinMs} ms`);
  }

  /** kill -9: no cleanup of any kind. */
  async kill(): Promise<void> {
    await this.end('SIGKILL', 'kill -9');
  }

  /** SIGTERM: the graceful shutdown; the exit code is kept for the report (0 expected). */
  async terminate(): Promise<number | null | undefined> {
    await this.end('SIGTERM', 'SIGTERM');
    return this.lives.at(-1)?.exitCode;
  }

  async stopAtEnd(): Promise<void> {
    await this.end('SIGTERM', 'run end');
  }

  private async end(signal: NodeJS.Signals, how: Life['end']): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.state = 'stopping';
    const life = this.life!;
    life.end = how;
    life.endedAt = Date.now();
    const gone = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    await gone;
    clearTimeout(timer);
  }

  /** Reads the process's resident set size from /proc. */
  sampleRss(): void {
    const pid = this.child?.pid;
    if (!pid || this.state !== 'up') return;
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      if (kb) this.life!.rss.push({ at: Date.now(), bytes: kb * 1024 });
    } catch {
      // The process is gone between the check and the read.
    }
  }

  close(): void {
    this.log.end();
  }
}
