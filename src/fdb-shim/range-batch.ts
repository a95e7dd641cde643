import { copyOf } from '../kv/contract/bytes';
import { firstGreaterOrEqual, firstGreaterThan } from '../kv/contract/key-selector';
import type { KeySelector, KeyValue, ReadTransaction } from '../kv/contract/types';
import type { NativeKeyValueList } from './native-api';
import type { BatchLimits } from './streaming-mode';

/** The size of a pair assumed before any is read, to size the first read of a byte-limited batch. */
const ASSUMED_PAIR_BYTES = 64;

/**
 * A pair as the addon returns it: Buffers of the caller's own, which it may change (the engines'
 * range results are read-only and may be shared: the memory engine's stored Buffers, the LMDB
 * engine's range cache).
 */
function ownPair(kv: KeyValue): [Buffer, Buffer] {
  return [copyOf(kv.key), copyOf(kv.value)];
}

/** A pair's bytes as counted against a batch's byte target. */
function pairBytes(kv: KeyValue): number {
  return kv.key.length + kv.value.length;
}

/**
 * Reads one batch of `[begin, end)` (selectors, resolved by the engine) within `limits`, as one call of
 * `fdb_transaction_get_range` returns it: pairs until the row limit is reached or the byte target is
 * met (at least one pair), and `more` when the batch stopped at a limit, so the range may hold more.
 *
 * Without a byte target this is one engine read with the row limit, whose read conflict covers what
 * the result proves. With one, the batch is read in pieces sized from the pairs seen so far, each
 * continuing after the last key of the one before; a piece that passes the target is cut there, and
 * its read conflict may cover a few pairs past the cut (a conflict FDB would not have recorded, never
 * one it would have missed).
 */
export async function readRangeBatch(
  reads: ReadTransaction,
  begin: KeySelector,
  end: KeySelector,
  limits: BatchLimits,
  reverse: boolean,
): Promise<NativeKeyValueList> {
  if (limits.bytes === Infinity) {
    const pairs = await reads.getRangeAll(begin, end, { limit: limits.rows === Infinity ? 0 : limits.rows, reverse });
    return { results: pairs.map(ownPair), more: pairs.length === limits.rows };
  }
  const results: Array<[Buffer, Buffer]> = [];
  let bytes = 0;
  let from = begin;
  let to = end;
  for (;;) {
    const averagePairBytes = results.length === 0 ? ASSUMED_PAIR_BYTES : Math.max(1, bytes / results.length);
    const wanted = Math.max(1, Math.min(limits.rows - results.length, Math.ceil((limits.bytes - bytes) / averagePairBytes)));
    const piece = await reads.getRangeAll(from, to, { limit: wanted, reverse });
    for (const kv of piece) {
      results.push(ownPair(kv));
      bytes += pairBytes(kv);
      if (bytes >= limits.bytes || results.length >= limits.rows) return { results, more: true };
    }
    if (piece.length < wanted) return { results, more: false };
    const lastKey = piece[piece.length - 1].key;
    if (reverse) to = firstGreaterOrEqual(lastKey);
    else from = firstGreaterThan(lastKey);
  }
}
