/**
 * The official Couchbase Node.js SDK against `createKvServer` on an ephemeral port: bootstrap (HELLO,
 * SCRAM-SHA512, error map, bucket selection, cluster config), CRUD with CAS and the SDK's error
 * classes, sub-document lookups and mutations, the SDK's data structures, named collections, locks
 * and touch, and PLAIN authentication. One cluster connection serves the file (bootstrap is slow).
 */
import * as couchbase from 'couchbase';
import { createKvServer, type KvServer } from '../../src/server';

const USER = { name: 'Administrator', password: 'p4ssword', admin: true };
const TIMEOUTS = { kvTimeout: 5000, connectTimeout: 10000, bootstrapTimeout: 10000, managementTimeout: 5000 };

let server: KvServer;
let cluster: couchbase.Cluster;
let bucket: couchbase.Bucket;
let c: couchbase.Collection;

beforeAll(async () => {
  server = await createKvServer({ memory: {}, port: 0, users: [USER] });
  const docs = server.buckets.get('default')?.docs;
  await docs?.createCollection('app.users');
  await docs?.createCollection('app.orders');
  cluster = await couchbase.connect(`couchbase://127.0.0.1:${server.port}`, { username: USER.name, password: USER.password, timeouts: TIMEOUTS });
  bucket = cluster.bucket('default');
  c = bucket.defaultCollection();
}, 30_000);

afterAll(async () => {
  await cluster?.close();
  await server?.close();
});

describe('the Couchbase SDK', () => {
  it('bootstraps with SCRAM-SHA512, the default mechanism without TLS', () => {
    expect(server.stats.authentications['SCRAM-SHA512']).toBeGreaterThanOrEqual(1);
  });

  it('upsert, get, insert, replace and remove, with CAS and the SDK error classes', async () => {
    const written = await c.upsert('crud', { name: 'ada', n: 1 });
    const got = await c.get('crud');
    expect(got.content).toEqual({ name: 'ada', n: 1 });
    expect(got.cas.toString()).toBe(written.cas.toString());
    await expect(c.insert('crud', {})).rejects.toBeInstanceOf(couchbase.DocumentExistsError);
    const replaced = await c.replace('crud', { name: 'ada', n: 2 }, { cas: got.cas });
    await expect(c.replace('crud', { n: 3 }, { cas: got.cas })).rejects.toBeInstanceOf(couchbase.CasMismatchError);
    await c.remove('crud', { cas: replaced.cas });
    await expect(c.get('crud')).rejects.toBeInstanceOf(couchbase.DocumentNotFoundError);
    await expect(c.remove('crud')).rejects.toBeInstanceOf(couchbase.DocumentNotFoundError);
    await expect(c.replace('crud', {})).rejects.toBeInstanceOf(couchbase.DocumentNotFoundError);
    await c.insert('crud', 'a string');
    expect((await c.get('crud')).content).toBe('a string');
  });

  it('exists', async () => {
    await c.upsert('here', 1);
    expect((await c.exists('here')).exists).toBe(true);
    expect((await c.exists('not-here')).exists).toBe(false);
  });

  it('lookupIn: get, exists, count, and per-path errors', async () => {
    await c.upsert('sub', { a: { b: [1, 2, 3] }, s: 'x' });
    const result = await c.lookupIn('sub', [
      couchbase.LookupInSpec.get('a.b[1]'),
      couchbase.LookupInSpec.exists('s'),
      couchbase.LookupInSpec.exists('nope'),
      couchbase.LookupInSpec.count('a.b'),
      couchbase.LookupInSpec.get('missing'),
      couchbase.LookupInSpec.get(''),
    ]);
    expect(result.content[0].value).toBe(2);
    expect(result.content[1].value).toBe(true);
    expect(result.content[2].value).toBe(false);
    expect(result.content[3].value).toBe(3);
    expect(result.content[4].error).toBeInstanceOf(couchbase.PathNotFoundError);
    expect(result.content[5].value).toEqual({ a: { b: [1, 2, 3] }, s: 'x' });
    await expect(c.lookupIn('no-doc', [couchbase.LookupInSpec.get('a')])).rejects.toBeInstanceOf(couchbase.DocumentNotFoundError);
  });

  it('mutateIn: every path operation, createPath, counters, and store semantics', async () => {
    await c.upsert('mut', { list: [2], obj: {} });
    const result = await c.mutateIn('mut', [
      couchbase.MutateInSpec.insert('obj.new', 1),
      couchbase.MutateInSpec.upsert('deep.er.path', true, { createPath: true }),
      couchbase.MutateInSpec.replace('obj.new', 5),
      couchbase.MutateInSpec.arrayAppend('list', [3, 4], { multi: true }),
      couchbase.MutateInSpec.arrayPrepend('list', 1),
      couchbase.MutateInSpec.arrayInsert('list[1]', 'x'),
      couchbase.MutateInSpec.arrayAddUnique('list', 9),
      couchbase.MutateInSpec.increment('count', 5, { createPath: true }),
      couchbase.MutateInSpec.decrement('count', 2),
      couchbase.MutateInSpec.remove('obj.new'),
    ]);
    expect(result.content[7].value).toBe(5);
    expect(result.content[8].value).toBe(3);
    expect((await c.get('mut')).content).toEqual({ list: [1, 'x', 2, 3, 4, 9], obj: {}, deep: { er: { path: true } }, count: 3 });
    await expect(c.mutateIn('mut', [couchbase.MutateInSpec.insert('count', 1)])).rejects.toBeInstanceOf(couchbase.PathExistsError);
    await expect(c.mutateIn('mut', [couchbase.MutateInSpec.replace('nope', 1)])).rejects.toBeInstanceOf(couchbase.PathNotFoundError);
    await expect(c.mutateIn('mut', [couchbase.MutateInSpec.arrayAppend('obj', 1)])).rejects.toBeInstanceOf(couchbase.PathMismatchError);
    await c.mutateIn('fresh', [couchbase.MutateInSpec.upsert('a', 1)], { storeSemantics: couchbase.StoreSemantics.Upsert });
    await expect(
      c.mutateIn('fresh', [couchbase.MutateInSpec.upsert('a', 1)], { storeSemantics: couchbase.StoreSemantics.Insert }),
    ).rejects.toBeInstanceOf(couchbase.DocumentExistsError);
    await expect(c.mutateIn('absent', [couchbase.MutateInSpec.upsert('a', 1)])).rejects.toBeInstanceOf(couchbase.DocumentNotFoundError);
    expect((await c.get('fresh')).content).toEqual({ a: 1 });
  });

  it('CouchbaseList, CouchbaseMap, CouchbaseSet and CouchbaseQueue', async () => {
    const list = c.list('a-list');
    await list.push('b');
    await list.push('c');
    await list.unshift('a');
    expect(await list.getAll()).toEqual(['a', 'b', 'c']);
    expect(await list.getAt(1)).toBe('b');
    expect(await list.size()).toBe(3);
    await list.removeAt(1);
    expect(await list.indexOf('c')).toBe(1);

    const map = c.map('a-map');
    await map.set('x', 1);
    await map.set('y', { z: 2 });
    expect(await map.get('y')).toEqual({ z: 2 });
    expect(await map.exists('x')).toBe(true);
    await map.remove('x');
    expect(await map.keys()).toEqual(['y']);
    expect(await map.size()).toBe(1);

    const set = c.set('a-set');
    expect(await set.add('p')).toBe(true);
    expect(await set.add('p')).toBe(false);
    await set.add('q');
    expect(await set.contains('q')).toBe(true);
    await set.remove('p');
    expect(await set.values()).toEqual(['q']);

    const queue = c.queue('a-queue');
    await queue.push(1);
    await queue.push(2);
    expect(await queue.size()).toBe(2);
    expect(await queue.pop()).toBe(1);
    expect(await queue.pop()).toBe(2);
  });

  it('keeps documents of named collections apart, and reports an unknown collection', async () => {
    const users = bucket.scope('app').collection('users');
    const orders = bucket.scope('app').collection('orders');
    await users.upsert('same', { kind: 'user' });
    await orders.upsert('same', { kind: 'order' });
    expect((await users.get('same')).content).toEqual({ kind: 'user' });
    expect((await orders.get('same')).content).toEqual({ kind: 'order' });
    await expect(c.get('same')).rejects.toBeInstanceOf(couchbase.DocumentNotFoundError);
    expect((await server.buckets.get('default')?.docs.collection('app.users').get('same'))?.content).toEqual({ kind: 'user' });
    await expect(bucket.scope('app').collection('nope').get('k', { timeout: 1500 })).rejects.toThrow();
  });

  it('getAndLock, unlock, touch and getAndTouch', async () => {
    await c.upsert('lock', { v: 1 });
    const locked = await c.getAndLock('lock', 10);
    await expect(c.upsert('lock', { v: 2 }, { timeout: 1000 })).rejects.toThrow();
    await c.unlock('lock', locked.cas);
    await c.upsert('lock', { v: 3 });
    const again = await c.getAndLock('lock', 10);
    await c.replace('lock', { v: 4 }, { cas: again.cas });
    await c.touch('lock', 100);
    const touched = await c.getAndTouch('lock', 200);
    expect(touched.content).toEqual({ v: 4 });
    expect((await c.get('lock', { withExpiry: true })).expiryTime).toBeGreaterThan(Date.now() / 1000 + 150);
  });

  it('binary counters, append and prepend', async () => {
    const binary = c.binary();
    expect((await binary.increment('ctr', 1, { initial: 10 })).value).toBe(10);
    expect((await binary.increment('ctr', 5)).value).toBe(15);
    expect((await binary.decrement('ctr', 20)).value).toBe(0);
    await c.upsert('raw', Buffer.from('mid'));
    await binary.append('raw', 'end');
    await binary.prepend('raw', 'start');
    expect((await c.get('raw')).content).toEqual(Buffer.from('startmidend'));
  });

  it('authenticates with PLAIN when the connection string allows only PLAIN', async () => {
    const before = server.stats.authentications.PLAIN ?? 0;
    const plain = await couchbase.connect(`couchbase://127.0.0.1:${server.port}?allowed_sasl_mechanisms=PLAIN`, {
      username: USER.name,
      password: USER.password,
      timeouts: TIMEOUTS,
    });
    try {
      expect((await plain.bucket('default').defaultCollection().get('here')).content).toBe(1);
      expect(server.stats.authentications.PLAIN).toBeGreaterThan(before);
    } finally {
      await plain.close();
    }
  }, 20_000);
});
