import { fullFormats } from 'ajv-formats/dist/formats.js';
import type { FormatDefinition } from 'ajv';

/**
 * The instants the service accepts from clients: years 1 to 9999 in UTC. PostgreSQL has no year 0
 * (`0000-01-01` is "out of range" there, a 500 if it gets that far) and JavaScript dates end in
 * year 275760; four-digit years are what every ISO 8601 field of the API means.
 */
const MAX_MS = Date.UTC(10000, 0, 1);
// Date.UTC maps years 0–99 to 1900–1999, so year 1 is set explicitly.
const MIN_MS = new Date(0).setUTCFullYear(1, 0, 1);

export function isStorableTime(ms: number): boolean {
  return Number.isFinite(ms) && ms >= MIN_MS && ms < MAX_MS;
}

const rfc3339 = fullFormats['date-time'] as { validate: (s: string) => boolean; compare: (a: string, b: string) => number | undefined };

/**
 * The `date-time` format of every request schema: RFC 3339 (as ajv-formats checks it) and an
 * instant the store can hold. Installed on the request validators in app.ts, so no route needs its
 * own check.
 */
export const dateTimeFormat: FormatDefinition<string> = {
  type: 'string',
  validate: (s: string) => rfc3339.validate(s) && isStorableTime(Date.parse(s)),
  compare: rfc3339.compare,
};
