/**
 * `npm run lint:openapi`: writes the OpenAPI document the service serves (scripts/openapi-document.ts)
 * to a temporary file and lints it with Spectral and the
 * OWASP ruleset (.spectral.yaml). Fails on any error-level result; the rules that are decisions are
 * turned off or narrowed in .spectral.yaml and listed in docs/openapi.md.
 *
 * The document is the one a production deployment serves: NODE_ENV=production and an https
 * PUBLIC_URL (in development PUBLIC_URL is http://localhost, which the TLS rule would rightly flag).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openapiDocument } from './openapi-document.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
const file = join(dir, 'openapi.json');
let status = 1;
try {
  writeFileSync(file, JSON.stringify(await openapiDocument(), null, 2));

  const spectral = join(root, 'node_modules', '.bin', 'spectral');
  const extra = process.argv.slice(2);
  const result = spawnSync(
    spectral,
    ['lint', '--ruleset', join(root, '.spectral.yaml'), '--fail-severity', 'error', '--display-only-failures', ...extra, file],
    { stdio: 'inherit', cwd: root },
  );
  status = result.status ?? 1;
  if (status === 0) console.log('OpenAPI document: no error-level Spectral results (OWASP ruleset; decisions in docs/openapi.md)');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(status);
