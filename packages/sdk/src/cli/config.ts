import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** What `automation login` / `automation config set` store. */
export interface StoredConfig {
  url?: string;
  apiKey?: string;
  /** A user session: the refresh token (rotating; rewritten on every renewal) and the last access token. */
  refreshToken?: string;
  accessToken?: string;
  email?: string;
  /** The organization commands act on unless --org or AUTOMATION_ORG says otherwise. */
  orgId?: string;
}

/**
 * The config file: $AUTOMATION_CONFIG, else the user's config directory
 * ($XDG_CONFIG_HOME or ~/.config on Linux and macOS, %APPDATA% on Windows) + automation/config.json.
 */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AUTOMATION_CONFIG) return env.AUTOMATION_CONFIG;
  const base = process.platform === 'win32' ? (env.APPDATA ?? join(homedir(), 'AppData', 'Roaming')) : env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'automation', 'config.json');
}

export function readConfig(path = configPath()): StoredConfig {
  if (!existsSync(path)) return {};
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as StoredConfig;
  } catch (error) {
    throw new Error(`The config file ${path} could not be read: ${(error as Error).message}`, { cause: error });
  }
}

/** Writes the file readable by its owner only (0600), its directory 0700; by rename, so a crash never leaves half a file. */
export function writeConfig(config: StoredConfig, path = configPath()): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const clean = Object.fromEntries(Object.entries(config).filter(([, v]) => v !== undefined && v !== ''));
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(clean, null, 2) + '\n', { mode: 0o600 });
  chmodSync(temp, 0o600);
  renameSync(temp, path);
}
