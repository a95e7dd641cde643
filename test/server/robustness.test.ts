/**
 * What a client that sends garbage, stalls, or is not allowed in gets: an error reply or a closed
 * connection, never a crash, and never an effect on another connection. Also authentication (PLAIN
 * and SCRAM on the wire) and the collection-id rules of keys.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'crypto';
import { open } from '../../src';
import { Database } from '../../src/kv/contract/database';
import { MemoryEngine } from '../../src/kv/memory/memory-engine';
import { createKvServer, type KvServer } from '../../src/server';
import { Feature, Opcode, Status } from '../../src/server/protocol';
import { encodeRequest, McbpClient, storeExtras } from '../support/mcbp-client';

const servers: KvServer[] = [];
const clients: McbpClient[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.close();
});
afterAll(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function serve(options: Parameters<typeof createKvServer>[0] = {}): Promise<KvServer> {
  const server = await createKvServer({ memory: {}, port: 0, ...options });
  servers.push(server);
  return server;
}

async function connect(server: KvServer): Promise<McbpClient> {
  const client = await McbpClient.connect(server.port);
  clients.push(client);
  return client;
}

function hello(...features: number[]): Buffer {
  const value = Buffer.alloc(features.length * 2);
  features.forEach((f, i) => value.writeUInt16BE(f, i * 2));
  return value;
}

describe('malformed input', () => {
  let server: KvServer;
  beforeAll(async () => {
    server = await serve();
  });

  it('a header with a wrong magic byte is answered Invalid Arguments, then the connection closes', async () => {
    const c = await connect(server);
    const bad = encodeRequest(Opcode.Get, { key: 'k', opaque: 5 });
    bad[0] = 0x42;
    c.write(bad);
    expect(await c.next()).toMatchObject({ status: Status.InvalidArguments, opaque: 5 });
    await c.closed;
  });

  it('an alternative request before HELLO negotiated it is refused the same way', async () => {
    const c = await connect(server);
    c.write(encodeRequest(Opcode.Get, { key: 'k', frameExtras: Buffer.alloc(0) }));
    expect((await c.next()).status).toBe(Status.InvalidArguments);
    await c.closed;
  });

  it('after HELLO negotiates alt-request framing, an alternative request (frame extras, one-byte key length) is served', async () => {
    const c = await connect(server);
    expect((await c.request(Opcode.Hello, { key: 't', value: hello(Feature.AltRequestSupport) })).value).toEqual(hello(Feature.AltRequestSupport));
    const frame = Buffer.from([0x00]);
    expect((await c.request(Opcode.Set, { key: 'alt', extras: storeExtras(3), value: 'framed', frameExtras: frame, opaque: 11 })).opaque).toBe(11);
    const got = await c.request(Opcode.Get, { key: 'alt', frameExtras: Buffer.alloc(0) });
    expect(got).toMatchObject({ status: Status.Success, magic: 0x81 });
    expect(got.value.toString()).toBe('framed');
  });

  it('lengths that disagree (extras and key longer than the body) are Invalid Arguments and close', async () => {
    const c = await connect(server);
    const bad = encodeRequest(Opcode.Set, { key: 'key', extras: storeExtras(0), value: 'v' });
    bad.writeUInt32BE(4, 8);
    c.write(bad);
    expect((await c.next()).status).toBe(Status.InvalidArguments);
    await c.closed;
  });

  it('a body over the item limit is Too Big as soon as its header arrives, and closes', async () => {
    const c = await connect(server);
    const header = encodeRequest(Opcode.Set, { key: 'k', extras: storeExtras(0) }).subarray(0, 24);
    header.writeUInt32BE(30 * 1024 * 1024, 8);
    c.write(header);
    expect((await c.next()).status).toBe(Status.TooBig);
    await c.closed;
  });

  it('an unknown opcode is Unknown Command, and the connection goes on', async () => {
    const c = await connect(server);
    expect((await c.request(0xee)).status).toBe(Status.UnknownCommand);
    expect((await c.request(Opcode.Noop)).status).toBe(Status.Success);
  });

  it('wrong extras, missing keys, over-long and non-UTF-8 keys are Invalid Arguments; the connection goes on', async () => {
    const c = await connect(server);
    expect((await c.request(Opcode.Set, { key: 'k', value: 'v' })).status).toBe(Status.InvalidArguments);
    expect((await c.request(Opcode.Get)).status).toBe(Status.InvalidArguments);
    expect((await c.request(Opcode.Get, { key: 'x'.repeat(251) })).status).toBe(Status.InvalidArguments);
    expect((await c.request(Opcode.Get, { key: Buffer.from([0xff, 0xfe]) })).status).toBe(Status.InvalidArguments);
    expect((await c.request(Opcode.Set, { key: 'k', extras: storeExtras(0), value: 'v' })).status).toBe(Status.Success);
  });

  it('random garbage on one connection leaves the others working', async () => {
    const good = await connect(server);
    for (let round = 0; round < 20; round++) {
      const bad = await connect(server);
      bad.write(randomBytes(24 + (round % 7) * 13));
      bad.close();
    }
    expect((await good.request(Opcode.Set, { key: 'still', extras: storeExtras(0), value: 'ok' })).status).toBe(Status.Success);
    expect((await good.request(Opcode.Get, { key: 'still' })).value.toString()).toBe('ok');
  });
});

describe('connection limits', () => {
  it('closes a connection idle for longer than idleTimeoutMs', async () => {
    const server = await serve({ idleTimeoutMs: 100 });
    const c = await connect(server);
    await c.closed;
  });

  it('closes a connection that leaves a packet incomplete (half-open or stalled) for longer than frameTimeoutMs', async () => {
    const server = await serve({ frameTimeoutMs: 100 });
    const c = await connect(server);
    c.write(encodeRequest(Opcode.Get, { key: 'k' }).subarray(0, 10));
    await c.closed;
  });

  it('closes connections beyond maxConnections as they arrive', async () => {
    const server = await serve({ maxConnections: 2 });
    const a = await connect(server);
    const b = await connect(server);
    expect((await a.request(Opcode.Noop)).status).toBe(Status.Success);
    const extra = await connect(server);
    await extra.closed;
    expect((await b.request(Opcode.Noop)).status).toBe(Status.Success);
  });
});

describe('authentication', () => {
  let server: KvServer;
  beforeAll(async () => {
    server = await serve({ users: [{ name: 'app', password: 's3cret' }], buckets: ['default', 'app'] });
  });

  it('commands before authentication are Auth Error; HELLO, LIST_MECHS and NOOP are allowed', async () => {
    const c = await connect(server);
    expect((await c.request(Opcode.Get, { key: 'k' })).status).toBe(Status.AuthError);
    expect((await c.request(Opcode.SelectBucket, { key: 'default' })).status).toBe(Status.AuthError);
    expect((await c.request(Opcode.Hello, { key: 'test', value: hello(Feature.Xerror) })).status).toBe(Status.Success);
    expect((await c.request(Opcode.SaslListMechs)).value.toString()).toBe('SCRAM-SHA512 SCRAM-SHA256 SCRAM-SHA1 PLAIN');
    expect((await c.request(Opcode.Noop)).status).toBe(Status.Success);
  });

  it("PLAIN with a wrong password or an unknown user is Auth Error; the right one selects the user's bucket", async () => {
    const c = await connect(server);
    expect((await c.request(Opcode.SaslAuth, { key: 'PLAIN', value: '\0app\0wrong' })).status).toBe(Status.AuthError);
    expect((await c.request(Opcode.SaslAuth, { key: 'PLAIN', value: '\0nobody\0s3cret' })).status).toBe(Status.AuthError);
    expect((await c.request(Opcode.Get, { key: 'k' })).status).toBe(Status.AuthError);
    expect((await c.request(Opcode.SaslAuth, { key: 'PLAIN', value: '\0app\0s3cret' })).status).toBe(Status.Success);
    expect((await c.request(Opcode.Set, { key: 'k', extras: storeExtras(0), value: 'in app' })).status).toBe(Status.Success);
    expect((await c.request(Opcode.SelectBucket, { key: 'default' })).status).toBe(Status.Success);
    expect((await c.request(Opcode.Get, { key: 'k' })).status).toBe(Status.KeyNotFound);
    expect((await c.request(Opcode.SelectBucket, { key: 'nope' })).status).toBe(Status.KeyNotFound);
    expect((await c.request(Opcode.Flush)).status).toBe(Status.Eaccess);
  });

  it.each([
    ['SCRAM-SHA512', 'sha512', 64],
    ['SCRAM-SHA256', 'sha256', 32],
    ['SCRAM-SHA1', 'sha1', 20],
  ] as const)('%s: the right password authenticates and the server proves it knows the key; a wrong one fails', async (mechanism, hash, size) => {
    const scram = async (password: string) => {
      const c = await connect(server);
      const nonce = randomBytes(12).toString('base64');
      const first = await c.request(Opcode.SaslAuth, { key: mechanism, value: `n,,n=app,r=${nonce}` });
      expect(first.status).toBe(Status.AuthContinue);
      const serverFirst = first.value.toString();
      const fields = Object.fromEntries(serverFirst.split(',').map((part) => [part[0], part.slice(2)]));
      expect(fields.r.startsWith(nonce)).toBe(true);
      const salted = pbkdf2Sync(password, Buffer.from(fields.s, 'base64'), Number(fields.i), size, hash);
      const clientKey = createHmac(hash, salted).update('Client Key').digest();
      const storedKey = createHash(hash).update(clientKey).digest();
      const finalBare = `c=biws,r=${fields.r}`;
      const authMessage = `n=app,r=${nonce},${serverFirst},${finalBare}`;
      const signature = createHmac(hash, storedKey).update(authMessage).digest();
      const proof = Buffer.from(clientKey.map((byte, i) => byte ^ signature[i]));
      const final = await c.request(Opcode.SaslStep, { key: mechanism, value: `${finalBare},p=${proof.toString('base64')}` });
      const serverKey = createHmac(hash, salted).update('Server Key').digest();
      return { c, final, expected: `v=${createHmac(hash, serverKey).update(authMessage).digest('base64')}` };
    };
    const good = await scram('s3cret');
    expect(good.final.status).toBe(Status.Success);
    expect(good.final.value.toString()).toBe(good.expected);
    expect((await good.c.request(Opcode.Noop)).status).toBe(Status.Success);
    const bad = await scram('nope');
    expect(bad.final.status).toBe(Status.AuthError);
    expect((await bad.c.request(Opcode.Get, { key: 'k' })).status).toBe(Status.AuthError);
  });
});

describe('collection ids in keys', () => {
  let server: KvServer;
  beforeAll(async () => {
    server = await serve();
    await server.buckets.get('default')?.docs.createCollection('app.users');
  });

  const collectionsClient = async () => {
    const c = await connect(server);
    expect((await c.request(Opcode.Hello, { key: 't', value: hello(Feature.Collections, Feature.Xerror, Feature.Json) })).value).toEqual(
      hello(Feature.Collections, Feature.Xerror, Feature.Json),
    );
    return c;
  };

  it('routes a key to the collection its LEB128 id names; the same name in two collections is two items', async () => {
    const c = await collectionsClient();
    const id = await c.request(Opcode.GetCollectionId, { value: 'app.users' });
    expect(id.status).toBe(Status.Success);
    const cid = id.extras.readUInt32BE(8);
    expect(cid).toBeGreaterThanOrEqual(8);
    await c.request(Opcode.Set, { key: Buffer.concat([Buffer.from([cid]), Buffer.from('k')]), extras: storeExtras(0), value: 'users' });
    await c.request(Opcode.Set, { key: Buffer.concat([Buffer.from([0]), Buffer.from('k')]), extras: storeExtras(0), value: 'default' });
    expect((await c.request(Opcode.Get, { key: Buffer.concat([Buffer.from([cid]), Buffer.from('k')]) })).value.toString()).toBe('users');
    expect((await c.request(Opcode.Get, { key: Buffer.concat([Buffer.from([0]), Buffer.from('k')]) })).value.toString()).toBe('default');
  });

  it('a non-canonical or over-long collection id is Invalid Arguments', async () => {
    const c = await collectionsClient();
    expect((await c.request(Opcode.Get, { key: Buffer.from([0x80, 0x00, 0x6b]) })).status).toBe(Status.InvalidArguments);
    expect((await c.request(Opcode.Get, { key: Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x6b]) })).status).toBe(Status.InvalidArguments);
    expect((await c.request(Opcode.Get, { key: Buffer.from([0x88]) })).status).toBe(Status.InvalidArguments);
  });

  it('an unknown collection id is Unknown Collection with the manifest uid', async () => {
    const c = await collectionsClient();
    const reply = await c.request(Opcode.Get, { key: Buffer.from([0x7f, 0x6b]) });
    expect(reply.status).toBe(Status.UnknownCollection);
    const body = JSON.parse(reply.value.toString()) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['manifest_uid']);
    expect(body.manifest_uid).toMatch(/^[0-9a-f]+$/);
  });

  it('0xbb/0xbc: unknown scope or collection answer 0x8c/0x88 with the manifest uid; the header rules are Invalid Arguments', async () => {
    const c = await collectionsClient();
    expect((await c.request(Opcode.GetCollectionId, { value: 'app.nope' })).status).toBe(Status.UnknownCollection);
    const scope = await c.request(Opcode.GetCollectionId, { value: 'nope.users' });
    expect(scope.status).toBe(Status.UnknownScope);
    expect(JSON.parse(scope.value.toString())).toHaveProperty('manifest_uid');
    expect((await c.request(Opcode.GetScopeId, { value: 'app' })).status).toBe(Status.Success);
    expect((await c.request(Opcode.GetScopeId, { value: '' })).extras.readUInt32BE(8)).toBe(0);
    expect((await c.request(Opcode.GetCollectionId, { value: '.' })).extras.readUInt32BE(8)).toBe(0);
    for (const bad of [{ cas: 1n }, { vbucket: 1 }, { datatype: 1 }, { extras: Buffer.alloc(4) }, { key: 'k' }]) {
      expect((await c.request(Opcode.GetCollectionId, { value: 'app.users', ...bad })).status).toBe(Status.InvalidArguments);
      expect((await c.request(Opcode.GetCollectionsManifest, bad)).status).toBe(Status.InvalidArguments);
    }
    expect((await c.request(Opcode.GetCollectionId, { value: 'a.b.c' })).status).toBe(Status.InvalidArguments);
    expect((await c.request(Opcode.GetCollectionId, { value: 'app.b@d' })).status).toBe(Status.InvalidArguments);
  });

  it('0xb9 sets the manifest (a lower uid is Out of Range); 0xba returns it', async () => {
    const c = await collectionsClient();
    const current = JSON.parse((await c.request(Opcode.GetCollectionsManifest)).value.toString()) as { uid: string };
    const next = {
      uid: (parseInt(current.uid, 16) + 1).toString(16),
      scopes: [
        {
          name: '_default',
          uid: '0',
          collections: [
            { name: '_default', uid: '0' },
            { name: 'fresh', uid: '20' },
          ],
        },
      ],
    };
    expect((await c.request(Opcode.SetCollectionsManifest, { value: JSON.stringify(next) })).status).toBe(Status.Success);
    expect(JSON.parse((await c.request(Opcode.GetCollectionsManifest)).value.toString())).toMatchObject({ uid: next.uid });
    expect((await c.request(Opcode.SetCollectionsManifest, { value: JSON.stringify({ ...next, uid: '1' }) })).status).toBe(Status.OutOfRange);
    expect((await c.request(Opcode.SetCollectionsManifest, { value: '{"uid":' })).status).toBe(Status.InvalidArguments);
    expect((await c.request(Opcode.SetCollectionsManifest, { value: JSON.stringify(next), cas: 1n })).status).toBe(Status.InvalidArguments);
    expect((await c.request(Opcode.Set, { key: Buffer.from([0x20, 0x6b]), extras: storeExtras(0), value: 'v' })).status).toBe(Status.Success);
  });
});

describe('sub-document commands on the wire', () => {
  let server: KvServer;
  beforeAll(async () => {
    server = await serve();
  });

  /** One multi-lookup spec: opcode, flags, path. */
  const lookup = (opcode: number, path: string, flags = 0): Buffer => {
    const head = Buffer.alloc(4);
    head[0] = opcode;
    head[1] = flags;
    head.writeUInt16BE(Buffer.byteLength(path), 2);
    return Buffer.concat([head, Buffer.from(path)]);
  };

  it('a lookup answers each spec with its status and value, Multi Path Failure when one fails', async () => {
    const c = await connect(server);
    await c.request(Opcode.Set, { key: 'd', extras: storeExtras(0x02000006), value: '{"a":[1,2]}' });
    const reply = await c.request(Opcode.SubdocMultiLookup, {
      key: 'd',
      value: Buffer.concat([lookup(0xc5, 'a[1]'), lookup(0xc5, 'b'), lookup(0xc5, 'x', 0x04)]),
    });
    expect(reply.status).toBe(Status.SubdocMultiPathFailure);
    expect(reply.value.readUInt16BE(0)).toBe(Status.Success);
    expect(reply.value.subarray(6, 6 + reply.value.readUInt32BE(2)).toString()).toBe('2');
    expect(reply.value.readUInt16BE(7)).toBe(Status.SubdocPathNotFound);
    expect(reply.value.readUInt16BE(13)).toBe(Status.SubdocPathNotFound);
  });

  it('an item whose value is not JSON has no paths: Doc Not JSON', async () => {
    const c = await connect(server);
    await c.request(Opcode.Set, { key: 't', extras: storeExtras(0), value: 'plain text' });
    expect((await c.request(Opcode.SubdocMultiLookup, { key: 't', value: lookup(0xc5, 'a') })).status).toBe(Status.SubdocDocNotJson);
  });

  it('a spec list cut short is Invalid Arguments; the connection goes on', async () => {
    const c = await connect(server);
    expect((await c.request(Opcode.SubdocMultiLookup, { key: 'd', value: Buffer.from([0xc5, 0, 0, 9, 0x61]) })).status).toBe(Status.InvalidArguments);
    expect((await c.request(Opcode.SubdocMultiMutation, { key: 'd', value: Buffer.from([0xc8, 0, 0, 1]) })).status).toBe(Status.InvalidArguments);
    expect((await c.request(Opcode.Noop)).status).toBe(Status.Success);
  });
});

describe('what the server serves', () => {
  it('serves a doclayer database given as db: what the library wrote, a client reads', async () => {
    const db = await open();
    try {
      await db.collection().upsert('k', { from: 'library' });
      const c = await connect(await serve({ memory: undefined, db }));
      const got = await c.request(Opcode.Get, { key: 'k' });
      expect(got.status).toBe(Status.Success);
      expect(JSON.parse(got.value.toString())).toEqual({ from: 'library' });
    } finally {
      for (const server of servers.splice(0)) await server.close();
      await db.close();
    }
  });

  it('serves an engine given as engine, and leaves it open for its owner', async () => {
    const engine = new MemoryEngine();
    const server = await serve({ memory: undefined, engine });
    const c = await connect(server);
    expect((await c.request(Opcode.Set, { key: 'k', extras: storeExtras(0), value: 'v' })).status).toBe(Status.Success);
    await server.close();
    servers.splice(servers.indexOf(server), 1);
    expect(
      await new Database(engine).transact(async (tr) => (await tr.getRangeAll(Buffer.from([0x00]), Buffer.from([0xff]))).length),
    ).toBeGreaterThan(0);
  });

  it('refuses two engines at once, before listening', async () => {
    const engine = new MemoryEngine();
    await expect(createKvServer({ engine, memory: {}, port: 0 })).rejects.toThrow('give one of db, engine');
  });
});
