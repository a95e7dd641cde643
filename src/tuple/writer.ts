import { Buffer } from 'node:buffer';

/**
 * A growable byte buffer that encoders write into directly: they call `ensure` once for an upper bound of
 * what they will write, then store bytes into `buf` at `pos` with no per-byte checks.
 *
 * It also carries the state that spans a whole tuple: where the one incomplete versionstamp was written,
 * and whether an open-ended user-type value has been written (after which nothing may follow).
 */
export class Writer {
  buf: Buffer;
  pos = 0;
  /** Offset of the first placeholder byte of the incomplete versionstamp, or -1 if none was written. */
  versionstampAt = -1;
  /** Set once a user-type value is written: it runs to the end of the key, so nothing may follow it. */
  openEnded = false;
  /** Nesting depth of the tuple being written; 0 is the outermost. */
  depth = 0;

  constructor(capacity: number) {
    this.buf = Buffer.allocUnsafe(capacity);
  }

  reset(): void {
    this.pos = 0;
    this.versionstampAt = -1;
    this.openEnded = false;
    this.depth = 0;
  }

  /** Makes room for `n` more bytes. */
  ensure(n: number): void {
    if (this.pos + n > this.buf.length) this.grow(n);
  }

  private grow(n: number): void {
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  bytes(src: Uint8Array): void {
    this.ensure(src.length);
    this.buf.set(src, this.pos);
    this.pos += src.length;
  }

  /** A copy of what was written, followed by `extra` uninitialised bytes for the caller to fill. */
  result(extra: number): Buffer {
    const n = this.pos;
    const out = Buffer.allocUnsafe(n + extra);
    const src = this.buf;
    // Tuples are mostly a few dozen bytes, where a loop beats the native copy's call overhead.
    if (n < 64) for (let i = 0; i < n; i++) out[i] = src[i];
    else src.copy(out, 0, 0, n);
    return out;
  }
}

// Packing is synchronous and allocation-free until the final copy, so one writer serves every call. It
// is only lent out once at a time: a re-entrant pack (e.g. from a Proxy trap) gets a fresh writer.
const INITIAL_CAPACITY = 256;
const MAX_RETAINED_CAPACITY = 64 * 1024;
const shared = new Writer(INITIAL_CAPACITY);
let sharedInUse = false;

/** Borrows a reset writer; give it back with `releaseWriter` (in a `finally`). */
export function acquireWriter(): Writer {
  if (sharedInUse) return new Writer(INITIAL_CAPACITY);
  sharedInUse = true;
  shared.reset();
  return shared;
}

export function releaseWriter(w: Writer): void {
  if (w !== shared) return;
  sharedInUse = false;
  // Don't keep a huge buffer alive because of one huge tuple.
  if (w.buf.length > MAX_RETAINED_CAPACITY) w.buf = Buffer.allocUnsafe(INITIAL_CAPACITY);
}
