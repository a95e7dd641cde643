import type { Engine, ReadTransaction, Transaction } from '../../src/kv/contract/types';

/**
 * An engine wrapper that charges round trips as a FoundationDB cluster client pays them, for
 * `npm run bench:round-trips` and the tests that state an operation's round trips: a transaction's
 * read version is one round trip (taken by its first read or its commit, shared by reads issued
 * together), each read (get, getKey, a range read, each batch of a streamed range: 64 pairs,
 * doubling) is one, and the commit of a transaction that writes is one (a read-only commit sends
 * nothing). Round trips issued together are one: requests issued before the pending round trip goes
 * out join it, so the count is the length of the longest chain of requests that each waited on the
 * one before. Every read that reaches the engine is charged, even one FDB's client would serve from
 * its read-your-writes cache (a key the transaction wrote or read before): the counts are an upper
 * bound.
 */

/** Round trips as the wrapped engine sees them: one per group of requests issued together. */
export class RoundTrips {
  /** Round trips that have gone out. */
  count = 0;
  private pending: Promise<void> | undefined;

  /** One round trip, shared with every request made before it goes out (on the next turn). */
  trip(): Promise<void> {
    this.pending ??= new Promise<void>((resolve) =>
      setImmediate(() => {
        this.pending = undefined;
        this.count++;
        resolve();
      }),
    );
    return this.pending;
  }
}

/** `engine` whose transactions pay round trips as on a cluster (see the file comment). */
export function roundTripEngine(engine: Engine, trips: RoundTrips): Engine {
  const wrap = (inner: Transaction): Transaction => {
    // The attempt's read version: one round trip, shared by the reads that need it at once.
    let readVersion: Promise<void> | undefined;
    // Whether the attempt writes: a read-only commit goes nowhere on a cluster.
    let writes = false;
    const version = () => (readVersion ??= trips.trip());
    const read = async <T>(call: () => Promise<T>): Promise<T> => {
      await version();
      await trips.trip();
      return call();
    };
    const reader = (target: ReadTransaction): ReadTransaction => ({
      get: (key) => read(() => target.get(key)),
      getKey: (selector) => read(() => target.getKey(selector)),
      getRangeAll: (begin, end, options) => read(() => target.getRangeAll(begin, end, options)),
      getRange: (begin, end, options) => ({
        async *[Symbol.asyncIterator]() {
          // One round trip per batch, in the client's batch sizes (64, doubling up to 4,096).
          const it = target.getRange(begin, end, options)[Symbol.asyncIterator]();
          let yielded = 0;
          let boundary = 0;
          let size = 64;
          for (;;) {
            const fetches = yielded === boundary;
            const next = fetches ? await read(() => it.next()) : await it.next();
            if (fetches) {
              boundary += size;
              size = Math.min(2 * size, 4096);
            }
            if (next.done === true) return;
            yielded++;
            yield next.value;
          }
        },
      }),
      getReadVersion: async () => {
        await version();
        return target.getReadVersion();
      },
      // A cluster sends the metadata version with the read version: no round trip of its own.
      getMetadataVersion: async () => {
        await version();
        return target.getMetadataVersion();
      },
    });
    const reads = reader(inner);
    let snapshotReads: ReadTransaction | undefined;
    return new Proxy(inner, {
      get(target, prop, receiver) {
        switch (prop) {
          case 'get':
          case 'getKey':
          case 'getRangeAll':
          case 'getRange':
          case 'getReadVersion':
          case 'getMetadataVersion':
            // Arrow functions over the wrapper's state: no `this` to lose.
            // eslint-disable-next-line @typescript-eslint/unbound-method
            return reads[prop];
          case 'snapshot':
            return () => (snapshotReads ??= reader(target.snapshot()));
          case 'commit':
            return async () => {
              if (writes) {
                await version();
                await trips.trip();
              }
              return target.commit();
            };
          case 'onError':
            return async (err: unknown) => {
              readVersion = undefined;
              writes = false;
              return target.onError(err);
            };
          case 'reset':
            return () => {
              readVersion = undefined;
              writes = false;
              target.reset();
            };
          case 'set':
          case 'clear':
          case 'clearRange':
          case 'atomicOp':
          case 'add':
          case 'max':
          case 'min':
          case 'setVersionstampedKey':
          case 'setVersionstampedValue':
          case 'addWriteConflictRange': {
            // A write once called: looking a method up (`typeof tr.set`, as a check that a value is a
            // transaction does) writes nothing.
            const write = Reflect.get(target, prop, receiver) as (...args: unknown[]) => unknown;
            return (...args: unknown[]) => {
              writes = true;
              return write.apply(target, args);
            };
          }
        }
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  };
  return {
    name: `${engine.name} with round trips`,
    maxKeyBytes: engine.maxKeyBytes,
    createTransaction: () => wrap(engine.createTransaction()),
    close: () => engine.close(),
  };
}
