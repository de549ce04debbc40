import type { FastifyBaseLogger } from 'fastify';

export interface LoopOptions {
  name: string;
  /** One round of work; true when there may be more right away. */
  run: () => Promise<boolean>;
  /** How long to sleep when there is nothing to do (work due later is found by this poll). */
  idleMs: number;
  log: FastifyBaseLogger;
  /**
   * A wake-up while idle waits this long before the round starts, so a burst of commits is handled
   * in one batch instead of one round each (a function is asked at each wake-up).
   */
  coalesceMs?: number | (() => number);
}

/**
 * A background worker: runs rounds back to back while there is work, sleeps when idle, and can be
 * woken early (a commit that created work). Errors are logged and retried after a pause.
 */
export class Loop {
  private readonly options: LoopOptions;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private wakeRequested = false;
  private stopped = true;
  private due = false;

  constructor(options: LoopOptions) {
    this.options = options;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.wake();
  }

  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.wakeRequested = true;
      return;
    }
    const option = this.options.coalesceMs ?? 0;
    const coalesce = typeof option === 'function' ? option() : option;
    if (coalesce > 0) {
      // Idle: start soon, not now; further wake-ups until then join this round.
      if (this.due) return;
      if (this.timer) clearTimeout(this.timer);
      this.due = true;
      this.timer = setTimeout(() => this.runNow(), coalesce);
      return;
    }
    this.runNow();
  }

  private runNow(): void {
    this.due = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.stopped || this.running) return;
    this.running = this.cycle().finally(() => {
      this.running = null;
      if (this.stopped) return;
      if (this.wakeRequested) {
        this.wakeRequested = false;
        this.wake();
      }
    });
  }

  private async cycle(): Promise<void> {
    let pause = this.options.idleMs;
    try {
      let more = true;
      while (more && !this.stopped) {
        this.wakeRequested = false;
        more = await this.options.run();
      }
    } catch (error) {
      this.options.log.error({ err: error, worker: this.options.name }, 'worker round failed');
      pause = Math.max(pause, 1000);
    }
    if (!this.stopped && !this.wakeRequested) this.timer = setTimeout(() => this.wake(), pause);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}
