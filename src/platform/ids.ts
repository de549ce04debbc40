import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case

export const ID_PREFIXES = {
  organization: 'org',
  project: 'prj',
  user: 'usr',
  membership: 'mem',
  apiKey: 'key',
  refreshToken: 'rtk',
  lead: 'lead',
  event: 'evt',
  workflow: 'wf',
  run: 'run',
  agent: 'agt',
  agentRun: 'arun',
  post: 'post',
  report: 'rep',
  approval: 'apr',
  notification: 'ntf',
  integration: 'int',
  webhookEndpoint: 'whe',
  delivery: 'dlv',
  media: 'med',
  usage: 'use',
  invitation: 'inv',
  passwordReset: 'pwr',
  inbox: 'inb',
  contact: 'ctc',
  conversation: 'conv',
  message: 'msg',
  campaign: 'cmp',
  recipient: 'rcp',
  suppression: 'sup',
  consent: 'cns',
  syncRun: 'syn',
  analyticsRule: 'arl',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

let lastMs = 0;
let lastRandom: Uint8Array = new Uint8Array(10);

function encode(ms: number, rand: Uint8Array): string {
  let t = ms;
  const time: string[] = [];
  for (let i = 0; i < 10; i++) {
    time.push(ALPHABET[t % 32]!);
    t = Math.floor(t / 32);
  }
  return time.reverse().join('') + encodeBits(rand);
}

/** 80 bits -> 16 base32 characters. */
function encodeBits(rand: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of rand) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return out;
}

// Random bytes are drawn from the system generator 4 KB at a time rather than 10 bytes per id.
let pool = Buffer.alloc(0);
let poolAt = 0;
function random10(): Uint8Array {
  if (poolAt + 10 > pool.length) {
    pool = randomBytes(4096);
    poolAt = 0;
  }
  poolAt += 10;
  return pool.subarray(poolAt - 10, poolAt);
}

/** ULID-style: 48-bit millisecond time then 80 random bits, monotonic within one millisecond. */
export function newId(kind: IdKind, now: number = Date.now()): string {
  let rand: Uint8Array;
  if (now <= lastMs) {
    rand = Uint8Array.from(lastRandom);
    for (let i = rand.length - 1; i >= 0; i--) {
      rand[i] = (rand[i]! + 1) & 0xff;
      if (rand[i] !== 0) break;
    }
    now = lastMs;
  } else {
    rand = random10();
  }
  lastMs = now;
  lastRandom = rand;
  return `${ID_PREFIXES[kind]}_${encode(now, rand)}`;
}

const SHAPE = new RegExp(`^[a-z]+_[${ALPHABET}]{26}$`);

/**
 * An id of the same shape that is the same every time it is derived from the same parts, so a send
 * repeated after a retry or a crash carries the id of the first try: the time part of `anchor` (an
 * id of this scheme, e.g. the run's), then 80 bits of SHA-256 over the parts.
 */
export function derivedId(kind: IdKind, anchor: string, parts: string[]): string {
  const digest = createHash('sha256')
    .update([anchor, ...parts].join('\u0000'))
    .digest();
  const time = SHAPE.test(anchor) ? anchor.slice(anchor.indexOf('_') + 1, anchor.indexOf('_') + 11) : '0'.repeat(10);
  return `${ID_PREFIXES[kind]}_${time}${encodeBits(digest.subarray(0, 10))}`;
}

export function hasPrefix(id: string, kind: IdKind): boolean {
  return id.startsWith(ID_PREFIXES[kind] + '_');
}
