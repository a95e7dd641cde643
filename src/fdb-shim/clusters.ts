import type { Database } from '../kv/contract/database';
import { MemoryEngine } from '../kv/memory/memory-engine';
import type { Engine } from '../kv/contract/types';

/** An engine, or a doclayer {@link Database} (its engine is used). */
export type EngineOrDatabase = Engine | Database;

/**
 * Where the shim's databases keep their data: one engine for every cluster file, or a function that
 * gives the engine for a cluster file (`undefined` for FDB's default cluster file) the first time it is
 * opened.
 */
export type FdbShimEngineOption = EngineOrDatabase | ((clusterFile: string | undefined) => EngineOrDatabase);

function engineOf(source: EngineOrDatabase): Engine {
  return 'engine' in source ? source.engine : source;
}

/**
 * The clusters the shim serves, by cluster file: `fdb.open(clusterFile)` connects to the same cluster,
 * with the same data, each time it is given the same file, as with a real cluster. The shim never reads
 * the file; its path is only a name.
 */
export class Clusters {
  private readonly engines = new Map<string | undefined, Engine>();

  /** `option` as {@link FdbShimEngineOption}; by default each cluster is a new, empty memory engine. */
  constructor(private readonly option: FdbShimEngineOption = () => new MemoryEngine()) {}

  /** The engine of the cluster `clusterFile` names, made on first use. */
  engine(clusterFile: string | undefined): Engine {
    if (typeof this.option !== 'function') return engineOf(this.option);
    let engine = this.engines.get(clusterFile);
    if (!engine) {
      engine = engineOf(this.option(clusterFile));
      this.engines.set(clusterFile, engine);
    }
    return engine;
  }

  /** Closes the engines this object made or was given by the function; a single engine passed in stays open. */
  async close(): Promise<void> {
    // One engine may serve several cluster files.
    const engines = new Set(this.engines.values());
    this.engines.clear();
    await Promise.all([...engines].map((engine) => engine.close()));
  }
}
