import { Buffer } from 'node:buffer';
import { pack, Subspace, type Tuple, type TupleItem } from '../../tuple';
import { decodeItem, integerEnd, Reader, stringEnd } from '../../tuple/codec';
import { packPrefixed } from '../../tuple/pack';
import { corruptData, DocumentError } from '../errors';
import { encodeLeb128 } from './leb128';

/**
 * Every key doclayer writes, and how to take them apart again (see docs/documents.md):
 *
 * ```
 * <prefix> 0x00 <tuple(...)>                              system data (manifest, expiry index)
 * <prefix> 0x01 <leb128(c)> <tuple(id)>                   docPrefix(c, id)
 * <prefix> 0x02 <leb128(c)> ...                           secondary indexes of collection c (src/index)
 * <docPrefix> 0x00 <name byte>                            metadata: the META_ names below
 * <docPrefix> 0x01 <tuple(path...)>                       data: one entry per container and per leaf
 * ```
 *
 * Ranges end with `0xff` appended rather than with `strinc`: a tuple string is only self-delimiting
 * up to its escaped NULs (`"ab"` packs to `02 61 62 00`, a prefix of `"ab\0c"`'s `02 61 62 00 ff 63
 * 00`), and every byte that can follow a node's key within its own subtree (a type code, or a section
 * byte) is below `0xff`, while a sibling that shares the prefix continues with the escape's `0xff`.
 */

export const SYSTEM_SECTION = 0x00;
export const DOCUMENTS_SECTION = 0x01;
/** Secondary indexes: written by src/index, cleared with their collection by the document layer. */
export const INDEXES_SECTION = 0x02;
export const META_SECTION = 0x00;
export const DATA_SECTION = 0x01;

/**
 * Metadata names: the byte after `<docPrefix> 0x00`. Every layer's names are allocated here, in one
 * table, so that no two owners take the same byte; `expiry.ts` relies on 'x' and 'y' sorting after the others.
 */
/** The version: a versionstamped value written by every write of the document. */
export const META_VERSION = 0x76; // 'v'
/** A structure's kind (`structures/kind.ts`); absent for a plain document. */
export const META_KIND = 0x6b; // 'k'
/** The document's expiry (`collection/expiry.ts`). */
export const META_EXPIRY = 0x78; // 'x'
/** A lock taken by `getAndLock` (`collection/lock.ts`): when it ends. */
export const META_LOCK = 0x79; // 'y'
/** Item attributes of the binary-protocol endpoint (`src/server`): flags and how the value is held. */
export const META_ITEM = 0x69; // 'i'
/** Members of a set, keys of a map, items of a queue: a little-endian int64 kept by atomic add. */
export const META_SIZE = 0x73; // 's'
/** A text's length in UTF-16 code units, by atomic add. */
export const META_LENGTH = 0x6c; // 'l'
/** A text's length in UTF-8 bytes, by atomic add. */
export const META_BYTES = 0x62; // 'b'
/** A queue's push signal: a versionstamped value set by every push, for blocked pops to watch. */
export const META_PUSHED = 0x70; // 'p'
/** The prefix of a queue's idempotency tokens and receipts. */
export const META_TOKENS = 0x74; // 't'
/** A queue's event log (`structures/queue/events.ts`): its watched head key, and the events after it. */
export const META_EVENTS = 0x65; // 'e'
/** The prefix of a queue's job records (`structures/queue/events.ts`): state and progress per job. */
export const META_JOBS = 0x6a; // 'j'
/** A queue's stored settings of its event log (`structures/queue/events.ts`). */
export const META_NOTIFY = 0x6e; // 'n'
/** A queue's rate limit (`structures/queue/rate-limit.ts`): tuple(max, intervalMs). */
export const META_RATE_LIMIT = 0x72; // 'r'
/** The prefix of a queue's rate-limit slots, by window. */
export const META_RATE_SLOTS = 0x77; // 'w'
/** A queue's repeatable jobs (`structures/queue/repeat.ts`): the changed key, and one schedule per name after it. */
export const META_SCHEDULES = 0x63; // 'c'

/** Tuple type codes that can start a path element. */
export const CHUNK_CODE = 0x00;
export const STRING_CODE = 0x02;
const NEG_BIG = 0x0b;
const POS_BIG = 0x1d;

/** The keys of one doclayer instance: its system subspace and its collections. */
export class Layout {
  /** The prefix of everything this instance stores. */
  readonly prefix: Buffer;
  /** `<prefix> 0x00`: system data. */
  readonly system: Subspace;

  constructor(prefix: Tuple | Uint8Array) {
    this.prefix = prefix instanceof Uint8Array ? Buffer.from(prefix) : pack(prefix);
    this.system = Subspace.fromRaw(concat(this.prefix, SYSTEM_SECTION));
  }

  /** `<prefix> 0x01 <leb128(c)>`: the prefix of every document of collection `c`. */
  collectionPrefix(collectionId: number): Buffer {
    return Buffer.concat([this.prefix, Buffer.of(DOCUMENTS_SECTION), encodeLeb128(collectionId)]);
  }

  /** `<prefix> 0x02 <leb128(c)>`: the prefix of every key of collection `c`'s secondary indexes. */
  indexPrefix(collectionId: number): Buffer {
    return Buffer.concat([this.prefix, Buffer.of(INDEXES_SECTION), encodeLeb128(collectionId)]);
  }

  /** The prefixes of everything collection `c` owns: its documents and its indexes (cleared when it is dropped). */
  collectionPrefixes(collectionId: number): Buffer[] {
    return [this.collectionPrefix(collectionId), this.indexPrefix(collectionId)];
  }
}

/** Document ids up to this many UTF-16 units are tried as ASCII by {@link documentPrefix}. */
const SHORT_ID = 64;

/**
 * `docPrefix(c, id)`: `collectionPrefix` followed by the packed id, the bytes `packPrefixed` writes.
 * Every document read and write builds it: a short ASCII string id without a NUL (the common id) is
 * written straight into the key, without the tuple writer and the copy out of it.
 */
export function documentPrefix(collectionPrefix: Uint8Array, id: TupleItem): Buffer {
  if (typeof id !== 'string' || id.length > SHORT_ID) return packPrefixed(collectionPrefix, [id]);
  const p = collectionPrefix.length;
  const n = id.length;
  const key = Buffer.allocUnsafe(p + n + 2);
  for (let i = 0; i < p; i++) key[i] = collectionPrefix[i];
  key[p] = STRING_CODE;
  for (let i = 0; i < n; i++) {
    const c = id.charCodeAt(i);
    if (c === 0 || c >= 0x80) return packPrefixed(collectionPrefix, [id]);
    key[p + 1 + i] = c;
  }
  key[p + n + 1] = 0x00;
  return key;
}

/**
 * The keys of a document about to be written, checked against the engine's key limit: every write of
 * a document writes a metadata key (its version, or a structure's kind), `<docPrefix> 0x00 <name>`,
 * so an id too long for that is refused before anything is written.
 *
 * @throws DocumentError KEY_TOO_LARGE when the metadata keys would exceed `maxKeyBytes`.
 */
export function writableDocumentKeys(collectionPrefix: Uint8Array, id: TupleItem, maxKeyBytes: number): DocumentKeys {
  const keys = new DocumentKeys(collectionPrefix, id);
  if (!areWritable(keys, maxKeyBytes)) {
    throw new DocumentError(
      'KEY_TOO_LARGE',
      `the document id makes its keys ${keys.prefix.length + 2} bytes, over the engine's limit of ${maxKeyBytes}`,
    );
  }
  return keys;
}

/** Whether a document's metadata keys, its longest fixed keys, fit the engine's key limit (see {@link writableDocumentKeys}). */
export function areWritable(keys: DocumentKeys, maxKeyBytes: number): boolean {
  return keys.prefix.length + 2 <= maxKeyBytes;
}

/** Every key and range of one document. */
export class DocumentKeys {
  /** `docPrefix(c, id)`. */
  readonly prefix: Buffer;
  /** The data key of the document's root: `<docPrefix> 0x01`, the key of the empty path. */
  readonly root: Buffer;

  /**
   * @param collectionPrefix - the prefix of every key of the collection's documents
   * @param id - the id as its tuple element (see `ids.ts`)
   */
  constructor(
    readonly collectionPrefix: Uint8Array,
    readonly id: TupleItem,
  ) {
    this.prefix = documentPrefix(collectionPrefix, id);
    this.root = concat(this.prefix, DATA_SECTION);
  }

  /** Start of the whole document: metadata and data. */
  get begin(): Buffer {
    return concat(this.prefix, META_SECTION);
  }

  /** End (exclusive) of the whole document. */
  get end(): Buffer {
    return concat(this.prefix, DATA_SECTION + 1);
  }

  /** The key of metadata `name` (one of the `META_` names). */
  meta(name: number): Buffer {
    return metaKey(this.prefix, name);
  }

  private versionKey: Buffer | undefined;
  private kindKey: Buffer | undefined;
  private rootDescendantsKey: Buffer | undefined;

  /**
   * The key of the version: a versionstamped value written by every write of the document (made
   * once, as the kind key: keys are never modified, and a structure handle's keys serve call after
   * call).
   */
  get version(): Buffer {
    return (this.versionKey ??= this.meta(META_VERSION));
  }

  /** The key of a structure's kind (`kind.ts`): read by every structure operation. */
  get kind(): Buffer {
    return (this.kindKey ??= this.meta(META_KIND));
  }

  /** `<root> 0x00`: the start of the root's descendants, where a structure's body lives (made once). */
  get rootDescendants(): Buffer {
    return (this.rootDescendantsKey ??= descendantsBegin(this.root));
  }

  /** The data key of a path of object keys and array positions (not indices). */
  dataKey(elements: readonly (string | number)[]): Buffer {
    return elements.length === 0 ? this.root : packPrefixed(this.root, elements);
  }

  private identityString: string | undefined;

  /** A string identifying the document, for maps and sets (made once: hot paths ask for it often). */
  get identity(): string {
    return (this.identityString ??= this.prefix.toString('latin1'));
  }
}

/** `<docPrefix> 0x00 <name>`: the key of metadata `name` of the document whose prefix is `docPrefix`. */
export function metaKey(docPrefix: Uint8Array, name: number): Buffer {
  const key = Buffer.allocUnsafe(docPrefix.length + 2);
  key.set(docPrefix, 0);
  key[docPrefix.length] = META_SECTION;
  key[docPrefix.length + 1] = name;
  return key;
}

/**
 * The metadata name of `key` when it is exactly a metadata key of the document whose prefix is
 * `prefixLength` bytes long (`<docPrefix> 0x00 <name>`), otherwise -1.
 */
export function metaNameOf(key: Uint8Array, prefixLength: number): number {
  return key.length === prefixLength + 2 && key[prefixLength] === META_SECTION ? key[prefixLength + 1] : -1;
}

/** The key of a node's child: an object key (a string) or an array position (an integer). */
export function childKey(parent: Uint8Array, element: string | number): Buffer {
  return packPrefixed(parent, [element]);
}

/** End (exclusive) of the subtree at `key`: the node and all its descendants. */
export function subtreeEnd(key: Uint8Array): Buffer {
  return concat(key, 0xff);
}

/** Start of the descendants of the node at `key` (the node itself excluded). */
export function descendantsBegin(key: Uint8Array): Buffer {
  return concat(key, 0x00);
}

/** `key` followed by one byte. */
export function concat(key: Uint8Array, byte: number): Buffer {
  const out = Buffer.allocUnsafe(key.length + 1);
  out.set(key, 0);
  out[key.length] = byte;
  return out;
}

/**
 * The offset just after the path element that starts at `key[at]`, or -1 if no valid element starts
 * there. Elements are tuple strings (object keys), tuple integers (array positions) and the chunk
 * element `null` of long strings. Called for every entry of a document read: the codec's per-type
 * functions are called directly rather than through its table.
 */
export function elementEnd(key: Buffer, at: number): number {
  const code = key[at];
  if (code === STRING_CODE) return stringEnd(key, at);
  if (code >= NEG_BIG && code <= POS_BIG) return integerEnd(key, at);
  return code === CHUNK_CODE ? at + 1 : -1;
}

/** True when the element at `key[at]` is an integer (an array position). */
export function isIntegerElement(key: Uint8Array, at: number): boolean {
  const code = key[at];
  return code >= NEG_BIG && code <= POS_BIG;
}

/**
 * The object key of the string element spanning `key[at..end)` (type code and terminator included).
 *
 * @throws DocumentError CORRUPT_DATA when no string element spans exactly those bytes.
 */
export function decodeStringElement(key: Buffer, at: number, end: number): string {
  const r = new Reader(key, at);
  const name = decodeItem(r);
  if (typeof name !== 'string' || r.pos !== end) throw corruptData('document data: a key whose element is not an object key');
  return name;
}

/**
 * The array position of the integer element at `key[at]` (a safe integer: positions move by one).
 *
 * @throws DocumentError CORRUPT_DATA when the element is not a safe integer.
 */
export function decodePosition(key: Buffer, at: number): number {
  const position = decodeItem(new Reader(key, at));
  if (typeof position !== 'number') throw corruptData('document data: a key whose element is not an array position');
  return position;
}
