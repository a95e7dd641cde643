/**
 * The naive design the document layer is measured against: each document is one JSON text, split into
 * chunks of 100,000 bytes (FoundationDB's largest value) at `prefix + tuple(id, chunkIndex)`. Every read
 * reads and parses the whole document and every write rewrites it, so costs grow with the document
 * rather than with the part of it an operation touches. It has the same semantics as the operations it
 * stands in for (insert fails if the id exists, reads and writes run in one transaction each), so the
 * comparison is of layouts, not of shortcuts.
 */
import type { Database } from '../src/kv/contract/database';
import type { Transaction } from '../src/kv/contract/types';
import { pack } from '../src/tuple';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type DocId = string | number;
type PathElement = string | number;

/** FDB's value limit. */
const CHUNK_BYTES = 100_000;

export class NaiveDocumentStore {
  constructor(
    private readonly db: Database,
    private readonly prefix: Buffer = Buffer.from('naive/'),
  ) {}

  private chunkKey(id: DocId, chunk: number): Buffer {
    return Buffer.concat([this.prefix, pack([id, chunk])]);
  }

  /** `[begin, end)` of every chunk of `id`: the tuple prefix of `(id,)` up to the byte 0xff after it. */
  private range(id: DocId): [Buffer, Buffer] {
    const begin = Buffer.concat([this.prefix, pack([id])]);
    return [begin, Buffer.concat([begin, Buffer.of(0xff)])];
  }

  private async read(tr: Transaction, id: DocId): Promise<Json | undefined> {
    const [begin, end] = this.range(id);
    const chunks = await tr.getRangeAll(begin, end);
    if (chunks.length === 0) return undefined;
    return JSON.parse(Buffer.concat(chunks.map((kv) => kv.value)).toString('utf8')) as Json;
  }

  private write(tr: Transaction, id: DocId, doc: Json): void {
    const [begin, end] = this.range(id);
    tr.clearRange(begin, end);
    const bytes = Buffer.from(JSON.stringify(doc), 'utf8');
    for (let i = 0; i * CHUNK_BYTES < bytes.length; i++) {
      tr.set(this.chunkKey(id, i), bytes.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES));
    }
  }

  /** Stores `doc` under `id`; fails if `id` exists (one point read of its first chunk). */
  insert(id: DocId, doc: Json): Promise<void> {
    return this.db.transact(async (tr) => {
      if ((await tr.get(this.chunkKey(id, 0))) !== undefined) throw new Error(`document ${id} exists`);
      this.write(tr, id, doc);
    });
  }

  /** The whole document. */
  get(id: DocId): Promise<Json | undefined> {
    return this.db.transact((tr) => this.read(tr, id));
  }

  /** The value at `path`: the whole document is read and parsed to find it. */
  getPath(id: DocId, path: readonly PathElement[]): Promise<Json | undefined> {
    return this.db.transact(async (tr) => {
      let node = await this.read(tr, id);
      for (const element of path) {
        if (node === null || typeof node !== 'object') return undefined;
        node = Array.isArray(node) ? node[element as number] : node[element as string];
      }
      return node;
    });
  }

  /** Sets the key at the end of `path` (its parent must be an object): read, change, rewrite. */
  upsertField(id: DocId, path: readonly PathElement[], value: Json): Promise<void> {
    return this.db.transact(async (tr) => {
      const doc = await this.read(tr, id);
      if (doc === undefined) throw new Error(`document ${id} does not exist`);
      let parent = doc;
      for (const element of path.slice(0, -1)) {
        parent = Array.isArray(parent) ? parent[element as number] : (parent as { [key: string]: Json })[element as string];
      }
      (parent as { [key: string]: Json })[path[path.length - 1] as string] = value;
      this.write(tr, id, doc);
    });
  }
}
