import type { Cluster } from './cluster.ts';
import type { Instance } from './instances.ts';
import type { LoopbackStandIn } from './standin.ts';
import type { Rng } from './world.ts';

export type FaultKind = 'kill -9' | 'SIGTERM' | 'postgres restart' | 'stand-in hangs' | 'stand-in fails';

export interface Fault {
  kind: FaultKind;
  /** Offset from the load's start, ms. */
  at: number;
  /** How long the fault lasts: the instance stays down, the database down, the stand-in bad. */
  forMs: number;
}

export interface FaultRecord extends Fault {
  /** What was hit ("instance 2 (pid 1234)", "webhooks-a"), and what came of it. */
  target: string;
  outcome: string;
  startedAt: number;
  endedAt?: number;
  /** SIGTERM: the exit code and how long the process took to exit. */
  exit?: { code: number | null | undefined; ms: number };
}

/**
 * The fault schedule of a run of `durationMs`: from the seed alone, so a failing run replays. Faults
 * fall between 10 % and 75 % of the run, leaving its end to recover; one of each kind at least,
 * then one more per period (kill -9 every 4 minutes, SIGTERM every 6, a PostgreSQL restart every
 * 15, a stand-in fault every 5).
 */
export function schedule(rng: Rng, durationMs: number): Fault[] {
  const minutes = durationMs / 60_000;
  const count = (every: number) => Math.max(1, Math.floor(minutes / every));
  const from = durationMs * 0.1;
  const span = durationMs * 0.65;
  const faults: Fault[] = [];
  const add = (kind: FaultKind, n: number, forMs: () => number) => {
    for (let i = 0; i < n; i++) faults.push({ kind, at: Math.round(from + ((i + rng.next()) / n) * span), forMs: forMs() });
  };
  const short = durationMs < 5 * 60_000;
  add('kill -9', count(4), () => 1000 + rng.int(8000));
  add('SIGTERM', count(6), () => 1000 + rng.int(5000));
  add('postgres restart', count(15), () => 1000 + rng.int(short ? 3000 : 8000));
  add('stand-in hangs', count(10), () => (short ? 10_000 : 20_000) + rng.int(short ? 10_000 : 40_000));
  add('stand-in fails', count(10), () => (short ? 10_000 : 20_000) + rng.int(short ? 10_000 : 40_000));
  return faults.sort((a, b) => a.at - b.at);
}

export interface FaultTargets {
  instances: Instance[];
  cluster: Cluster;
  standIns: () => LoopbackStandIn[];
  rng: Rng;
  log: (message: string) => void;
}

/**
 * Carries out one fault and its recovery (the instance started again, the database back, the
 * stand-in good again). Instance faults pick an instance that is up, and never the last one up:
 * the service must keep answering somewhere, as an installation with several instances does.
 */
export async function inject(fault: Fault, targets: FaultTargets): Promise<FaultRecord> {
  const record: FaultRecord = { ...fault, target: '', outcome: '', startedAt: Date.now() };
  const { instances, cluster, rng, log } = targets;
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  switch (fault.kind) {
    case 'kill -9':
    case 'SIGTERM': {
      const up = instances.filter((i) => i.state === 'up');
      if (up.length < 2) {
        record.target = 'none';
        record.outcome = 'skipped: fewer than two instances up';
        break;
      }
      const victim = rng.pick(up);
      record.target = `instance ${victim.index} (pid ${victim.pid})`;
      log(`fault: ${fault.kind} ${record.target}, down ${fault.forMs} ms`);
      if (fault.kind === 'kill -9') {
        await victim.kill();
        record.outcome = 'killed';
      } else {
        const signalled = Date.now();
        const code = await victim.terminate();
        record.exit = { code, ms: Date.now() - signalled };
        record.outcome = `exited ${code} after ${record.exit.ms} ms`;
      }
      await pause(fault.forMs);
      await victim.start();
      record.outcome += ', restarted';
      break;
    }
    case 'postgres restart': {
      record.target = `postgres :${cluster.port}`;
      log(`fault: postgres fast shutdown, down ${fault.forMs} ms`);
      await cluster.restart(fault.forMs);
      record.outcome = 'restarted';
      break;
    }
    case 'stand-in hangs':
    case 'stand-in fails': {
      const candidates = targets.standIns().filter((s) => s.faultable && s.currentMode === 'ok');
      if (!candidates.length) {
        record.target = 'none';
        record.outcome = 'skipped: no stand-in free';
        break;
      }
      const standIn = rng.pick(candidates);
      record.target = standIn.name;
      log(`fault: ${standIn.name} ${fault.kind === 'stand-in hangs' ? 'hangs' : 'answers 500'} for ${fault.forMs} ms`);
      standIn.setMode(fault.kind === 'stand-in hangs' ? 'hang' : 'fail');
      await pause(fault.forMs);
      standIn.setMode('ok');
      record.outcome = `${standIn.counts.faulted} requests faulted so far`;
      break;
    }
  }
  record.endedAt = Date.now();
  return record;
}
