import type { Rng } from './world.ts';

const ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';

/** mulberry32: small, fast and good enough to replay a run's choices from its seed. */
export function seeded(seed: number): Rng {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (below: number) => Math.floor(next() * below);
  return {
    next,
    int,
    pick: <T>(items: readonly T[]) => items[int(items.length)]!,
    id: (length = 10) => Array.from({ length }, () => ALPHABET[int(ALPHABET.length)]).join(''),
  };
}

/** An independent stream for one consumer (a load, the fault schedule), derived from the run's seed and a name. */
export function fork(seed: number, name: string): Rng {
  let h = seed >>> 0;
  for (const c of name) h = Math.imul(h ^ c.charCodeAt(0), 0x9e3779b1) >>> 0;
  return seeded(h);
}
