/**
 * The memcached commands on the wire, as memcached 1.6 answers them, on every engine: values, flags
 * and expiry round trip, CAS on every mutation, quiet commands, pipelining, arithmetic, append and
 * prepend, touch, STAT, and Couchbase's lock commands.
 */
import { open, type DocLayer } from '../../src';
import type { Database } from '../../src/kv/contract/database';
import { createKvServer, type KvServer } from '../../src/server';
import { Opcode, Status } from '../../src/server/protocol';
import { documentEngines } from '../support/document-engines';
import { arithmeticExtras, McbpClient, storeExtras } from '../support/mcbp-client';

describe.each(documentEngines.map((engine) => [engine.name, engine] as const))('the memcached commands [%s]', (_name, engine) => {
  let database: Database;
  let server: KvServer;
  let docs: DocLayer;
  const clients: McbpClient[] = [];

  beforeAll(async () => {
    database = await engine.open();
    server = await createKvServer({ database, port: 0 });
    docs = await open({ database });
  });
  afterAll(async () => {
    await server.close();
    await docs.close();
    await database.close();
    await engine.cleanup?.();
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
  });
  const connect = async () => {
    const client = await McbpClient.connect(server.port);
    clients.push(client);
    return client;
  };

  it('SET then GET returns the value byte for byte with its flags and a CAS; the opaque is echoed', async () => {
    const c = await connect();
    const bytes = Buffer.from([0, 1, 2, 0xff, 0xfe, 0x80, 0x7f]);
    const set = await c.request(Opcode.Set, { key: 'bin', extras: storeExtras(0xdeadbeef), value: bytes, opaque: 0x01020304 });
    expect(set).toMatchObject({ status: Status.Success, opaque: 0x01020304 });
    expect(set.cas).not.toBe(0n);
    const got = await c.request(Opcode.Get, { key: 'bin', opaque: 77 });
    expect(got).toMatchObject({ status: Status.Success, opaque: 77, cas: set.cas, value: bytes });
    expect(got.extras.readUInt32BE(0)).toBe(0xdeadbeef);
  });

  it('keeps text and non-canonical JSON byte for byte, and canonical JSON as a document the library reads', async () => {
    const c = await connect();
    for (const [key, text] of [
      ['text', 'hello world'],
      ['spaced', '{ "a": 1 }'],
      ['float', '1.50'],
      ['big', '123456789012345678901234567890'],
      ['empty', ''],
    ]) {
      await c.request(Opcode.Set, { key, extras: storeExtras(1), value: text });
      expect((await c.request(Opcode.Get, { key })).value.toString()).toBe(text);
    }
    await c.request(Opcode.Set, { key: 'doc', extras: storeExtras(0x02000006), value: '{"a":[1,2,{"b":null}]}' });
    expect((await c.request(Opcode.Get, { key: 'doc' })).value.toString()).toBe('{"a":[1,2,{"b":null}]}');
    expect((await docs.collection().get('doc')).content).toEqual({ a: [1, 2, { b: null }] });
    expect((await docs.collection().get('text')).content).toBe('hello world');
  });

  it('GETK returns the key; a miss is Not Found with CAS 0', async () => {
    const c = await connect();
    await c.request(Opcode.Set, { key: 'k', extras: storeExtras(0), value: 'v' });
    expect((await c.request(Opcode.GetK, { key: 'k' })).key.toString()).toBe('k');
    expect(await c.request(Opcode.Get, { key: 'missing' })).toMatchObject({ status: Status.KeyNotFound, cas: 0n });
  });

  it('ADD fails on an existing key, REPLACE on a missing one', async () => {
    const c = await connect();
    expect((await c.request(Opcode.Add, { key: 'a1', extras: storeExtras(0), value: 'x' })).status).toBe(Status.Success);
    expect((await c.request(Opcode.Add, { key: 'a1', extras: storeExtras(0), value: 'y' })).status).toBe(Status.KeyExists);
    expect((await c.request(Opcode.Replace, { key: 'r1', extras: storeExtras(0), value: 'y' })).status).toBe(Status.KeyNotFound);
  });

  it('a mutation with a CAS succeeds only over that version; a wrong CAS is Key Exists with CAS 0', async () => {
    const c = await connect();
    const first = await c.request(Opcode.Set, { key: 'cas', extras: storeExtras(0), value: '1' });
    const second = await c.request(Opcode.Set, { key: 'cas', extras: storeExtras(0), value: '2', cas: first.cas });
    expect(second.status).toBe(Status.Success);
    expect(await c.request(Opcode.Set, { key: 'cas', extras: storeExtras(0), value: '3', cas: first.cas })).toMatchObject({
      status: Status.KeyExists,
      cas: 0n,
    });
    expect((await c.request(Opcode.Delete, { key: 'cas', cas: first.cas })).status).toBe(Status.KeyExists);
    expect((await c.request(Opcode.Append, { key: 'cas', value: 'x', cas: first.cas })).status).toBe(Status.KeyExists);
    expect((await c.request(Opcode.Delete, { key: 'cas', cas: second.cas })).status).toBe(Status.Success);
    expect((await c.request(Opcode.Set, { key: 'cas', extras: storeExtras(0), value: '4', cas: second.cas })).status).toBe(Status.KeyNotFound);
  });

  it('quiet commands are silent on success, GETQ on a miss; pipelined requests are answered in order', async () => {
    const c = await connect();
    c.send(Opcode.SetQ, { key: 'q1', extras: storeExtras(0), value: 'one', opaque: 1 });
    c.send(Opcode.GetQ, { key: 'nope', opaque: 2 });
    c.send(Opcode.GetKQ, { key: 'q1', opaque: 3 });
    c.send(Opcode.AddQ, { key: 'q1', extras: storeExtras(0), value: 'two', opaque: 4 });
    c.send(Opcode.Get, { key: 'q1', opaque: 5 });
    c.send(Opcode.DeleteQ, { key: 'q1', opaque: 6 });
    c.send(Opcode.Noop, { opaque: 7 });
    const replies = [await c.next(), await c.next(), await c.next(), await c.next()];
    expect(replies.map((r) => [r.opaque, r.status])).toEqual([
      [3, Status.Success],
      [4, Status.KeyExists],
      [5, Status.Success],
      [7, Status.Success],
    ]);
    expect(replies[0].key.toString()).toBe('q1');
  });

  it('INCR and DECR: initial value, 64-bit wrap, decrement stops at 0, non-numeric values refused', async () => {
    const c = await connect();
    const created = await c.request(Opcode.Increment, { key: 'n', extras: arithmeticExtras(5n, 10n) });
    expect(created.value.readBigUInt64BE(0)).toBe(10n);
    expect((await c.request(Opcode.Increment, { key: 'n', extras: arithmeticExtras(5n, 0n) })).value.readBigUInt64BE(0)).toBe(15n);
    expect((await c.request(Opcode.Decrement, { key: 'n', extras: arithmeticExtras(100n, 0n) })).value.readBigUInt64BE(0)).toBe(0n);
    await c.request(Opcode.Set, { key: 'max', extras: storeExtras(0), value: '18446744073709551615' });
    expect((await c.request(Opcode.Increment, { key: 'max', extras: arithmeticExtras(2n, 0n) })).value.readBigUInt64BE(0)).toBe(1n);
    expect((await c.request(Opcode.Increment, { key: 'absent', extras: arithmeticExtras(1n, 0n, 0xffffffff) })).status).toBe(Status.KeyNotFound);
    await c.request(Opcode.Set, { key: 'word', extras: storeExtras(0), value: 'abc' });
    expect((await c.request(Opcode.Increment, { key: 'word', extras: arithmeticExtras(1n, 0n) })).status).toBe(Status.DeltaBadValue);
    expect((await c.request(Opcode.Get, { key: 'n' })).value.toString()).toBe('0');
  });

  it('APPEND and PREPEND join bytes and keep the flags; a missing key is Not Stored', async () => {
    const c = await connect();
    await c.request(Opcode.Set, { key: 'ap', extras: storeExtras(42), value: 'mid' });
    await c.request(Opcode.Append, { key: 'ap', value: Buffer.from([0xff]) });
    await c.request(Opcode.Prepend, { key: 'ap', value: 'pre' });
    const got = await c.request(Opcode.Get, { key: 'ap' });
    expect(got.value).toEqual(Buffer.concat([Buffer.from('premid'), Buffer.from([0xff])]));
    expect(got.extras.readUInt32BE(0)).toBe(42);
    expect((await c.request(Opcode.Append, { key: 'none', value: 'x' })).status).toBe(Status.NotStored);
  });

  it('expiry: an absolute time already past removes the item at once; TOUCH and GAT set it; GET_META reports it', async () => {
    const c = await connect();
    const past = Math.floor(Date.now() / 1000) - 60;
    await c.request(Opcode.Set, { key: 'gone', extras: storeExtras(0, past), value: 'x' });
    expect((await c.request(Opcode.Get, { key: 'gone' })).status).toBe(Status.KeyNotFound);
    const later = Math.floor(Date.now() / 1000) + 3600;
    await c.request(Opcode.Set, { key: 'ttl', extras: storeExtras(7), value: 'x' });
    const expiry = Buffer.alloc(4);
    expiry.writeUInt32BE(later);
    expect((await c.request(Opcode.Touch, { key: 'ttl', extras: expiry })).status).toBe(Status.Success);
    const meta = await c.request(Opcode.GetMeta, { key: 'ttl' });
    expect(meta.extras.readUInt32BE(4)).toBe(7);
    expect(meta.extras.readUInt32BE(8)).toBe(later);
    const gat = await c.request(Opcode.GetAndTouch, { key: 'ttl', extras: Buffer.alloc(4) });
    expect(gat.value.toString()).toBe('x');
    expect((await c.request(Opcode.GetMeta, { key: 'ttl' })).extras.readUInt32BE(8)).toBe(0);
    expect((await c.request(Opcode.Touch, { key: 'absent', extras: expiry })).status).toBe(Status.KeyNotFound);
  });

  it('GET_LOCKED locks: others see CAS -1 and cannot write; the lock CAS writes; UNLOCK ends it', async () => {
    const c = await connect();
    await c.request(Opcode.Set, { key: 'lk', extras: storeExtras(0), value: 'v1' });
    const locked = await c.request(Opcode.GetLocked, { key: 'lk' });
    expect(locked.status).toBe(Status.Success);
    expect((await c.request(Opcode.Get, { key: 'lk' })).cas).toBe(0xffffffffffffffffn);
    expect((await c.request(Opcode.Set, { key: 'lk', extras: storeExtras(0), value: 'v2' })).status).toBe(Status.TemporaryFailure);
    expect((await c.request(Opcode.Set, { key: 'lk', extras: storeExtras(0), value: 'v2', cas: locked.cas })).status).toBe(Status.Success);
    const again = await c.request(Opcode.GetLocked, { key: 'lk', extras: Buffer.from([0, 0, 0, 5]) });
    expect((await c.request(Opcode.UnlockKey, { key: 'lk', cas: again.cas })).status).toBe(Status.Success);
    expect((await c.request(Opcode.Set, { key: 'lk', extras: storeExtras(0), value: 'v3' })).status).toBe(Status.Success);
  });

  it('NOOP, VERSION and a multi-packet STAT ending with an empty packet', async () => {
    const c = await connect();
    expect((await c.request(Opcode.Noop)).status).toBe(Status.Success);
    expect((await c.request(Opcode.Version)).value.toString()).toMatch(/^1\.6/);
    c.send(Opcode.Stat, { opaque: 9 });
    const names: string[] = [];
    for (;;) {
      const packet = await c.next();
      expect(packet.opaque).toBe(9);
      if (packet.key.length === 0) break;
      names.push(packet.key.toString());
    }
    expect(names).toEqual(expect.arrayContaining(['pid', 'uptime', 'version', 'curr_connections', 'cmd_get']));
  });

  it('QUIT answers and closes; QUITQ closes silently', async () => {
    const c = await connect();
    expect((await c.request(Opcode.Quit)).status).toBe(Status.Success);
    await c.closed;
    const d = await connect();
    d.send(Opcode.QuitQ);
    await d.closed;
  });
});
