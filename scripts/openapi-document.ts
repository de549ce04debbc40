/**
 * The OpenAPI document the service serves, built without listening, without workers and on an
 * empty in-memory database. Used by `npm run lint:openapi` and by the panel's typed client
 * (scripts/build-panel.ts), so both see exactly what a deployment serves.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/platform/db.ts';

/** A production deployment's document: NODE_ENV=production and an https PUBLIC_URL. */
export async function openapiDocument(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
  try {
    const config = loadConfig({
      NODE_ENV: 'production',
      APP_SECRET: 'openapi-document-only-secret-not-used',
      PUBLIC_URL: 'https://automation.example.com',
      DATA_DIR: dir,
      LOG_LEVEL: 'silent',
    });
    const database = openDatabase({ databaseUrl: 'memory://', dataDir: dir });
    const app = await buildApp({ config, database, logger: false, workers: false });
    try {
      await app.ready();
      return app.swagger() as unknown as Record<string, unknown>;
    } finally {
      await app.close();
      await database.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
