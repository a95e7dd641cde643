import { Collection } from './collection';
import { DocumentLayer, openDocumentLayer, type LayerSettings, type OpenOptions } from './document/doc-layer';
import type { Layout } from './document/keys/layout';
import type { Database } from './kv/contract/database';
import { IndexMaintainer } from './index/maintainer';
import { STRUCTURE_JSON_FORMS } from './structures/json-forms';

/**
 * The composition root: the document layer wired with the data structures. The layers below know
 * nothing of each other's upper neighbours: the document layer reads structures' documents through
 * the JSON forms it is handed here, and structures reach a collection through its narrow port.
 */

/** The document layer whose collections also hold data structures: what {@link open} returns. */
export class DocLayer extends DocumentLayer<Collection> {
  /** @internal Use {@link open}. */
  constructor(kv: Database, layout: Layout, ownsDatabase: boolean, settings: LayerSettings) {
    const indexes = new IndexMaintainer(layout, kv.maxKeyBytes, settings.now);
    super(kv, layout, ownsDatabase, settings, {
      forms: STRUCTURE_JSON_FORMS,
      collection: (context, scope, name) => new Collection(context, scope, name, indexes),
      indexes,
    });
  }
}

/**
 * Opens doclayer over a KV database: collections of JSON documents and data structures stored one
 * key per leaf under `prefix` (see docs/documents.md and docs/structures.md). The database is, by the
 * first option given: `database` (yours to close), `path` (the lmdb engine on that folder), `fdb` (a
 * FoundationDB cluster), or `memory` / nothing (a new in-memory database); {@link DocLayer.close}
 * closes what `open` created. Opening reads and writes nothing.
 *
 * @throws DocumentError INVALID_ARGUMENT for a prefix that is neither a tuple nor bytes or starts
 *   with 0xff (FDB's system keyspace), several engine options, `durability` without `path`, or a bad
 *   sweep interval; the engine's errors (KvError, FdbUnavailableError) when it cannot be opened.
 */
export function open(options: OpenOptions = {}): Promise<DocLayer> {
  return openDocumentLayer(options, (kv, layout, owned, settings) => new DocLayer(kv, layout, owned, settings));
}
