/**
 * The program's one source of randomness for decisions and names: jitter, generateName
 * suffixes, uids, scheduler tie breaks. By default it is Math.random (and crypto's UUIDs);
 * a simulation calls `seedRandom(seed)` before starting its cluster, and every draw after
 * that comes from one seeded generator, so a run with the same seed makes the same draws.
 * Secrets (tokens, keys, certificates) never come from here: they use node:crypto directly.
 *
 * The generator is sfc32 (Chris Doty-Humphrey's Small Fast Counting generator, public
 * domain), seeded through splitmix32, written here rather than taken from a library: it is
 * a dozen lines, and a recorded seed must replay the same run after any dependency update,
 * so the sequence must be fixed by this file, not by a package's version.
 */

import { randomUUID as cryptoUUID } from 'node:crypto';

export type RandomSource = () => number;

let source: RandomSource = Math.random;
let seeded = false;

/** A number in [0, 1) from the program's source (seeded or Math.random). */
export function random(): number {
  return source();
}

/**
 * From now on every `random()`, `randomUUID()` draws from a generator seeded with `seed`;
 * `undefined` goes back to Math.random and crypto. The seed is any integer (taken mod 2^32).
 */
export function seedRandom(seed: number | undefined): void {
  if (seed === undefined) {
    source = Math.random;
    seeded = false;
    return;
  }
  source = seededRandom(seed);
  seeded = true;
}

/** Whether `seedRandom` set a seed (a simulation run). */
export function isSeeded(): boolean {
  return seeded;
}

/** A fresh generator of its own, for a component that wants a stream apart from the program's. */
export function seededRandom(seed: number): RandomSource {
  let s = seed >>> 0;
  const splitmix = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = splitmix();
  let b = splitmix();
  let c = splitmix();
  let d = splitmix();
  return () => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
}

/** A version 4 UUID: crypto's, or drawn from the seeded source in a simulation run. */
export function randomUUID(): string {
  if (!seeded) return cryptoUUID();
  let hex = '';
  for (let i = 0; i < 4; i++)
    hex += Math.floor(source() * 4294967296)
      .toString(16)
      .padStart(8, '0');
  // Version 4, variant 10xx, as RFC 9562 section 5.4 lays the bits out.
  const variant = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
