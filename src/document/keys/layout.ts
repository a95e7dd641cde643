import { pack, Subspace, type Tuple, type TupleItem } from '../../tuple';
import { packPrefixed } from '../../tuple/pack';
import { encodeLeb128 } from './leb128';

/**
 * Every key doclayer writes, and how to take them apart again (see docs/documents.md):
 *
 * ```
 * <prefix> 0x00 <tuple(...)>                              system data (manifest, expiry index)
 * <prefix> 0x01 <leb128(c)> <tuple(id)>                   docPrefix(c, id)
 * <docPrefix> 0x00 <name byte>                            metadata: 'v' version, 'k' kind, 'x' expiry
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
export const META_SECTION = 0x00;
export const DATA_SECTION = 0x01;

/** Metadata names: the byte after `<docPrefix> 0x00`. */
export const META_VERSION = 0x76; // 'v'
export const META_KIND = 0x6b; // 'k'
export const META_EXPIRY = 0x78; // 'x'

/** Tuple type codes that can start a path element. */
export const CHUNK_CODE = 0x00;
export const STRING_CODE = 0x02;
const INT_ZERO = 0x14;
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
    this.prefix = packPrefixed(collectionPrefix, [id]);
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

  meta(name: number): Buffer {
    const key = Buffer.allocUnsafe(this.prefix.length + 2);
    this.prefix.copy(key, 0);
    key[this.prefix.length] = META_SECTION;
    key[this.prefix.length + 1] = name;
    return key;
  }

  /** The key of the version: a versionstamped value written by every write of the document. */
  get version(): Buffer {
    return this.meta(META_VERSION);
  }

  /** The data key of a path of object keys and array positions (not indices). */
  dataKey(elements: readonly (string | number)[]): Buffer {
    return elements.length === 0 ? this.root : packPrefixed(this.root, elements);
  }

  /** A string identifying the document, for maps and sets. */
  get identity(): string {
    return this.prefix.toString('latin1');
  }
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
 * element `null` of long strings.
 */
export function elementEnd(key: Uint8Array, at: number): number {
  const code = key[at];
  if (code === STRING_CODE) {
    const n = key.length;
    for (let i = at + 1; i < n; i++) {
      if (key[i] === 0x00) {
        if (i + 1 < n && key[i + 1] === 0xff) i++;
        else return i + 1;
      }
    }
    return -1;
  }
  if (code > NEG_BIG && code < POS_BIG) {
    const end = at + 1 + (code < INT_ZERO ? INT_ZERO - code : code - INT_ZERO);
    return end <= key.length ? end : -1;
  }
  if (code === NEG_BIG || code === POS_BIG) {
    if (at + 1 >= key.length) return -1;
    const n = code === NEG_BIG ? key[at + 1] ^ 0xff : key[at + 1];
    const end = at + 2 + n;
    return end <= key.length ? end : -1;
  }
  if (code === CHUNK_CODE) return at + 1;
  return -1;
}

/** True when the element at `key[at]` is an integer (an array position). */
export function isIntegerElement(key: Uint8Array, at: number): boolean {
  const code = key[at];
  return code >= NEG_BIG && code <= POS_BIG;
}

const utf8 = new TextDecoder('utf-8');

/** The object key of the string element spanning `key[at..end)` (type code and terminator included). */
export function decodeStringElement(key: Buffer, at: number, end: number): string {
  const from = at + 1;
  const to = end - 1;
  let ascii = true;
  for (let i = from; i < to; i++) {
    const c = key[i];
    if (c === 0 || c >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) {
    if (to - from > 16) return key.toString('latin1', from, to);
    let s = '';
    for (let i = from; i < to; i++) s += String.fromCharCode(key[i]);
    return s;
  }
  let escapes = 0;
  for (let i = from; i < to; i++) {
    if (key[i] === 0) {
      escapes++;
      i++;
    }
  }
  if (escapes === 0) return utf8.decode(key.subarray(from, to));
  const out = Buffer.allocUnsafe(to - from - escapes);
  let o = 0;
  for (let i = from; i < to; i++) {
    out[o++] = key[i];
    if (key[i] === 0) i++;
  }
  return utf8.decode(out);
}

/** The array position of the integer element at `key[at]` (a safe integer: positions move by one). */
export function decodePosition(key: Uint8Array, at: number): number {
  const code = key[at];
  if (code === INT_ZERO) return 0;
  const neg = code < INT_ZERO;
  const n = neg ? INT_ZERO - code : code - INT_ZERO;
  if (n > 7) throw new RangeError('array position out of range');
  let x = 0;
  for (let i = at + 1; i <= at + n; i++) x = x * 256 + key[i];
  return neg ? x - (2 ** (8 * n) - 1) : x;
}
