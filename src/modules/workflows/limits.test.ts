import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { api, manual, type Run } from '../../../test/workflows.ts';

/**
 * Expressions are user code evaluated on the server's event loop: each evaluation is held to a
 * time, a depth and a size limit, and regular expressions run on a linear-time engine. A node
 * that hits a limit fails with EXPRESSION_LIMIT; the server goes on answering.
 */

let t: TestApp;
let w: ReturnType<typeof api>;

beforeAll(async () => {
  // EXPRESSION_TIMEOUT_MS above the 1 s default, to see the setting reach the evaluations. Not
  // below it: the evaluations run on threads at a lower CPU priority, and on a machine busy with
  // other test files a size limit's case (a 3 MB join) overran 400 ms before its size was checked.
  t = await buildTestApp({ env: { WORKFLOW_POLL_MS: '50', EXPRESSION_TIMEOUT_MS: '2500' } });
  w = api(t);
});
afterAll(async () => {
  await t.close();
});

/** Runs trigger → data.set with one field; resolves with the finished run and the time it took. */
async function setField(value: string, input: Record<string, unknown> = {}): Promise<{ run: Run; ms: number }> {
  const wf = await w.create([manual, { id: 'set', type: 'data.set', params: { fields: { out: value } } }], [{ from: 'start', to: 'set' }]);
  const started = Date.now();
  const queued = await w.run(wf.id, { input });
  const run = await w.until(queued.id, ['SUCCEEDED', 'FAILED'], 20_000);
  return { run, ms: Date.now() - started };
}

describe('expression limits', () => {
  it('an endless recursion fails its node with EXPRESSION_LIMIT within the time limit, and the server answers meanwhile', async () => {
    const wf = await w.create(
      [manual, { id: 'set', type: 'data.set', params: { fields: { x: '{{ ($f := function($n){ $f($n + 1) }; $f(0)) }}' } } }],
      [{ from: 'start', to: 'set' }],
    );
    const started = Date.now();
    const queued = await w.run(wf.id);
    // Requests while the run executes are answered (the loop is held at most one time limit at once).
    const answered: number[] = [];
    while (Date.now() - started < 3000) {
      const asked = Date.now();
      const res = await t.call({ method: 'GET', url: '/healthz' });
      expect(res.statusCode).toBe(200);
      answered.push(Date.now() - asked);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(Math.max(...answered)).toBeLessThan(1500);
    const run = await w.until(queued.id, ['SUCCEEDED', 'FAILED'], 10_000);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(run.status).toBe('FAILED');
    expect(run.error).toMatchObject({ code: 'EXPRESSION_LIMIT', nodeId: 'set' });
    expect(run.error!.message).toContain('ran longer than 2500 ms');
    const step = w.step(run, 'set')!;
    expect(step.error).toMatchObject({ code: 'EXPRESSION_LIMIT', willRetry: false });
    expect(step.durationMs!).toBeLessThan(6000);

    // Other runs are not held up.
    const other = await setField('{{ 6 * 7 }}');
    expect(other.run.status).toBe('SUCCEEDED');
    expect(w.step(other.run, 'set')!.items).toEqual([{ out: 42 }]);
  });

  it('a recursion that is not a tail call stops at the depth limit', async () => {
    const { run, ms } = await setField('{{ ($f := function($n){ 1 + $f($n + 1) }; $f(0)) }}');
    expect(run.status).toBe('FAILED');
    expect(run.error).toMatchObject({ code: 'EXPRESSION_LIMIT' });
    expect(run.error!.message).toContain('nested deeper than 500');
    expect(ms).toBeLessThan(3000);
  });

  it('a catastrophic regular expression finishes at once (linear-time engine); regexes keep working', async () => {
    const { run } = await setField('{{ $match("aaaaaaaaaaaaaaaaaaaaaaaaaaaa!", /(a+)+$/) }}');
    expect(run.status).toBe('SUCCEEDED');
    // Seven seconds on a backtracking engine.
    expect(w.step(run, 'set')!.durationMs!).toBeLessThan(500);
    expect(w.step(run, 'set')!.items).toEqual([{}]);

    const many = await setField('{{ $match($.s, /(a+)+$/).match }}', { s: 'a'.repeat(20_000) + '!' + 'a'.repeat(5) });
    expect(many.run.status).toBe('SUCCEEDED');
    expect(w.step(many.run, 'set')!.durationMs!).toBeLessThan(1000);
    expect(w.step(many.run, 'set')!.items![0]!.out).toBe('aaaaa');

    const usual = await setField(
      '{{ { "m": $match("ab12cd345", /([a-z])([0-9]+)/)[1].groups, "r": $replace("Hello World", /o/i, "0"), "s": $split("a, b,c", /,\\s*/), "c": $contains("Hello", /^hel/i), "emoji": $match("😀x12", /[0-9]+/).index } }}',
    );
    expect(usual.run.status).toBe('SUCCEEDED');
    expect(w.step(usual.run, 'set')!.items![0]!.out).toEqual({ m: ['d', '345'], r: 'Hell0 W0rld', s: ['a', 'b', 'c'], c: true, emoji: 3 });
  });

  it('a pattern that needs backtracking (back-reference, look-ahead) is refused when the workflow is written: 422 WORKFLOW_INVALID', async () => {
    for (const pattern of ['/(ab)\\1/', '/a(?=b)/']) {
      const res = await t.call({
        method: 'POST',
        url: `${w.base}/workflows`,
        auth: w.auth,
        payload: {
          name: 'bad regex',
          nodes: [manual, { id: 'set', type: 'data.set', params: { fields: { x: `{{ $match("abab", ${pattern}) }}` } } }],
          edges: [{ from: 'start', to: 'set' }],
        },
      });
      expect(res.statusCode, pattern).toBe(422);
      expect(res.json()).toMatchObject({ code: 'WORKFLOW_INVALID' });
      expect(res.json().message).toContain('is not supported');
    }
  });

  it('[1..10000000] fails with EXPRESSION_LIMIT before allocating the sequence', async () => {
    const rss = process.memoryUsage().rss;
    const { run, ms } = await setField('{{ [1..10000000] }}');
    expect(run.status).toBe('FAILED');
    expect(run.error).toMatchObject({ code: 'EXPRESSION_LIMIT' });
    expect(run.error!.message).toContain('sequence of more than 1000000 items');
    expect(ms).toBeLessThan(3000);
    // 2.6 GB of RSS before the limit.
    expect(process.memoryUsage().rss - rss).toBeLessThan(150 * 1024 * 1024);
  });

  it('values that grow in a loop (a string doubled, an object shared by itself) stop at the size limit', async () => {
    for (const expression of [
      '{{ ($d := function($s, $n){ $n = 0 ? $s : $d($s & $s, $n - 1) }; $length($d("a", 40))) }}',
      '{{ ($d := function($o, $n){ $n = 0 ? $o : $d({ "a": $o, "b": $o }, $n - 1) }; $string($d({}, 60))) }}',
      '{{ $pad("", 2000000000, "x") }}',
      '{{ ($s := $pad("", 999000, "x"); $join([$s, $s, $s])) }}',
    ]) {
      const rss = process.memoryUsage().rss;
      const { run, ms } = await setField(expression);
      expect(run.status, expression).toBe('FAILED');
      expect(run.error, expression).toMatchObject({ code: 'EXPRESSION_LIMIT' });
      expect(run.error!.message).toMatch(/larger than|more than 1000000/);
      expect(ms).toBeLessThan(3000);
      expect(process.memoryUsage().rss - rss).toBeLessThan(300 * 1024 * 1024);
    }
  });

  it('a flow.if condition is held to the same limits', async () => {
    const wf = await w.create([manual, { id: 'if', type: 'flow.if', params: { condition: '$count([1..5000000]) > 1' } }], [{ from: 'start', to: 'if' }]);
    const run = await w.until((await w.run(wf.id)).id, ['SUCCEEDED', 'FAILED'], 10_000);
    expect(run.status).toBe('FAILED');
    expect(run.error).toMatchObject({ code: 'EXPRESSION_LIMIT', nodeId: 'if' });
  });

  it('ordinary expressions are not touched by the limits', async () => {
    const { run } = await setField(
      '{{ { "sum": $sum([1..1000]), "big": $count([1..100000]), "fact": ($f := function($n){ $n <= 1 ? 1 : $n * $f($n - 1) }; $f(10)), "d": $distinct([1, 2, 1, "1", { "a": 1 }, { "a": 1 }]), "s": $string({ "k": [1, 2] }), "p": $pad("7", -3, "0"), "j": $join(["a", "b"], "-") } }}',
    );
    expect(run.status).toBe('SUCCEEDED');
    expect(w.step(run, 'set')!.items![0]!.out).toEqual({
      sum: 500500,
      big: 100000,
      fact: 3628800,
      d: [1, 2, '1', { a: 1 }],
      s: '{"k":[1,2]}',
      p: '007',
      j: 'a-b',
    });
  });
});
