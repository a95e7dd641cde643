import { Buffer } from 'node:buffer';
import type { Layout } from '../document/keys/layout';
import { pack, type TupleItem } from '../tuple';
import { packPrefixed } from '../tuple/pack';

/**
 * The keys of one collection's secondary indexes, under the document layer's index section for the
 * collection (`Layout.indexPrefix`, cleared with the collection):
 *
 * ```
 * <ip> = <prefix> 0x02 <leb128(c)>
 * <ip> 0x00                                        the catalog: every index's definition and state (JSON)
 * <ip> 0x02 <tuple(indexId)> <values> <tuple(id)>  an entry: the field values (value-key.ts, a desc
 *                                                  field's bytes inverted), then the document id;
 *                                                  its value holds the document's expiry and the
 *                                                  `include` values
 * <ip> 0x02 <tuple(indexId)> 0xff <tuple(part)>    build progress of part `part` of the index's build
 *                                                  (JSON): after every entry (no value encoding starts
 *                                                  with 0xff), so one range clear drops an index whole
 * ```
 *
 * Every change of the catalog also bumps the database's metadata version, and every writer of the
 * collection's documents reads that (once per transaction, free with the read version; the catalog
 * key itself only when the version moved, see maintainer.ts), so a createIndex or dropIndex
 * conflicts with the writers that did not know of it. Build progress sits apart, so a build's steps
 * do not make writers retry.
 */

const CATALOG = 0x00;
const ENTRIES = 0x02;
/** After the entries of an index: where its build records its progress. */
const PROGRESS = 0xff;

export class IndexKeys {
  /** `<ip>`. */
  readonly prefix: Buffer;
  /** `<ip> 0x00`. */
  readonly catalog: Buffer;

  constructor(layout: Layout, collectionId: number) {
    this.prefix = layout.indexPrefix(collectionId);
    this.catalog = Buffer.concat([this.prefix, Buffer.of(CATALOG)]);
  }

  /** `<ip> 0x02 <tuple(indexId)>`: the prefix of every entry of an index. */
  entries(indexId: number): Buffer {
    return Buffer.concat([this.prefix, Buffer.of(ENTRIES), pack([indexId])]);
  }

  /** `<ip> 0x02 <tuple(indexId)> 0xff`: the prefix of an index's build progress records. */
  progress(indexId: number): Buffer {
    return Buffer.concat([this.entries(indexId), Buffer.of(PROGRESS)]);
  }

  /** The progress record of part `part` of an index's build. */
  progressPart(indexId: number, part: number): Buffer {
    return packPrefixed(this.progress(indexId), [part]);
  }
}

/** The key of an entry: the index's entry prefix, the encoded values, the document id. */
export function entryKey(entriesPrefix: Buffer, values: Buffer, id: TupleItem): Buffer {
  return packPrefixed(Buffer.concat([entriesPrefix, values]), [id]);
}
