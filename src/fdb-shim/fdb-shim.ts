import type { Engine } from '../kv/contract/types';
import { Clusters, type FdbShimEngineOption } from './clusters';
import { FdbShimModule } from './native-module';

export interface FdbShimOptions {
  /**
   * Where databases opened with node-foundationdb's `fdb.open(clusterFile)` keep their data: one doclayer
   * engine (or `Database`) for every cluster file, or a function that gives the engine for a cluster file
   * the first time it is opened. Default: a new, empty memory engine per cluster file.
   */
  engine?: FdbShimEngineOption;
  /**
   * Keep the data in the folder `path` instead: a durable lmdb engine store (`openLmdbDatabase`), opened
   * on first use for every cluster file, which other processes may open at the same time. Commits are
   * flushed to disk; for other lmdb options pass `engine: new LmdbEngine({...})`. Not with `engine`.
   */
  path?: string;
}

/** The engine option for `options`: `engine`, or one lmdb store at `path`, opened when first needed. */
function engineOption(options: FdbShimOptions): FdbShimEngineOption | undefined {
  const { path } = options;
  if (path === undefined) return options.engine;
  if (options.engine !== undefined) throw new TypeError('FdbShimOptions: give `engine` or `path`, not both');
  let store: Engine | undefined;
  return () => {
    // Loaded here so that memory-only use never loads lmdb's native module.
    const { LmdbEngine } = require('../kv/lmdb') as typeof import('../kv/lmdb');
    store ??= new LmdbEngine({ path });
    return store;
  };
}

/**
 * node-foundationdb's native module, implemented over doclayer's engines. {@link installFdbShim} makes
 * `require('foundationdb')` load it in place of the compiled addon; each load gets its own
 * {@link FdbShimModule} (as each process gets its own addon), and all of them share this shim's clusters.
 */
export class FdbShim {
  private readonly clusters: Clusters;

  /** @throws TypeError when both `engine` and `path` are given. */
  constructor(options: FdbShimOptions = {}) {
    this.clusters = new Clusters(engineOption(options));
  }

  /** A new instance of the native module, as node-gyp-build returns the addon. */
  createNativeModule(): FdbShimModule {
    return new FdbShimModule(this.clusters);
  }

  /**
   * The engine behind the cluster `clusterFile` names (FDB's default cluster file when absent), made on
   * first use: a way for a test to look at the data an app wrote through node-foundationdb.
   */
  engine(clusterFile?: string): Engine {
    return this.clusters.engine(clusterFile);
  }

  /**
   * Closes the engines the shim opened (memory engines, the lmdb store at `path`) or got from the
   * `engine` function; an engine passed in as such stays open.
   */
  close(): Promise<void> {
    return this.clusters.close();
  }
}
