/**
 * The module boundaries of docs/architecture.md, checked over the source (part of `npm run lint`):
 *
 * - imports (dependency-cruiser, rules in .dependency-cruiser.mjs, type imports included): no cycle;
 *   another module only through its index.ts; the composition root only through index.ts files;
 * - tables: a module's SQL names only its own tables (each table belongs to the module whose
 *   tables.ts declares it); another module's rows go through what that module exports;
 * - classes: a module names no other module's class (its services), not even as a type; it declares
 *   what it uses of them as interfaces in its ports.ts, and services.ts passes the services in.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = join(import.meta.dirname, '..');

interface Violation {
  where: string;
  why: string;
}

/** dependency-cruiser over src/, as its CLI runs it (the config names the rules and the resolver). */
function importViolations(): Violation[] {
  const bin = join(root, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');
  let output: string;
  try {
    output = execFileSync(process.execPath, [bin, 'src', '--config', '.dependency-cruiser.mjs', '--output-type', 'json'], {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    // It exits non-zero when there are violations, with the report on stdout all the same.
    output = (error as { stdout?: string }).stdout ?? '';
    if (!output) throw error;
  }
  const report = JSON.parse(output) as {
    summary: { violations: { from: string; to: string; rule: { name: string }; cycle?: ({ name: string } | string)[] }[] };
  };
  const seenCycles = new Set<string>();
  const found: Violation[] = [];
  for (const v of report.summary.violations) {
    if (v.rule.name === 'no-cycles') {
      // One line per cycle, whichever of its files it was found from.
      const members = [v.from, ...(v.cycle ?? []).map((c) => (typeof c === 'string' ? c : c.name))];
      const id = [...new Set(members)].sort().join(' ');
      if (seenCycles.has(id)) continue;
      seenCycles.add(id);
      found.push({ where: v.from, why: `import cycle: ${members.join(' → ')}` });
    } else {
      found.push({ where: v.from, why: `${v.rule.name}: imports ${v.to}` });
    }
  }
  return found;
}

const tsFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => join(e.parentPath, e.name))
    .filter((f) => !/[/\\]test[/\\]/.test(relative(root, f)));

/** The owner of a source file: its module's folder name, `platform`, or `root` (services.ts, the CLI…). */
function ownerOf(file: string): string {
  const rel = relative(join(root, 'src'), file).split(/[/\\]/);
  if (rel[0] === 'modules') return rel[1]!;
  if (rel[0] === 'platform') return 'platform';
  return 'root';
}

/** Every table and the module whose tables.ts declares it (pgTable('name', …)). */
function tableOwners(): Map<string, string> {
  const owners = new Map<string, string>();
  for (const file of tsFiles(join(root, 'src')).filter((f) => f.endsWith('tables.ts'))) {
    for (const m of readFileSync(file, 'utf8').matchAll(/pgTable\(\s*'([a-z0-9_]+)'/g)) owners.set(m[1]!, ownerOf(file));
  }
  return owners;
}

const SQL_VERB = /\b(?:select|insert\s+into|update|delete\s+from|with|create|alter|drop)\b/i;

/**
 * The SQL of a file, with line numbers: every part of a template tagged `sql…` (Drizzle's sql``,
 * sql.raw aside), and any other string or template that holds an SQL verb (a prepared statement's
 * text). Prose (an error message, a model's prompt) that happens to say "from leads" is left out.
 */
function sqlOf(file: string): { text: string; line: number }[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: { text: string; line: number }[] = [];
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
  const visit = (node: ts.Node, tagged: boolean) => {
    if (ts.isTaggedTemplateExpression(node)) {
      const isSql = /^sql\b/.test(node.tag.getText());
      visit(node.tag, tagged);
      visit(node.template, isSql);
      return;
    }
    if (ts.isTemplateExpression(node)) {
      const parts = [node.head, ...node.templateSpans.map((s) => s.literal)];
      const whole = parts.map((p) => p.text).join(' ');
      if (tagged || SQL_VERB.test(whole)) for (const p of parts) out.push({ text: p.text, line: lineOf(p) });
      for (const span of node.templateSpans) visit(span.expression, false);
      return;
    }
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      if (tagged || SQL_VERB.test(node.text)) out.push({ text: node.text, line: lineOf(node) });
      return;
    }
    node.forEachChild((child) => visit(child, false));
  };
  visit(source, false);
  return out;
}

function tableViolations(): Violation[] {
  const owners = tableOwners();
  const names = [...owners.keys()].sort((a, b) => b.length - a.length).join('|');
  // A table named where SQL names one: after from, join, into, update, table, truncate or references.
  const named = new RegExp(`\\b(?:from|join|into|update|table|truncate|references)\\s+(?:only\\s+)?"?(${names})"?(?![a-z0-9_])`, 'gi');
  const found: Violation[] = [];
  for (const file of tsFiles(join(root, 'src'))) {
    const owner = ownerOf(file);
    if (file.endsWith('tables.ts')) continue;
    for (const { text, line } of sqlOf(file)) {
      for (const m of text.matchAll(named)) {
        const table = m[1]!.toLowerCase();
        const tableOwner = owners.get(table)!;
        if (tableOwner === owner) continue;
        const rel = relative(root, file);
        found.push({ where: `${rel}:${line}`, why: `names the table ${table}, which belongs to the ${tableOwner} module: use what that module exports` });
      }
    }
  }
  return found;
}

/**
 * The classes each module's index.ts exports (its services, for the composition root to build).
 * Another module never names them, not even as a type: it declares what it uses of them as an
 * interface in its own ports.ts, which services.ts fills with the real service.
 */
function classViolations(): Violation[] {
  const modulesDir = join(root, 'src/modules');
  const classes = new Map<string, Set<string>>();
  for (const mod of readdirSync(modulesDir)) {
    const face = join(modulesDir, mod, 'index.ts');
    const names = new Set<string>();
    for (const m of readFileSync(face, 'utf8').matchAll(/export \{([^}]*)\} from '\.\/([^']+)'/g)) {
      const declared = readFileSync(join(modulesDir, mod, m[2]!), 'utf8');
      for (const part of m[1]!.split(',').map((p) => p.trim().replace(/^type\s+/, ''))) {
        if (new RegExp(`export (?:abstract )?class ${part}\\b`).test(declared)) names.add(part);
      }
    }
    classes.set(mod, names);
  }
  const found: Violation[] = [];
  for (const file of tsFiles(modulesDir)) {
    const owner = ownerOf(file);
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    for (const stmt of source.statements) {
      if (!ts.isImportDeclaration(stmt) || !ts.isStringLiteral(stmt.moduleSpecifier)) continue;
      const target = resolve(dirname(file), stmt.moduleSpecifier.text);
      const other = ownerOf(target);
      if (other === owner || relative(join(modulesDir, other), target) !== 'index.ts') continue;
      const bindings = stmt.importClause?.namedBindings;
      if (!bindings || !ts.isNamedImports(bindings)) continue;
      for (const el of bindings.elements) {
        const name = (el.propertyName ?? el.name).text;
        if (!classes.get(other)?.has(name)) continue;
        const rel = relative(root, file);
        const line = source.getLineAndCharacterOfPosition(el.getStart()).line + 1;
        found.push({
          where: `${rel}:${line}`,
          why: `names ${name}, a class of the ${other} module: declare what you use of it as an interface in your module's ports.ts (services.ts passes the service in)`,
        });
      }
    }
  }
  return found;
}

const all = [...importViolations(), ...tableViolations(), ...classViolations()];
for (const v of all) console.error(`${v.where}  ${v.why}`);
console.log(`module boundaries: ${all.length} violation(s)`);
if (all.length) process.exit(1);
