import jsonata from 'jsonata';
import { RE2JS } from 're2js';

/**
 * Limits of one evaluation of a user-supplied expression. Evaluation runs on the event loop, so
 * without them one expression can hold the loop (an endless recursion, a catastrophic regex) or
 * the heap (`[1..10000000]`, a string doubled in a loop) of the whole server.
 */
export interface ExpressionLimits {
  /** Wall-clock time of one evaluation, checked at every evaluation step. */
  timeoutMs: number;
  /** Nesting of evaluation steps (non-tail recursion) and of the values produced. */
  maxDepth: number;
  /** Longest string, longest sequence and largest value (items plus characters) one evaluation may produce. */
  maxSize: number;
}

export const DEFAULT_EXPRESSION_LIMITS: ExpressionLimits = { timeoutMs: 1000, maxDepth: 500, maxSize: 1_000_000 };

const limits: ExpressionLimits = { ...DEFAULT_EXPRESSION_LIMITS };

/** Read by JSONata on every evaluation, so a change applies to expressions compiled before it. */
export const jsonataOptions = {
  timeout: limits.timeoutMs,
  stack: limits.maxDepth,
  sequence: limits.maxSize,
  RegexEngine: undefined as unknown as RegExpConstructor,
};

/** Sets the limits of every later evaluation (from the configuration, at start). */
export function setExpressionLimits(next: ExpressionLimits): void {
  Object.assign(limits, next);
  jsonataOptions.timeout = next.timeoutMs;
  jsonataOptions.stack = next.maxDepth;
  jsonataOptions.sequence = next.maxSize;
}

export function expressionLimits(): Readonly<ExpressionLimits> {
  return limits;
}

/** An evaluation stopped by a limit; the message says which. */
export class LimitExceeded extends Error {}

/** JSONata's own guardrail and allocation errors, and the engine's, that mean "a limit was hit". */
export function limitMessage(error: unknown): string | null {
  if (error instanceof LimitExceeded) return error.message;
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'D1011') return `nested deeper than ${limits.maxDepth} evaluation levels (endless recursion?)`;
  if (code === 'D1012') return `ran longer than ${limits.timeoutMs} ms`;
  if (code === 'D2014' || code === 'D2015') return `produced a sequence of more than ${limits.maxSize} items`;
  if (error instanceof RangeError && /call stack|string length|array length|allocation/i.test(error.message)) {
    return `ran out of room (${error.message})`;
  }
  return null;
}

/**
 * A RegExp stand-in for JSONata (`$match`, `$replace`, `$contains`, `$split` and `/…/` literals)
 * on RE2: matching time grows linearly with the input whatever the pattern, so `/(a+)+$/` cannot
 * backtrack for seconds. Patterns RE2 cannot run in linear time (back-references, look-ahead)
 * are refused with the engine's message.
 */
export class LinearRegExp {
  lastIndex = 0;
  private readonly re: RE2JS;
  private matcher: ReturnType<RE2JS['matcher']> | null = null;
  private input: string | null = null;

  constructor(source: RegExp | string, flags?: string) {
    const pattern = typeof source === 'string' ? source : source.source;
    const f = flags ?? (typeof source === 'string' ? '' : source.flags);
    let bits = 0;
    if (f.includes('i')) bits |= RE2JS.CASE_INSENSITIVE;
    if (f.includes('m')) bits |= RE2JS.MULTILINE;
    if (f.includes('s')) bits |= RE2JS.DOTALL;
    try {
      this.re = RE2JS.compile(RE2JS.translateRegExp(pattern), bits);
    } catch (error) {
      throw new Error(`regular expression /${pattern}/ is not supported: ${(error as Error).message}`);
    }
  }

  /** Like RegExp#exec with the `g` flag: searches from lastIndex and moves it past the match. */
  exec(str: string): RegExpExecArray | null {
    // JSONata calls exec once per match on the same string: one matcher serves the whole scan.
    if (this.input !== str || !this.matcher) {
      this.matcher = this.re.matcher(str);
      this.input = str;
    }
    if (this.lastIndex > str.length || !this.matcher.find(this.lastIndex)) {
      this.lastIndex = 0;
      return null;
    }
    const m = this.matcher;
    const out = [m.group(0) ?? ''] as unknown as RegExpExecArray;
    for (let i = 1; i <= m.groupCount(); i++) out.push(m.group(i) ?? (undefined as unknown as string));
    out.index = m.start(0);
    out.input = str;
    this.lastIndex = m.end(0);
    return out;
  }

  test(str: string): boolean {
    return this.exec(str) !== null;
  }
}

jsonataOptions.RegexEngine = LinearRegExp as unknown as RegExpConstructor;

interface Measure {
  size: number;
  height: number;
}
/** Sizes of values already measured: a value built from measured parts costs only its own top level. */
const measured = new WeakMap<object, Measure>();

/** Logical size (values plus characters, counting shared parts each time they appear) and nesting of a value. */
export function measure(value: unknown, depth = 0): Measure {
  if (typeof value === 'string') return { size: value.length + 1, height: 0 };
  if (value === null || typeof value !== 'object') return { size: 1, height: 0 };
  const known = measured.get(value);
  if (known) return known;
  // A JSONata function (lambda, tail-call thunk, built-in) is no data: its closure is not counted.
  if ('_jsonata_lambda' in value || '_jsonata_function' in value) return { size: 1, height: 0 };
  if (depth > limits.maxDepth) throw new LimitExceeded(`produced a value nested deeper than ${limits.maxDepth} levels`);
  let size = 1;
  let height = 0;
  const add = (child: unknown, keyLength: number) => {
    const m = measure(child, depth + 1);
    size += m.size + keyLength;
    if (m.height + 1 > height) height = m.height + 1;
    if (size > limits.maxSize) throw new LimitExceeded(`produced a value larger than ${limits.maxSize} (items and characters)`);
    if (height > limits.maxDepth) throw new LimitExceeded(`produced a value nested deeper than ${limits.maxDepth} levels`);
  };
  if (Array.isArray(value)) {
    for (const child of value) add(child, 0);
  } else {
    for (const key of Object.keys(value)) add((value as Record<string, unknown>)[key], key.length);
  }
  const out = { size, height };
  measured.set(value, out);
  return out;
}

/** Evaluation steps that only hand back a value that exists already (a field, a variable, a literal); every other step is measured. */
const NAVIGATION = new Set(['name', 'variable', 'parent', 'string', 'number', 'value', 'regex', 'lambda']);

/** JSONata's exit hook: every value an evaluation step builds is measured before it is used further. */
function onExit(expr: { type: string }, _input: unknown, _env: unknown, result: unknown): void {
  if (NAVIGATION.has(expr.type) || result === undefined || result === null) return;
  if (typeof result === 'string') {
    if (result.length > limits.maxSize) throw new LimitExceeded(`produced a string of more than ${limits.maxSize} characters`);
    return;
  }
  if (typeof result === 'object') measure(result);
}

function tooLarge(what: string): LimitExceeded {
  return new LimitExceeded(`${what} would be larger than ${limits.maxSize} characters`);
}

type Builtin = { implementation: (...args: unknown[]) => unknown };

/** JSONata's own functions, for the checked versions below to call once their checks pass. */
const builtins: Record<string, Builtin> = {};
for (const name of ['pad', 'join', 'string', 'distinct']) builtins[name] = (await jsonata(`$${name}`).evaluate(null)) as Builtin;

/** Regex literals RE2 cannot run (back-references, look-around) are refused when the expression is written, not when it runs. */
function checkRegexLiterals(ast: unknown): void {
  const seen = new Set<object>();
  const visit = (node: unknown) => {
    if (node === null || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    if (node instanceof RegExp) {
      new LinearRegExp(node);
      return;
    }
    for (const child of Object.values(node)) visit(child);
  };
  visit(ast);
}

function stableKey(value: unknown): string {
  if (value === null || typeof value !== 'object') return typeof value + ':' + String(value);
  if (Array.isArray(value)) return '[' + value.map(stableKey).join(',') + ']';
  return (
    '{' +
    Object.keys(value)
      .sort()
      .map((k) => JSON.stringify(k) + ':' + stableKey((value as Record<string, unknown>)[k]))
      .join(',') +
    '}'
  );
}

/**
 * Arms a compiled expression: the size hook, and the built-in functions that could allocate
 * far more than their inputs in one call (before any hook sees the result) or take quadratic
 * time, replaced by checked versions.
 */
export function arm(expr: jsonata.Expression): jsonata.Expression {
  const fns = builtins;
  checkRegexLiterals(expr.ast());
  expr.assign(Symbol.for('jsonata.__evaluate_exit') as unknown as string, onExit);
  expr.registerFunction(
    'pad',
    function (this: jsonata.Focus, str: string | undefined, width: number, char?: string) {
      if (Math.abs(Math.trunc(width)) * Math.max(1, char?.length ?? 1) > limits.maxSize) throw tooLarge('$pad result');
      return fns.pad!.implementation.call(this, str, width, char);
    },
    '<s-ns?:s>',
  );
  expr.registerFunction(
    'join',
    function (this: jsonata.Focus, strs: string[] | undefined, separator?: string) {
      if (Array.isArray(strs)) {
        let total = (separator?.length ?? 0) * strs.length;
        for (const s of strs) total += typeof s === 'string' ? s.length : 0;
        if (total > limits.maxSize) throw tooLarge('$join result');
      }
      return fns.join!.implementation.call(this, strs, separator);
    },
    '<a<s>s?:s>',
  );
  expr.registerFunction(
    'string',
    function (this: jsonata.Focus, arg: unknown, prettify?: boolean) {
      if (arg !== null && typeof arg === 'object') {
        // JSON text: at most 6 characters per character (\uXXXX), plus indentation when pretty.
        const m = measure(arg);
        if (m.size * (6 + (prettify ? 2 * m.height : 0)) > 16 * limits.maxSize) throw tooLarge('$string result');
      }
      return fns.string!.implementation.call(this, arg, prettify);
    },
    '<x-b?:s>',
  );
  // The built-in compares every pair (quadratic); keyed by value it is linear.
  expr.registerFunction(
    'distinct',
    function (this: jsonata.Focus, arr: unknown) {
      if (!Array.isArray(arr) || arr.length <= 1 || arr.some((v) => typeof v === 'function')) return fns.distinct!.implementation.call(this, arr);
      const seen = new Set<string>();
      const out: unknown[] = [];
      for (const value of arr) {
        const key = stableKey(value);
        if (!seen.has(key)) {
          seen.add(key);
          out.push(value);
        }
      }
      if ((arr as { sequence?: boolean }).sequence) (out as unknown as { sequence: boolean }).sequence = true;
      return out;
    },
    '<x:x>',
  );
  return expr;
}
