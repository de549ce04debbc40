/**
 * What an expression needs and what it can cost, read once from its parse tree (JSONata's AST):
 * which nodes' items it reads through `$node(…)`, and whether it is cheap enough to evaluate on the
 * server's own thread instead of in an expression worker (pool.ts).
 */

type Ast = { type?: string; value?: unknown; [key: string]: unknown };

/** Built-in functions whose cost grows linearly with their arguments (none takes a function, none builds more than it reads). */
const LINEAR_FUNCTIONS = new Set([
  'string',
  'uppercase',
  'lowercase',
  'trim',
  'length',
  'substring',
  'substringBefore',
  'substringAfter',
  'number',
  'boolean',
  'not',
  'exists',
  'count',
  'sum',
  'max',
  'min',
  'average',
  'round',
  'floor',
  'ceil',
  'abs',
  'now',
  'millis',
  'node',
]);

/** Path-step annotations that make a step more than "this field of each value" (grouping, positional and focus variables, `%`). */
const STEP_EXTRAS = ['group', 'focus', 'index', 'ancestor', 'tuple', 'predicate'];

const isIndex = (node: Ast | undefined): boolean =>
  node?.type === 'number' || (node?.type === 'unary' && node.value === '-' && (node.expression as Ast | undefined)?.type === 'number');

/**
 * True when the expression's time is at most proportional to its length times the size of the data
 * it reads: fields and paths (`lead.email`, `$node("a").id`, `items[0]`), literals, variables,
 * arithmetic, comparison, `&`, `and`/`or`, `? :`, array and object constructors, and the linear
 * built-ins above. Everything else — function definitions (and so recursion), regular expressions,
 * ranges (`[1..n]`), predicates that filter (`items[x > 1]`, which may nest a whole scan per item),
 * sorting, grouping, `**`, `*`, `%`, bindings, `~>` and every higher-order or other built-in — goes to
 * a worker. Reading the data already costs that much: sending it to a worker copies all of it.
 */
export function isLinear(node: Ast | undefined): boolean {
  if (!node || typeof node !== 'object') return true;
  if (STEP_EXTRAS.some((k) => k in node)) return false;
  if (!((node.stages as Ast[] | undefined) ?? []).every((s) => s.type === 'filter' && isIndex(s.expr as Ast))) return false;
  switch (node.type) {
    case 'string':
    case 'number':
    case 'value':
    case 'variable':
    case 'name':
      return true;
    case 'path':
      return (node.steps as Ast[]).every(isLinear);
    case 'binary':
      return node.value !== '..' && isLinear(node.lhs as Ast) && isLinear(node.rhs as Ast);
    case 'unary':
      if (node.value === '-') return isLinear(node.expression as Ast);
      if (node.value === '[') return (node.expressions as Ast[]).every(isLinear);
      if (node.value === '{') return (node.lhs as Ast[][]).every((pair) => pair.every(isLinear));
      return false;
    case 'condition':
      return isLinear(node.condition as Ast) && isLinear(node.then as Ast) && isLinear(node.else as Ast);
    case 'block':
      return (node.expressions as Ast[]).every(isLinear);
    case 'function': {
      const procedure = node.procedure as Ast;
      return procedure.type === 'variable' && LINEAR_FUNCTIONS.has(procedure.value as string) && (node.arguments as Ast[]).every(isLinear);
    }
    default:
      return false;
  }
}

/**
 * The ids of the nodes whose items the expression reads (`$node("id")`), or 'all' when it names one
 * it computes (`$node($x)`) or passes `$node` around (`$f := $node`, `"a" ~> $node`): a worker gets
 * the items of those nodes, since it cannot call back into the run.
 */
export function namedNodes(ast: unknown): string[] | 'all' {
  const ids = new Set<string>();
  let all = false;
  const seen = new Set<object>();
  const visit = (node: unknown) => {
    if (all || node === null || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    const n = node as Ast;
    const procedure = n.procedure as Ast | undefined;
    if ((n.type === 'function' || n.type === 'partial') && procedure?.type === 'variable' && procedure.value === 'node') {
      const first = (n.arguments as Ast[])[0];
      if (n.type === 'function' && (n.arguments as Ast[]).length === 1 && first?.type === 'string') ids.add(first.value as string);
      else all = true;
      for (const arg of n.arguments as Ast[]) visit(arg);
      return;
    }
    if (n.type === 'variable' && n.value === 'node') {
      all = true;
      return;
    }
    for (const child of Object.values(n)) visit(child);
  };
  visit(ast);
  return all ? 'all' : [...ids];
}
