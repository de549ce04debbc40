import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkCompose, checkDockerfile } from '../scripts/check-container.ts';

/** The container files pass the checks CI runs without Docker, and those checks catch real mistakes. */
const compose = readFileSync(new URL('../compose.yaml', import.meta.url), 'utf8');
const dockerfile = readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8');

describe('container files', () => {
  it('compose.yaml matches the Compose Specification: PostgreSQL 17 and two replicas of the app that wait for it', () => {
    expect(checkCompose(compose)).toEqual([]);
    expect(compose).toContain('image: postgres:17');
    expect(compose).toMatch(/replicas: 2/);
    expect(compose).toMatch(/condition: service_healthy/);
  });

  it('a compose file with an unknown key, a wrong type or a missing dependency is refused', () => {
    expect(checkCompose(compose.replace('restart: unless-stopped', 'restarts: unless-stopped'))).toEqual(
      expect.arrayContaining([expect.stringContaining('additional properties (restarts)')]),
    );
    expect(checkCompose(compose.replace('replicas: 2', 'replicas: two')).join('\n')).toMatch(/replicas/);
    expect(checkCompose(compose.replace('      postgres:\n        condition', '      database:\n        condition'))).toEqual(
      expect.arrayContaining([expect.stringContaining('depends on database')]),
    );
    expect(checkCompose('services: [')[0]).toMatch(/not YAML/);
  });

  it('the Dockerfile is multi-stage, runs as a non-root user with a HEALTHCHECK on /readyz and DATA_DIR as a volume, and lints clean', () => {
    expect(checkDockerfile(dockerfile)).toEqual([]);
    expect(checkDockerfile(dockerfile.replace('USER node', 'USER root'))).toEqual(['Dockerfile: the runtime stage must run as a non-root USER']);
    expect(checkDockerfile(dockerfile.replace(/^HEALTHCHECK[\s\S]*?\n(?=CMD)/m, ''))).toContain('Dockerfile: the runtime stage needs a HEALTHCHECK on /readyz');
    expect(checkDockerfile(dockerfile.replace('EXPOSE 3000', 'EXPOSE 3000/tcpx')).join('\n')).toMatch(/Dockerfile:\d+:/);
  });
});
