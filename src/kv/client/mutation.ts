import type { AtomicOp } from '../contract/types';
import type { VersionstampTemplate } from './versionstamp-template';

/**
 * One write of a transaction, as sent to the store at commit and applied there in order. Keys and
 * values are the transaction's own copies, or Buffers a layer handed over (`hand-over.ts`), and are
 * never modified.
 */
export type Mutation =
  | { readonly type: 'set'; readonly key: Buffer; readonly value: Buffer }
  | { readonly type: 'clear'; readonly key: Buffer }
  | { readonly type: 'clearRange'; readonly begin: Buffer; readonly end: Buffer }
  | { readonly type: 'atomic'; readonly op: AtomicOp; readonly key: Buffer; readonly operand: Buffer }
  | { readonly type: 'setVersionstampedKey'; readonly key: VersionstampTemplate; readonly value: Buffer }
  | { readonly type: 'setVersionstampedValue'; readonly key: Buffer; readonly value: VersionstampTemplate };
