import { parentPort } from 'node:worker_threads';
import { evaluateText, evaluationError, ExpressionError, type Bindings, type Item } from './compiled.ts';
import { expressionLimits, setExpressionLimits, type ExpressionLimits } from './limits.ts';

/**
 * An expression worker (a thread of pool.ts): evaluates one expression at a time under
 * the limits of limits.ts. What the run would hand over through callbacks comes as data: the items
 * of the nodes the expression names, and `$secrets` when it names them.
 */

export interface EvaluationTask {
  /** Told back as the evaluation starts: the pool's deadline counts from then. */
  id: number;
  text: string;
  item: Item;
  input: Item;
  run: Bindings['run'];
  nodes: Map<string, Item[]>;
  secrets?: Record<string, string>;
  limits: ExpressionLimits;
}

export type EvaluationAnswer = { value: unknown } | { error: { code: string; message: string } };

/** The message a worker posts on its parent port as it starts a task. */
export const STARTED = 'expressionStarted';

/**
 * A new thread runs everything in V8's interpreter first: its first evaluation of a few hundred
 * thousand steps took 3-5 times as long as on a warmed thread (a fresh worker replaces each one
 * terminated), enough to reach the time limit. Evaluating a little of each kind of work once, at
 * load, before the first task, lets the engine compile the evaluator's hot paths.
 */
const WARM_UP = [
  'a.b & "-" & $string(c) & $uppercase(a.b)',
  '$sum([1..2000]) + $count([1..2000][$ % 2 = 0])',
  '($f := function($n){ $n <= 1 ? 1 : $n * $f($n - 1) }; $f(20))',
  '$map([1..500], function($v){ { "v": $v, "s": $string($v) } }).v',
  '$sort($distinct([1..300].($ % 50))) ~> $join(",")',
  '$match("ab12cd345", /([a-z])([0-9]+)/).groups',
];
const warmBindings: Bindings = { input: {}, run: { id: '', workflowId: '', testMode: true, startedAt: null }, node: () => undefined };
for (let round = 0; round < 5; round++) {
  for (const text of WARM_UP) await evaluateText(text, { a: { b: 'x' }, c: [1, { d: 2 }] }, warmBindings).catch(() => undefined);
}

export default async function evaluateTask(task: EvaluationTask): Promise<EvaluationAnswer> {
  parentPort?.postMessage({ [STARTED]: task.id });
  const limits = expressionLimits();
  if (limits.timeoutMs !== task.limits.timeoutMs || limits.maxDepth !== task.limits.maxDepth || limits.maxSize !== task.limits.maxSize)
    setExpressionLimits(task.limits);
  try {
    const value = await evaluateText(task.text, task.item, {
      input: task.input,
      run: task.run,
      node: (id: string) => task.nodes.get(id),
      ...(task.secrets ? { secrets: task.secrets } : {}),
    });
    return { value };
  } catch (error) {
    const failure = error instanceof ExpressionError ? error : evaluationError(task.text, error);
    return { error: { code: failure.code, message: failure.message } };
  }
}
