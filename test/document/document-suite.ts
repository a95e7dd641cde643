import { open, type DocLayer } from '../../src';
import { Database } from '../../src/kv/contract/database';
import type { FaultInjectionOptions } from '../../src/kv/engine-parts/fault-injector';
import { CountingEngine } from '../../src/kv/counting-engine';
import { documentEngines, type DocumentEngine } from '../support/document-engines';
import { roundTripEngine, RoundTrips } from '../support/round-trip-engine';

/**
 * How the document layer's behaviour tests run on every engine.
 *
 * Each `test/document/*.test.ts` file is one topic (CRUD, sub-document rules, the random model, round
 * trips, concurrency, costs) and registers its tests with {@link documentSuite}, which repeats them
 * for each engine of `test/support/document-engines.ts`, with the engine's name in every title. So:
 * - adding an engine is one entry in that list, and every topic runs on it;
 * - the topics stay separate files, which jest runs in parallel and reports separately;
 * - a test never opens a database itself: it asks the {@link DocumentTestContext} for a fresh one,
 *   and the suite closes it after the test.
 */

/** A document layer over a fresh database, with the counting wrapper every test can consult. */
export interface OpenedLayer {
  docs: DocLayer;
  /** The database under the layer (through the counting engine). */
  kv: Database;
  /** Counts what the layer reads and writes, per transaction attempt (see `counting-engine.ts`). */
  counter: CountingEngine;
}

/** A layer whose engine charges round trips as a FoundationDB cluster client pays them. */
export interface LayerWithRoundTrips extends OpenedLayer {
  /** The round trips so far (`test/support/round-trip-engine.ts`). */
  roundTrips: RoundTrips;
}

export interface DocumentTestContext {
  readonly engine: DocumentEngine;
  /** A layer over a fresh, empty database; closed after the test. */
  open(): Promise<OpenedLayer>;
  /** As {@link open}, over an engine that charges round trips as a cluster does (slower: a turn per read). */
  openWithRoundTrips(): Promise<LayerWithRoundTrips>;
  /**
   * A layer over a fresh database whose commits fail as `faults` says. Only inside
   * {@link DocumentTestContext.describeWithFaults}, which skips its tests on engines without faults.
   */
  openWithFaults(faults: FaultInjectionOptions): Promise<OpenedLayer>;
  /** `describe` when the engine can inject faults, otherwise `describe.skip` with the reason in the title. */
  describeWithFaults(title: string, body: () => void): void;
}

/**
 * Registers `body`'s tests once per engine, inside `describe(`${title} [${engine}]`)`.
 */
export function documentSuite(title: string, body: (ctx: DocumentTestContext) => void): void {
  for (const engine of documentEngines) {
    describe(`${title} [${engine.name}]`, () => {
      const opened: OpenedLayer[] = [];

      const layerOver = async (database: Database, roundTrips?: RoundTrips): Promise<OpenedLayer> => {
        const counter = new CountingEngine(roundTrips === undefined ? database.engine : roundTripEngine(database.engine, roundTrips));
        const kv = new Database(counter);
        const docs = await open({ database: kv });
        const layer = { docs, kv, counter };
        opened.push(layer);
        return layer;
      };

      afterEach(async () => {
        for (const layer of opened.splice(0)) {
          await layer.docs.close();
          await layer.kv.close();
        }
      });

      afterAll(async () => engine.cleanup?.());

      body({
        engine,
        open: async () => layerOver(await engine.open()),
        openWithRoundTrips: async () => {
          const roundTrips = new RoundTrips();
          return { ...(await layerOver(await engine.open(), roundTrips)), roundTrips };
        },
        openWithFaults: async (faults) => {
          if (!engine.openWithFaults) throw new Error(`the ${engine.name} engine cannot inject faults`);
          return layerOver(await engine.openWithFaults(faults));
        },
        describeWithFaults: (suiteTitle, suiteBody) =>
          engine.openWithFaults
            ? describe(suiteTitle, suiteBody)
            : describe.skip(`${suiteTitle} (skipped: the ${engine.name} engine cannot inject faults)`, suiteBody),
      });
    });
  }
}
