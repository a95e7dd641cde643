import { ChangeFeed, type CompactChangesOptions } from './changes/change-feed';
import type { CompactionReport } from './changes/compaction';
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

/** Options of {@link open}: the document layer's, and the change feed's. */
export interface DocLayerOptions extends OpenOptions {
  /**
   * How long the change feed keeps removals (tombstones), in ms; default 3 days. A reader whose
   * token is older than a discarded removal gets HISTORY_EXPIRED (see docs/changes.md).
   */
  changeRetentionMs?: number;
}

/** The document layer whose collections also hold data structures and change feeds: what {@link open} returns. */
export class DocLayer extends DocumentLayer<Collection> {
  private readonly feed: ChangeFeed;

  /** @internal Use {@link open}. */
  constructor(kv: Database, layout: Layout, ownsDatabase: boolean, settings: LayerSettings, changeRetentionMs?: number) {
    const indexes = new IndexMaintainer(layout, kv.maxKeyBytes, settings.now);
    const feed = new ChangeFeed(kv, layout, settings.now, changeRetentionMs);
    super(kv, layout, ownsDatabase, settings, {
      forms: STRUCTURE_JSON_FORMS,
      observers: [feed.recorder],
      sweep: () => feed.compactAll(),
      collection: (context, scope, name) => new Collection(context, scope, name, indexes, feed),
      indexes,
    });
    this.feed = feed;
  }

  /**
   * Compacts the change feed of every collection (the expiry sweeper also runs this): entries
   * superseded by a later change of their document go, and removals older than the retention.
   *
   * @throws ChangeFeedError INVALID_ARGUMENT for a bad option.
   */
  compactChanges(options: CompactChangesOptions = {}): Promise<CompactionReport> {
    return this.feed.compactAll(options);
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
 *   with 0xff (FDB's system keyspace), several engine options, `durability` or `readCacheBytes`
 *   without `path`, or a bad sweep interval; the engine's errors (KvError, FdbUnavailableError) when
 *   it cannot be opened.
 */
export function open(options: DocLayerOptions = {}): Promise<DocLayer> {
  return openDocumentLayer(options, (kv, layout, owned, settings) => new DocLayer(kv, layout, owned, settings, options.changeRetentionMs));
}
