import jsonata from 'jsonata';
import { arm, jsonataOptions, limitMessage } from './limits.ts';

/** What an expression reads as `$` (`{{ … }}` in a workflow node's params, a campaign's text): one JSON object. */
export type Item = Record<string, unknown>;

/**
 * Compiling and evaluating one expression, as both the server's thread and the expression workers
 * (worker.ts) do it: this file imports only JSONata and the limits, so that a worker
 * loads little.
 */

export class ExpressionError extends Error {
  /** The run step's error code. */
  readonly code: string = 'EXPRESSION_ERROR';
}

/** An evaluation stopped by one of its limits (time, depth, size). */
export class ExpressionLimitError extends ExpressionError {
  override readonly code = 'EXPRESSION_LIMIT';
}

const cache = new Map<string, jsonata.Expression>();

/** Compiles (once) a JSONata expression; throws with a readable message on a syntax error. */
export function compile(text: string): jsonata.Expression {
  let expr = cache.get(text);
  if (!expr) {
    try {
      // Every evaluation runs under the limits of limits.ts (time, depth, size, linear-time regexes).
      expr = arm(jsonata(text, jsonataOptions));
    } catch (error) {
      throw new ExpressionError(`invalid expression "${text.trim()}": ${(error as Error).message}`);
    }
    if (cache.size > 5000) cache.clear();
    cache.set(text, expr);
  }
  return expr;
}

/** `text` as an error message shows it. */
export function shown(text: string): string {
  return text.trim().length > 200 ? `${text.trim().slice(0, 200)}…` : text.trim();
}

/** The error of a failed evaluation of `text`: a limit hit, or the expression's own failure. */
export function evaluationError(text: string, error: unknown): ExpressionError {
  const limit = limitMessage(error);
  if (limit) return new ExpressionLimitError(`expression "${shown(text)}" stopped: it ${limit}`);
  return new ExpressionError(`expression "${shown(text)}" failed: ${(error as Error)?.message ?? String(error)}`);
}

/** What an expression sees besides the item (`$`): `$input`, `$run`, `$node(id)`, `$secrets`. */
export interface Bindings {
  input: Item;
  run: { id: string; workflowId: string; testMode: boolean; startedAt: string | null };
  node(id: string): Item[] | undefined;
  secrets?: Record<string, string>;
}

/** One evaluation, its value as plain JSON; a failure throws `evaluationError`. */
export async function evaluateText(text: string, item: Item, bindings: Bindings): Promise<unknown> {
  const expr = compile(text);
  try {
    const out = await expr.evaluate(item, {
      input: bindings.input,
      run: bindings.run,
      node: (id: string) => bindings.node(id),
      ...(bindings.secrets ? { secrets: bindings.secrets } : {}),
    });
    // JSONata sequences are arrays with extra markers; hand back plain JSON.
    return out === undefined ? undefined : JSON.parse(JSON.stringify(out));
  } catch (error) {
    throw evaluationError(text, error);
  }
}
