// Import rules checked over the resolved import graph (type imports included), part of `npm run lint`
// (scripts/lint-imports.ts runs it). docs/architecture.md ("Module boundaries") says why.
/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment:
        'Modules import each other in one direction: a cycle (type imports included) means two files that cannot be understood, tested or split apart alone. Move what both need into a third file, or pass it in from src/services.ts through a port.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'module-face',
      severity: 'error',
      comment:
        'Another module is reached only through its index.ts, its one public face: import what it exports there (and export it there if it is meant for other modules).',
      from: { path: '^src/modules/([^/]+)/', pathNot: '\\.test\\.ts$|/test/' },
      to: { path: '^src/modules/([^/]+)/', pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$', '^src/modules/[^/]+/tables\\.ts$'] },
    },
    {
      name: 'root-uses-faces',
      severity: 'error',
      comment: 'The composition root (services.ts, app.ts, workers.ts, main.ts, the CLI) reaches a module only through its index.ts.',
      from: { path: '^src/(services|app|workers|main)\\.ts$|^src/cli/' },
      to: { path: '^src/modules/[^/]+/', pathNot: '^src/modules/[^/]+/index\\.ts$' },
    },
  ],
  options: {
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
