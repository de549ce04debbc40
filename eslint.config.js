// Flat config: typescript-eslint's recommended rules over the sources, tests and benchmarks.
// (ESLint 10 no longer bundles @eslint/js; tsc already reports undefined names and unreachable code,
// and `verbatimModuleSyntax` already makes type-only imports say `import type`, as type stripping needs.)
import { readdirSync } from 'node:fs';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import reactHooks from 'eslint-plugin-react-hooks';

// The import boundaries of docs/architecture.md ("Import rules"), checked on resolved paths so that
// `../x` and `../../modules/x` are the same file. Zones are built from the module folders, so a new
// module is covered without editing this file.
const root = import.meta.dirname;
const modules = readdirSync(`${root}/src/modules`, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);
const platformZone = {
  target: ['src/platform', 'src/shared'],
  from: 'src/modules',
  message: 'The platform knows no module: move the shared piece into src/platform, or pass it in from src/services.ts.',
};
const rootZone = {
  target: ['src/modules', 'src/platform', 'src/shared'],
  from: ['src/services.ts', 'src/app.ts', 'src/workers.ts', 'src/main.ts', 'src/cli'],
  message:
    'Only the composition root (src/services.ts, src/app.ts, src/workers.ts) knows every module: declare the narrow interface you need and let services.ts pass it in.',
};
// A module reads another module's rows through that module's service or its queries.ts (plain read
// functions), never its tables. A tables.ts may still import another tables.ts: a foreign key has to
// name the table it references, and drizzle-kit reads them all.
const tablesZones = modules.map((name) => ({
  target: `src/modules/${name}`,
  from: modules.filter((other) => other !== name).map((other) => `src/modules/${other}/tables.ts`),
  message: `Another module's tables are its own: read them through its service or its queries.ts (only a tables.ts may import them, for foreign keys).`,
}));
const boundaries = (zones) => ({ 'import-x/no-restricted-paths': ['error', { basePath: root, zones }] });

export default defineConfig(
  {
    ignores: ['node_modules/', 'data/', 'migrations/', 'coverage/', 'panel/dist/', 'panel/.dist-*/', 'panel/src/routeTree.gen.ts', 'panel/src/api/schema.d.ts'],
  },
  tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2024, sourceType: 'module' },
    rules: {
      // `const { auth: _auth, ...rest } = opts` drops a field on purpose; `_`-prefixed names are deliberate.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js'] })] },
    rules: boundaries([platformZone, rootZone, ...tablesZones]),
  },
  {
    // Tests drive the whole application, and a tables.ts names the tables its foreign keys reference.
    files: ['src/**/*.test.ts', 'src/**/test/**/*.ts', 'src/modules/*/tables.ts'],
    rules: boundaries([platformZone]),
  },
  {
    // Platform events and their outbox rows are written only by the events module's CTEs
    // (src/modules/events/outbox.ts), which other statements compose: an event written by hand
    // could forget its outbox row, and the dispatcher would never send it.
    files: ['src/**/*.ts'],
    ignores: ['src/modules/events/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...['TemplateElement[value.raw', 'Literal[value'].map((node) => ({
          selector: `${node}=/insert\\s+into\\s+(events|event_outbox)\\b/i]`,
          message:
            'Write platform events through the events module: EventsService.record, or compose outboxCtes/outboxSql (events/outbox.ts) into your statement.',
        })),
      ],
    },
  },
  {
    // The panel: React's rules of hooks, and it shares with the server only the generated API types
    // and the pure modules in src/shared (never server code: it runs in the browser).
    files: ['panel/src/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks, 'import-x': importX },
    settings: { 'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.tsx', '.js'] })] },
    rules: {
      ...reactHooks.configs.recommended.rules,
      'import-x/no-restricted-paths': [
        'error',
        {
          basePath: root,
          zones: [
            {
              target: 'panel',
              from: 'src',
              except: ['./shared'],
              message: 'The panel runs in the browser: it may import only src/shared (pure, dependency-free modules) and the generated API types.',
            },
          ],
        },
      ],
    },
  },
  {
    // scripts/check-node.cjs must load on any old Node.js, so it is plain CommonJS.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
