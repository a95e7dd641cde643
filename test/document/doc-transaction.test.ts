/**
 * The per-transaction document context: one per attempt of a transaction, the record of every
 * document write, and nothing of a failed attempt in the next one.
 */
import { DocTransaction, KvError, MutateInSpec, open, type DocumentChange, type Transaction } from '../../src';
import type { DocumentKeys } from '../../src/document/keys/layout';
import { unpack } from '../../src/tuple';

/** A change as `[kind, id, paths]`, the id decoded from the document's key prefix. */
function described(change: DocumentChange): [string, unknown, unknown] {
  const id = unpack(change.keys.prefix.subarray(change.keys.collectionPrefix.length))[0];
  return [change.kind, id, change.paths];
}

describe('DocTransaction.of', () => {
  it('gives one context per attempt of a transaction', async () => {
    const docs = await open();
    const tr = docs.kv.createTransaction();
    const first = DocTransaction.of(tr);
    expect(DocTransaction.of(tr)).toBe(first);
    tr.reset();
    const second = DocTransaction.of(tr);
    expect(second).not.toBe(first);
    expect(second.attempt).toBe(first.attempt + 1);
    await docs.close();
  });

  it('starts each attempt of the retry loop with an empty record, after onError as after reset', async () => {
    const docs = await open();
    const users = docs.collection('users');
    await users.upsert('a', { n: 0 });
    const seen: { attempt: number; written: boolean; changes: number; manifestWrites: number; cas: unknown }[] = [];
    let keysOfA: DocumentKeys | undefined;
    await docs.transact(async (tr) => {
      const context = DocTransaction.of(tr);
      const { cas } = await users.get('a', { tr });
      seen.push({
        attempt: context.attempt,
        written: keysOfA !== undefined && context.wasWritten(keysOfA),
        changes: context.changes.length,
        manifestWrites: context.manifestWrites,
        cas,
      });
      await users.mutateIn('a', [MutateInSpec.increment('n', 1)], { tr });
      keysOfA = context.changes[0].keys;
      expect(context.wasWritten(keysOfA)).toBe(true);
      await docs.createCollection(`c${seen.length}`, { tr });
      if (seen.length === 1) throw new KvError(1020);
    });
    expect(seen).toHaveLength(2);
    expect(seen[1].attempt).toBe(seen[0].attempt + 1);
    // The failed attempt wrote 'a', created a collection and recorded a change: none of it remains.
    expect(seen[1]).toMatchObject({ written: false, changes: 0, manifestWrites: 0 });
    // Its write of 'a' would have made the version unreadable: the retry reads the committed CAS.
    expect(typeof seen[1].cas).toBe('string');
    expect((await users.get('a')).content).toEqual({ n: 1 });
    await docs.close();
  });
});

describe('DocTransaction.changes', () => {
  it('records every document write with its id and the paths it changed, in order', async () => {
    const docs = await open();
    const users = docs.collection('users');
    await users.upsert('gone', { x: 1 });
    const recorded = await docs.transact(async (tr) => {
      await users.insert({ a: 1 }, { id: 'new', tr });
      await users.upsert('up', { b: 2 }, { tr });
      await users.replace('up', { b: 3 }, { tr });
      await users.mutateIn('up', [MutateInSpec.upsert('c.d', 4, { createPath: true }), MutateInSpec.remove('b')], { tr });
      await users.remove('gone', { tr });
      await users.list('l').push(1, { tr });
      await users.list('l').clear({ tr });
      return DocTransaction.of(tr).changes.map(described);
    });
    expect(recorded).toEqual([
      ['write', 'new', [[]]],
      ['write', 'up', [[]]],
      ['write', 'up', [[]]],
      ['write', 'up', [['c', 'd'], ['b']]],
      ['remove', 'gone', [[]]],
      ['write', 'l', [[]]],
      ['remove', 'l', [[]]],
    ]);
    await docs.close();
  });

  it('records nothing for a write that fails, and nothing for reads', async () => {
    const docs = await open();
    const users = docs.collection('users');
    await users.upsert('a', { n: 1 });
    const recorded = await docs.transact(async (tr) => {
      await users.get('a', { tr });
      await users.lookupIn('a', [], { tr }).catch(() => undefined);
      await expect(users.mutateIn('a', [MutateInSpec.upsert('n', 2), MutateInSpec.replace('missing', 1)], { tr })).rejects.toThrow();
      await expect(users.insert({ n: 2 }, { id: 'a', tr })).rejects.toThrow();
      return DocTransaction.of(tr).changes.length;
    });
    expect(recorded).toBe(0);
    await docs.close();
  });

  it('records documents the expiry purge deletes as expired', async () => {
    let now = 1_000_000;
    const docs = await open({ now: () => now });
    const users = docs.collection('users');
    await users.upsert('t', { n: 1 }, { expiry: 10 });
    now += 11_000;
    const seen: string[][] = [];
    const kv = docs.kv;
    const original = kv.transact.bind(kv);
    kv.transact = ((fn: (tr: Transaction) => unknown, opts?: object) =>
      original(async (tr) => {
        const result = await fn(tr);
        seen.push(DocTransaction.of(tr).changes.map((c) => c.kind));
        return result;
      }, opts)) as typeof kv.transact;
    expect(await docs.purgeExpired()).toBe(1);
    expect(seen.flat()).toEqual(['expire']);
    await docs.close();
  });
});

describe('DocTransaction.observe', () => {
  it("tells each observer once of the observed collections' changes and of every collection event", async () => {
    const docs = await open();
    await docs.createCollection('app.fed', { history: true });
    const fed = docs.collection('app.fed');
    const plain = docs.collection('app.plain');
    await plain.upsert('warm', {});
    const told: string[] = [];
    const observer = {
      documentChanged: (_context: DocTransaction, change: DocumentChange) => told.push(described(change).slice(0, 2).join(' ')),
      collectionChanged: (_context: DocTransaction, event: { kind: string; name: string }) => told.push(`${event.kind} ${event.name}`),
    };
    await docs.transact(async (tr) => {
      const context = DocTransaction.of(tr);
      const { collectionId } = await docs.getCollectionId('app.fed', { tr });
      const prefix = docs.layout.collectionPrefix(collectionId);
      context.observe([observer], prefix);
      context.observe([observer], prefix);
      await fed.upsert('a', {}, { tr });
      await plain.upsert('b', {}, { tr });
      await fed.remove('a', { tr });
      context.collectionChanged({ kind: 'historyOff', collectionId, scope: 'app', name: 'fed', history: true });
    });
    expect(told).toEqual(['write a', 'remove a', 'historyOff fed']);
    await docs.close();
  });
});
