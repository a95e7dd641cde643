import { Buffer } from 'node:buffer';
import { setVersionstampedValueHandedOver } from '../../kv/client/hand-over';
import { prepareVersionstampTemplate } from '../../kv/client/versionstamp-template';
import { isKvError } from '../../kv/contract/errors';
import type { ReadTransaction, Transaction } from '../../kv/contract/types';
import { writeEncodedEntries } from '../values/tree';
import { DocTransaction } from '../doc-transaction';
import { DocumentError } from '../errors';
import type { DocumentKeys } from './layout';
import type { Cas, PathElement } from '../types';
import type { Entries } from '../values/flatten';

/**
 * Document versions, for CAS. Every write of a document sets its version key to the commit's 10-byte
 * versionstamp with `setVersionstampedValue`: blind, so writes never read it and writes of different
 * fields do not conflict through it. The CAS is the hex of that versionstamp.
 *
 * Until the transaction commits the value is unknown, and reading it fails (accessed_unreadable, 1036).
 * So the attempt's document context (`doc-transaction.ts`) records the documents it wrote, and reads
 * of those skip the version key and report `cas: undefined`.
 */

/**
 * Placeholder for the versionstamp and the 4-byte little-endian offset (0) where it goes, checked once:
 * every write hands it to its transaction without a copy (`setVersionstampedValueHandedOver`).
 */
const VERSIONSTAMP_TEMPLATE = prepareVersionstampTemplate(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]));

/**
 * Sets the document's version to this transaction's versionstamp, and records the write (of `paths`,
 * default the whole document) in the attempt's document context.
 */
export function writeVersion(tr: Transaction, keys: DocumentKeys, paths?: readonly (readonly PathElement[])[]): void {
  setVersionstampedValueHandedOver(tr, keys.version, VERSIONSTAMP_TEMPLATE);
  DocTransaction.of(tr).documentWritten(keys, paths);
}

/**
 * Writes a whole document: its version, which sorts before every data key, then `entries` (its data
 * keys, in key order), and records the write as {@link writeVersion} does: the engine gets the
 * document as one sorted run (recording first would put an observer's keys, the change feed's,
 * between the version and the data).
 */
export function writeDocument(tr: Transaction, keys: DocumentKeys, entries: Entries): void {
  setVersionstampedValueHandedOver(tr, keys.version, VERSIONSTAMP_TEMPLATE);
  writeEncodedEntries(tr, entries);
  DocTransaction.of(tr).documentWritten(keys);
}

/** True when this attempt of `tr` wrote the document: its version key is unreadable until commit. */
export function wasWritten(tr: Transaction, keys: DocumentKeys): boolean {
  return DocTransaction.existing(tr)?.wasWritten(keys) ?? false;
}

/** The character codes of the hex digits. */
const HEX_DIGITS = Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
const high = (byte: number): number => HEX_DIGITS[byte >> 4];
const low = (byte: number): number => HEX_DIGITS[byte & 15];

/** The CAS of a version key's value. */
export function casOf(value: Uint8Array): Cas {
  // Every document read takes a CAS: a version (10 bytes) is spelled in one call, 2.5x faster than
  // Buffer's hex encoder (a native call and a view per value).
  if (value.length === 10) {
    const v = value;
    // prettier-ignore
    return String.fromCharCode(
      high(v[0]), low(v[0]), high(v[1]), low(v[1]), high(v[2]), low(v[2]), high(v[3]), low(v[3]), high(v[4]), low(v[4]),
      high(v[5]), low(v[5]), high(v[6]), low(v[6]), high(v[7]), low(v[7]), high(v[8]), low(v[8]), high(v[9]), low(v[9]),
    );
  }
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex');
}

/**
 * Reads the version key: its CAS, `undefined` when there is none, or `'unreadable'` when this
 * transaction wrote it. `snapshot` reads add no conflict (for reporting the CAS of a read).
 */
export function readVersion(
  tr: Transaction,
  keys: DocumentKeys,
  snapshot: boolean,
  // eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents -- Cas is a hex string: the literal names the sentinel callers test for, which no CAS equals.
): Promise<Cas | undefined | 'unreadable'> {
  return versionIn(snapshot ? tr.snapshot() : tr, keys);
}

/** {@link readVersion} through `reads`. */
// eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents -- as readVersion.
async function versionIn(reads: ReadTransaction, keys: DocumentKeys): Promise<Cas | undefined | 'unreadable'> {
  try {
    const value = await reads.get(keys.version);
    return value === undefined ? undefined : casOf(value);
  } catch (err) {
    if (isKvError(err, 'accessed_unreadable')) return 'unreadable';
    throw err;
  }
}

/** The CAS to report for a read of the document: `undefined` when this transaction wrote it. */
export async function casForRead(tr: Transaction, keys: DocumentKeys): Promise<Cas | undefined> {
  if (wasWritten(tr, keys)) return undefined;
  const cas = await readVersion(tr, keys, true);
  return cas === 'unreadable' ? undefined : cas;
}

/**
 * Checks the document's version is `cas` (one point read of the version key, which conflicts with
 * every write of the document, as a CAS must). A document written earlier in this transaction has a
 * version no caller can know yet: that is a mismatch. `reads` is the transaction, or a view of it
 * that answers the version key as the transaction does (reads issued ahead: `remembered-reads.ts`).
 *
 * @throws DocumentError INVALID_ARGUMENT for a value no write can have returned (see
 *   {@link checkedCas}), before anything is read; DOCUMENT_NOT_FOUND when there is no document,
 *   CAS_MISMATCH.
 */
export async function checkCas(reads: ReadTransaction, keys: DocumentKeys, cas: Cas): Promise<void> {
  const wanted = checkedCas(cas);
  const current = await versionIn(reads, keys);
  if (current === undefined) throw new DocumentError('DOCUMENT_NOT_FOUND', 'the document does not exist');
  if (current !== wanted) {
    throw new DocumentError(
      'CAS_MISMATCH',
      current === 'unreadable'
        ? 'the document was changed earlier in this transaction, so no CAS matches it yet'
        : `the document's CAS is ${current}, not ${cas}`,
    );
  }
}

/** A CAS as writes return it: the hex of a 10-byte versionstamp. */
const CAS_PATTERN = /^[0-9a-f]{20}$/i;

/**
 * `cas` in the form writes return it (lower-case hex; upper case is accepted).
 *
 * @throws DocumentError INVALID_ARGUMENT for anything else: no document can have that version.
 */
export function checkedCas(cas: unknown): Cas {
  if (typeof cas !== 'string') throw new DocumentError('INVALID_ARGUMENT', `a CAS is a string, got ${typeof cas}`);
  if (!CAS_PATTERN.test(cas)) {
    throw new DocumentError('INVALID_ARGUMENT', `a CAS is 20 hexadecimal digits (the hex of a 10-byte versionstamp), got ${JSON.stringify(cas)}`);
  }
  return cas.toLowerCase();
}
