import { int64LE, keyAfter, toBuffer } from './bytes';
import type { AtomicOp, Bytes } from './types';

/** The contract's shorthand methods, defined once in terms of the primitive ones. */
export abstract class TransactionShorthands {
  abstract atomicOp(op: AtomicOp, key: Bytes, param: Bytes): void;
  abstract addReadConflictRange(begin: Bytes, end: Bytes): void;
  abstract addWriteConflictRange(begin: Bytes, end: Bytes): void;

  add(key: Bytes, delta: number | bigint | Bytes): void {
    this.atomicOp('add', key, typeof delta === 'number' || typeof delta === 'bigint' ? int64LE(delta) : delta);
  }

  max(key: Bytes, param: Bytes): void {
    this.atomicOp('max', key, param);
  }

  min(key: Bytes, param: Bytes): void {
    this.atomicOp('min', key, param);
  }

  bitAnd(key: Bytes, param: Bytes): void {
    this.atomicOp('bitAnd', key, param);
  }

  bitOr(key: Bytes, param: Bytes): void {
    this.atomicOp('bitOr', key, param);
  }

  bitXor(key: Bytes, param: Bytes): void {
    this.atomicOp('bitXor', key, param);
  }

  byteMin(key: Bytes, param: Bytes): void {
    this.atomicOp('byteMin', key, param);
  }

  byteMax(key: Bytes, param: Bytes): void {
    this.atomicOp('byteMax', key, param);
  }

  appendIfFits(key: Bytes, param: Bytes): void {
    this.atomicOp('appendIfFits', key, param);
  }

  compareAndClear(key: Bytes, param: Bytes): void {
    this.atomicOp('compareAndClear', key, param);
  }

  /** The conflict range `[key, keyAfter(key))`. */
  addReadConflictKey(key: Bytes): void {
    this.addReadConflictRange(key, keyAfter(toBuffer(key)));
  }

  /** The conflict range `[key, keyAfter(key))`. */
  addWriteConflictKey(key: Bytes): void {
    this.addWriteConflictRange(key, keyAfter(toBuffer(key)));
  }
}
