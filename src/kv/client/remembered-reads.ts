import { toBuffer } from '../contract/bytes';
import { isKeySelector } from '../contract/key-selector';
import type { Bytes, KeySelector, KeyValue, RangeOptions, ReadTransaction } from '../contract/types';

/**
 * A view of a transaction's reads that answers a point read, or a range read between two keys, asked
 * for before with the first answer, without asking the transaction again. Reads issued ahead through
 * it (together, in one round trip on a cluster) are then free to the code that asks for them later.
 *
 * The answer is the one the transaction would give again only while the transaction writes nothing:
 * a transaction reads at one version, so nothing but its own writes changes what it reads. Whoever
 * uses the view stops using it before writing to the transaction (a stage over the view writes to
 * its stage, which merges its writes over the remembered answers: `staged-transaction.ts`).
 *
 * The first read added its read conflicts to the transaction; a remembered answer adds none, as the
 * same read asked again would add none that are not there already. A rejected read is remembered
 * too: asking again rejects alike. Key selectors, streamed ranges, the read version and the
 * metadata version go to the transaction.
 */
export class RememberedReads implements ReadTransaction {
  private readonly answers = new Map<string, Promise<unknown>>();

  constructor(readonly tr: ReadTransaction) {}

  get(key: Bytes): Promise<Buffer | undefined> {
    return this.remember(`g${toBuffer(key).toString('hex')}`, () => this.tr.get(key));
  }

  getRangeAll(begin: Bytes | KeySelector, end: Bytes | KeySelector, options?: RangeOptions): Promise<KeyValue[]> {
    if (isKeySelector(begin) || isKeySelector(end)) return this.tr.getRangeAll(begin, end, options);
    // No limit and limit 0 are the same read, as are no direction and forward.
    const read = `r${toBuffer(begin).toString('hex')} ${toBuffer(end).toString('hex')} ${options?.limit || 0} ${options?.reverse === true}`;
    return this.remember(read, () => this.tr.getRangeAll(begin, end, options));
  }

  getKey(selector: KeySelector): Promise<Buffer> {
    return this.tr.getKey(selector);
  }

  getRange(begin: Bytes | KeySelector, end: Bytes | KeySelector, options?: RangeOptions): AsyncIterable<KeyValue> {
    return this.tr.getRange(begin, end, options);
  }

  getReadVersion(): Promise<bigint> {
    return this.tr.getReadVersion();
  }

  getMetadataVersion(): Promise<Buffer | undefined> {
    return this.tr.getMetadataVersion();
  }

  private remember<T>(read: string, ask: () => Promise<T>): Promise<T> {
    let answer = this.answers.get(read) as Promise<T> | undefined;
    if (answer === undefined) {
      answer = ask();
      this.answers.set(read, answer);
    }
    return answer;
  }
}
