import type { Recorder } from './client.ts';
import type { Cluster } from './cluster.ts';
import type { FaultRecord } from './faults.ts';
import type { Instance } from './instances.ts';
import type { Options } from './run.ts';
import type { Check } from './world.ts';

export interface Report {
  seed: number;
  options: Options;
  startedAt: string;
  loads: string[];
  checks: Check[];
  faults: FaultRecord[];
  counters: Map<string, number>;
  recorder: Recorder;
  instances: Instance[];
  cluster: Cluster;
  errors: string[];
  queueDepths: { window: number; at: number; depths: Record<string, number> }[];
}

export function percentile(values: number[], p: number): number {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
const ms = (value: number) => (value >= 100 ? Math.round(value) : Math.round(value * 10) / 10);

/** The route classes with the most requests, for the per-window table. */
function busiestClasses(recorder: Recorder, n: number): string[] {
  const totals = new Map<string, number>();
  for (const w of recorder.windows) for (const [k, list] of w) totals.set(k, (totals.get(k) ?? 0) + list.length);
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k]) => k);
}

/** RSS (MB) of an instance's last sample in window w, '-' when it was down all along. */
function rssInWindow(instance: Instance, started: number, windowMs: number, w: number): string {
  const end = started + (w + 1) * windowMs;
  const samples = instance.lives.flatMap((l) => l.rss).filter((s) => s.at <= end && s.at > end - windowMs);
  return samples.length ? String(mb(samples.at(-1)!.bytes)) : '-';
}

/**
 * The soak's flatness, as checks: per busy route class, p99 of the last full window against the
 * first window after warm-up (at most 2× + 50 ms); each queue's depth at the end against the
 * start (at most 2× + 20).
 */
export function flatness(report: Report): Check[] {
  const { recorder, options } = report;
  const first = Math.ceil(options.warmupMs / options.windowMs);
  const last = Math.floor((options.durationMs - 1) / options.windowMs) - (options.durationMs % options.windowMs ? 1 : 0);
  if (last <= first) return [];
  const slower: string[] = [];
  const classes = busiestClasses(recorder, 8);
  for (const k of classes) {
    const a = recorder.windows[first]?.get(k) ?? [];
    const b = recorder.windows[last]?.get(k) ?? [];
    if (a.length < 20 || b.length < 20) continue;
    const [pa, pb] = [percentile(a, 99), percentile(b, 99)];
    if (pb > pa * 2 + 50) slower.push(`${k}: p99 ${ms(pa)} ms in window ${first + 1}, ${ms(pb)} ms in window ${last + 1}`);
  }
  const grew: string[] = [];
  const startDepths = report.queueDepths.find((q) => q.window >= first)?.depths ?? {};
  const endDepths = report.queueDepths.filter((q) => q.window <= last + 1).at(-1)?.depths ?? {};
  for (const [queue, depth] of Object.entries(endDepths)) {
    const before = startDepths[queue] ?? 0;
    if (depth > before * 2 + 20) grew.push(`${queue}: ${before} after warm-up, ${depth} at the end`);
  }
  return [
    { promise: `soak: latency flat (p99 per route class, window ${first + 1} vs ${last + 1})`, count: classes.length, violations: slower },
    { promise: 'soak: no queue grows', count: Object.keys(endDepths).length, violations: grew },
  ];
}

export function printReport(report: Report): void {
  const { recorder, options } = report;
  const out: string[] = [];
  const line = (s = '') => out.push(s);
  line();
  line('================ chaos run summary ================');
  line(
    `seed ${report.seed} · ${options.durationMs / 1000} s of load · ${options.instances} instances · rate ${options.rate} · faults ${options.faults ? 'on' : 'off'}`,
  );
  line(`loads: ${report.loads.join(', ') || 'none'} · started ${report.startedAt}`);
  line(
    `replay: npm run chaos -- --seed ${report.seed} --duration ${options.durationMs / 1000}s --instances ${options.instances} --rate ${options.rate}${options.faults ? '' : ' --no-faults'} --only ${options.only.join(',')}`,
  );

  line();
  line('load (requests per route class: answered by status, unanswered)');
  for (const [k, byStatus] of [...recorder.statuses].sort((a, b) => a[0].localeCompare(b[0]))) {
    const parts = [...byStatus].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s === 0 ? 'none' : s}: ${n}`);
    line(`  ${k.padEnd(48)} ${parts.join(', ')}`);
  }
  if (report.counters.size) {
    line('counted:');
    for (const [k, v] of [...report.counters].sort()) line(`  ${k}: ${v}`);
  }

  line();
  line(`faults injected: ${report.faults.length}`);
  for (const f of report.faults) {
    const t = ((f.startedAt - recorder.started) / 1000).toFixed(0);
    line(`  +${t.padStart(5)} s  ${f.kind.padEnd(17)} ${f.target.padEnd(26)} ${Math.round(f.forMs / 1000)} s  ${f.outcome}`);
  }
  for (const d of report.cluster.downtimes)
    line(`  postgres down ${((d.to - d.from) / 1000).toFixed(1)} s from +${((d.from - recorder.started) / 1000).toFixed(0)} s`);

  line();
  // Rows: route classes (20 requests or more), each instance's RSS, each queue's depth; columns: windows.
  const windows = recorder.windows.length;
  const head = Array.from({ length: windows }, (_, i) => `w${i + 1}`.padStart(12)).join('');
  line(
    `per ${options.windowMs / 1000} s window (w1 starts with the load): latency p50/p99 ms per route class, RSS MB per instance, queue depth at the window's end`,
  );
  line(`  ${''.padEnd(44)}${head}`);
  for (const k of busiestClasses(recorder, 100)) {
    const total = recorder.windows.reduce((n, w) => n + (w.get(k)?.length ?? 0), 0);
    if (total < 20) continue;
    const cells = recorder.windows.map((w) => {
      const list = w.get(k) ?? [];
      return (list.length ? `${ms(percentile(list, 50))}/${ms(percentile(list, 99))}` : '-').padStart(12);
    });
    line(`  ${k.slice(0, 43).padEnd(44)}${cells.join('')}`);
  }
  for (const instance of report.instances) {
    const cells = Array.from({ length: windows }, (_, i) => rssInWindow(instance, recorder.started, options.windowMs, i).padStart(12));
    line(`  ${`RSS instance ${instance.index}`.padEnd(44)}${cells.join('')}`);
  }
  const queues = [...new Set(report.queueDepths.flatMap((q) => Object.keys(q.depths)))].sort();
  for (const queue of queues) {
    const cells = Array.from({ length: windows }, (_, i) => {
      const sample = report.queueDepths.filter((q) => q.window <= i + 1).at(-1);
      return String(sample?.depths[queue] ?? '-').padStart(12);
    });
    line(`  ${`queue ${queue}`.padEnd(44)}${cells.join('')}`);
  }

  if (!options.faults) report.checks.push(...flatness(report));

  line();
  line('promises');
  let broken = 0;
  for (const c of report.checks) {
    const ok = c.violations.length === 0;
    if (!ok) broken++;
    line(`  ${ok ? 'ok  ' : 'FAIL'} ${c.promise}: ${c.count} checked, ${c.violations.length} violations`);
    for (const v of c.violations.slice(0, 10)) line(`         - ${v}`);
    if (c.violations.length > 10) line(`         … and ${c.violations.length - 10} more (report.json)`);
  }
  if (report.errors.length) {
    line();
    line('errors');
    for (const e of report.errors.slice(0, 30)) line(`  ${e}`);
  }
  line();
  line(broken ? `${broken} promise(s) broken` : `all ${report.checks.length} promises kept`);
  console.log(out.join('\n'));
}
