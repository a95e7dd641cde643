import { Buffer } from 'node:buffer';
import { TupleError } from './error';

const TR_VERSION_LENGTH = 10;

function isPlaceholder(bytes: Uint8Array, offset: number): boolean {
  for (let i = offset; i < offset + TR_VERSION_LENGTH; i++) if (bytes[i] !== 0xff) return false;
  return true;
}

function checkUserVersion(userVersion: number): void {
  if (!Number.isInteger(userVersion) || userVersion < 0 || userVersion > 0xffff) {
    throw new TupleError('TUPLE_ENCODE', `a versionstamp's user version is 0..65535, got ${userVersion}`);
  }
}

/**
 * A 96-bit versionstamp (type code 0x33): the 10-byte transaction version FDB assigns at commit (8-byte
 * commit version + 2-byte batch order), then a 2-byte user version that orders writes within one
 * transaction.
 *
 * An incomplete versionstamp has no transaction version yet; it is written as ten 0xff placeholder bytes,
 * which FDB overwrites at commit (see `packWithVersionstamp`). As in FDB's own bindings, ten 0xff bytes
 * always mean "incomplete", whether decoded or passed to `complete`.
 */
export class Versionstamp {
  /** The 10-byte transaction version, or null while incomplete. Treat as read-only. */
  readonly trVersion: Buffer | null;
  /** The 2-byte user version, 0..65535. */
  readonly userVersion: number;

  private constructor(trVersion: Buffer | null, userVersion: number) {
    checkUserVersion(userVersion);
    this.trVersion = trVersion;
    this.userVersion = userVersion;
  }

  /** A versionstamp FDB will fill in at commit; `userVersion` orders several within a transaction. */
  static incomplete(userVersion = 0): Versionstamp {
    return new Versionstamp(null, userVersion);
  }

  /** A versionstamp with a known 10-byte transaction version (copied). */
  static complete(trVersion: Uint8Array, userVersion = 0): Versionstamp {
    if (!(trVersion instanceof Uint8Array) || trVersion.length !== TR_VERSION_LENGTH) {
      throw new TupleError('TUPLE_ENCODE', 'a transaction version is exactly 10 bytes');
    }
    return new Versionstamp(isPlaceholder(trVersion, 0) ? null : Buffer.from(trVersion), userVersion);
  }

  /** Reads the 12-byte form at `offset` (10-byte transaction version, then big-endian user version). */
  static fromBytes(bytes: Uint8Array, offset = 0): Versionstamp {
    if (offset < 0 || bytes.length - offset < 12) {
      throw new TupleError('TUPLE_DECODE', 'a versionstamp needs 12 bytes', offset);
    }
    const tr = isPlaceholder(bytes, offset) ? null : Buffer.from(bytes.subarray(offset, offset + TR_VERSION_LENGTH));
    return new Versionstamp(tr, (bytes[offset + 10] << 8) | bytes[offset + 11]);
  }

  /** True once the transaction version is known. */
  get isComplete(): boolean {
    return this.trVersion !== null;
  }

  /** This versionstamp with the transaction version FDB assigned (e.g. from `getVersionstamp()`). */
  completed(trVersion: Uint8Array): Versionstamp {
    if (this.trVersion !== null) throw new TupleError('TUPLE_VERSIONSTAMP', 'versionstamp is already complete');
    return Versionstamp.complete(trVersion, this.userVersion);
  }

  /** The 12-byte form; an incomplete versionstamp has ten 0xff bytes where the transaction version goes. */
  toBytes(): Buffer {
    const out = Buffer.allocUnsafe(12);
    this.writeTo(out, 0);
    return out;
  }

  /** Writes the 12-byte form at `offset` of `out`, which must have room. */
  writeTo(out: Uint8Array, offset: number): void {
    if (this.trVersion === null) out.fill(0xff, offset, offset + TR_VERSION_LENGTH);
    else out.set(this.trVersion, offset);
    out[offset + 10] = this.userVersion >>> 8;
    out[offset + 11] = this.userVersion & 0xff;
  }

  toString(): string {
    const tr = this.trVersion === null ? 'incomplete' : this.trVersion.toString('hex');
    return `Versionstamp(${tr}, ${this.userVersion})`;
  }
}
