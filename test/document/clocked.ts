/**
 * Helpers of the tests whose layers run on a clock the test moves (`open({ now })`, ms since the
 * epoch): expiry of documents and structures, and locks.
 */
import { open, type DocLayer } from '../../src';
import { Layout } from '../../src/document/keys/layout';
import { strinc } from '../../src/kv/contract/bytes';
import type { Database } from '../../src/kv/contract/database';
import type { DocumentTestContext } from './document-suite';

/** Where every clocked layer's clock starts. */
export const T0 = Date.UTC(2030, 0, 1);

const layout = new Layout(['doclayer']);

/** A layer whose clock the test sets, over a fresh database; closed after the test. */
export function clocked(ctx: DocumentTestContext) {
  const layers: DocLayer[] = [];
  afterEach(async () => {
    for (const layer of layers.splice(0)) await layer.close();
  });
  return async () => {
    const { kv, counter } = await ctx.open();
    const clock = { now: T0 };
    const docs = await open({ database: kv, now: () => clock.now });
    layers.push(docs);
    return { docs, kv, counter, clock, c: docs.collection('app.items') };
  };
}

/** The expiry index's entries: [expiresAt, collectionId, id]. */
export async function indexEntries(kv: Database): Promise<unknown[][]> {
  const { begin, end } = layout.system.range(['expiry']);
  const pairs = await kv.getRangeAll(begin, end);
  return pairs.map((pair) => layout.system.unpack(pair.key).slice(1));
}

/** How many keys the documents of a collection have. */
export async function documentKeys(kv: Database, collectionId: number): Promise<number> {
  const prefix = layout.collectionPrefix(collectionId);
  return (await kv.getRangeAll(prefix, strinc(prefix))).length;
}
