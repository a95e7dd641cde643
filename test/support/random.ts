import { seededRandom } from '../../src/kv/engine-parts/seeded-random';

/**
 * Seeded randomness for tests. Every randomized test takes its seed from {@link testSeed}, names it in
 * its failure messages, and replays exactly when run again with `DOCLAYER_SEED=<seed>`.
 */

/** Conveniences over the library's seeded PRNG: the same seed always yields the same sequence. */
export class Random {
  /** A float in [0, 1). */
  readonly next: () => number;

  constructor(readonly seed: number) {
    this.next = seededRandom(seed);
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** An integer in [min, max]. */
  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Random.pick: no items');
    return items[this.int(items.length)];
  }

  /** `length` random bytes. */
  bytes(length: number): Buffer {
    const out = Buffer.allocUnsafe(length);
    for (let i = 0; i < length; i++) out[i] = this.int(256);
    return out;
  }
}

const DEFAULT_SEED = 0x5eed;

/**
 * The seed for a randomized test: `DOCLAYER_SEED` from the environment when set (to replay a failure),
 * otherwise a fixed default mixed with `salt`, so that different tests explore different sequences but
 * every run of the suite is the same.
 */
export function testSeed(salt = 0): number {
  const fromEnv = process.env.DOCLAYER_SEED;
  if (fromEnv !== undefined && fromEnv !== '') {
    const seed = Number(fromEnv);
    if (!Number.isInteger(seed)) throw new RangeError(`DOCLAYER_SEED must be an integer, got ${fromEnv}`);
    return seed >>> 0;
  }
  return (DEFAULT_SEED ^ Math.imul(salt + 1, 0x9e3779b1)) >>> 0;
}
