export const MAX_ENVELOPE_BYTES = 256 * 1024;

const isIdKey = (key: string) => key === 'id' || /Id$/.test(key) || /Ids$/.test(key);

/**
 * The JSON body of an envelope, at most `limit` bytes. A larger one is shortened by trimming the
 * largest values (long strings cut, long arrays cut, big objects summarised) while every `id` and
 * `…Id` field stays whole, so receivers can fetch the full record through the API.
 */
export function envelopeBody(envelope: object, limit = MAX_ENVELOPE_BYTES): string {
  const text = JSON.stringify(envelope);
  if (Buffer.byteLength(text) <= limit) return text;
  let copy = JSON.parse(text) as Record<string, unknown>;
  // Halve the allowance each round until the whole fits; ids are never touched.
  for (let cap = 64 * 1024; cap >= 16; cap = Math.floor(cap / 2)) {
    copy = trim(copy, cap) as Record<string, unknown>;
    copy.truncated = true;
    const out = JSON.stringify(copy);
    if (Buffer.byteLength(out) <= limit) return out;
  }
  // Only ids left: keep the envelope fields and the payload's ids.
  const e = envelope as Record<string, unknown>;
  return JSON.stringify({
    id: e.id,
    type: e.type,
    organizationId: e.organizationId,
    projectId: e.projectId,
    at: e.at,
    payload: idsOnly(e.payload),
    truncated: true,
  });
}

function trim(value: unknown, cap: number, key = ''): unknown {
  if (typeof value === 'string') {
    if (isIdKey(key) || value.length <= cap) return value;
    return value.slice(0, cap) + '…';
  }
  if (Array.isArray(value)) {
    const items = value.length > cap / 16 ? value.slice(0, Math.max(1, Math.floor(cap / 16))) : value;
    const out = items.map((v) => trim(v, cap, key));
    if (items.length < value.length) out.push(`… ${value.length - items.length} more`);
    return out;
  }
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = trim(v, cap, k);
    return out;
  }
  return value;
}

function idsOnly(value: unknown): unknown {
  if (!value || typeof value !== 'object') return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (isIdKey(k) && (typeof v === 'string' || Array.isArray(v))) out[k] = v;
    else if (v && typeof v === 'object' && !Array.isArray(v)) {
      const inner = idsOnly(v);
      if (inner && Object.keys(inner).length) out[k] = inner;
    }
  }
  return out;
}
