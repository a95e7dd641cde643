import { Buffer } from 'node:buffer';
import type { Bucket } from './bucket';
import { Datatype, Opcode, Status } from './protocol';
import type { Request } from './frame';
import { itemExpiry, type Item, type StoreMode } from './item-store';
import { CommandError } from './server-error';
import type { Reply, Session } from './session';

/**
 * The memcached commands, as memcached 1.6 answers them: GET/GETQ/GETK/GETKQ, SET/ADD/REPLACE (+Q),
 * DELETE(Q), INCR/DECR(Q), APPEND/PREPEND(Q), TOUCH, GAT(Q), FLUSH(Q), NOOP, VERSION, STAT, QUIT(Q),
 * VERBOSITY, and Couchbase's GET_LOCKED and UNLOCK. Quiet variants are silenced by the dispatcher
 * (`commands.ts`); each handler answers as the loud one.
 */

export type Handler = (session: Session, req: Request) => Promise<Reply>;

/** Checks a request's shape: its extras length, and whether it must (or must not) have a key and value. */
export function expect(req: Request, shape: { extras: number | readonly number[]; key: boolean | 'optional'; value: boolean | 'optional' }): void {
  const extras = typeof shape.extras === 'number' ? [shape.extras] : shape.extras;
  if (!extras.includes(req.extras.length))
    throw new CommandError(Status.InvalidArguments, `the command takes ${extras.join(' or ')} bytes of extras`);
  if (shape.key !== 'optional' && shape.key !== req.key.length > 0) {
    throw new CommandError(Status.InvalidArguments, shape.key ? 'the command needs a key' : 'the command takes no key');
  }
  if (shape.value !== 'optional' && shape.value === false && req.value.length > 0)
    throw new CommandError(Status.InvalidArguments, 'the command takes no value');
}

function flagsExtras(flags: number): Buffer {
  const out = Buffer.allocUnsafe(4);
  out.writeUInt32BE(flags >>> 0, 0);
  return out;
}

/** The reply carrying an item: flags in the extras, the key for GETK/GETKQ, the JSON datatype when negotiated. */
function itemReply(session: Session, req: Request, item: Item, withKey: boolean): Buffer {
  return session.reply(req, {
    cas: item.cas,
    extras: flagsExtras(item.flags),
    key: withKey ? req.key : undefined,
    value: item.value,
    datatype: item.json && session.jsonDatatype ? Datatype.Json : Datatype.Raw,
  });
}

const get =
  (withKey: boolean): Handler =>
  async (session, req) => {
    expect(req, { extras: 0, key: true, value: false });
    const { bucket, collection, id } = await session.target(req);
    session.server.stats.cmdGet++;
    try {
      const item = await bucket.items.get(collection, id);
      session.server.stats.getHits++;
      return itemReply(session, req, item, withKey);
    } catch (err) {
      session.server.stats.getMisses++;
      throw err;
    }
  };

const store =
  (mode: StoreMode): Handler =>
  async (session, req) => {
    expect(req, { extras: 8, key: true, value: 'optional' });
    const { bucket, collection, id } = await session.target(req);
    session.server.stats.cmdSet++;
    const flags = req.extras.readUInt32BE(0);
    const expiry = itemExpiry(req.extras.readUInt32BE(4));
    const json = (req.datatype & Datatype.Json) !== 0;
    const cas = await bucket.items.store(collection, id, mode, req.value, flags, json, expiry, req.cas);
    return session.reply(req, { cas });
  };

const remove: Handler = async (session, req) => {
  expect(req, { extras: 0, key: true, value: false });
  const { bucket, collection, id } = await session.target(req);
  const cas = await bucket.items.remove(collection, id, req.cas);
  // memcached answers a delete with CAS 0; Couchbase clients (they say HELLO) get the removal's.
  return session.reply(req, { cas: session.features.size > 0 ? cas : 0n });
};

const arithmetic =
  (increment: boolean): Handler =>
  async (session, req) => {
    expect(req, { extras: 20, key: true, value: false });
    const { bucket, collection, id } = await session.target(req);
    const delta = req.extras.readBigUInt64BE(0);
    const initial = req.extras.readBigUInt64BE(8);
    const expiryField = req.extras.readUInt32BE(16);
    const { value, cas } = await bucket.items.arithmetic(collection, id, increment, delta, initial, expiryField, req.cas);
    const body = Buffer.allocUnsafe(8);
    body.writeBigUInt64BE(value, 0);
    return session.reply(req, { cas, value: body });
  };

const concat =
  (prepend: boolean): Handler =>
  async (session, req) => {
    expect(req, { extras: 0, key: true, value: 'optional' });
    const { bucket, collection, id } = await session.target(req);
    const cas = await bucket.items.concat(collection, id, req.value, prepend, req.cas);
    return session.reply(req, { cas });
  };

const touch: Handler = async (session, req) => {
  expect(req, { extras: 4, key: true, value: false });
  const { bucket, collection, id } = await session.target(req);
  const cas = await bucket.items.touch(collection, id, itemExpiry(req.extras.readUInt32BE(0)));
  return session.reply(req, { cas });
};

const getAndTouch: Handler = async (session, req) => {
  expect(req, { extras: 4, key: true, value: false });
  const { bucket, collection, id } = await session.target(req);
  const item = await bucket.items.getAndTouch(collection, id, itemExpiry(req.extras.readUInt32BE(0)));
  return itemReply(session, req, item, false);
};

/** Couchbase's GET_LOCKED: extras optionally the lock time in seconds (0, or over 30: the default 15). */
const getLocked: Handler = async (session, req) => {
  expect(req, { extras: [0, 4], key: true, value: false });
  const { bucket, collection, id } = await session.target(req);
  const asked = req.extras.length === 4 ? req.extras.readUInt32BE(0) : 0;
  const item = await bucket.items.getAndLock(collection, id, asked === 0 || asked > 30 ? 15 : asked);
  return itemReply(session, req, item, false);
};

const unlock: Handler = async (session, req) => {
  expect(req, { extras: 0, key: true, value: false });
  const { bucket, collection, id } = await session.target(req);
  await bucket.items.unlock(collection, id, req.cas);
  return session.reply(req);
};

const flush: Handler = async (session, req) => {
  expect(req, { extras: [0, 4], key: false, value: false });
  const bucket = session.selectedBucket();
  const allowed = session.server.users.empty ? session.server.flushWithoutUsers : session.user?.admin === true;
  if (!allowed) throw new CommandError(Status.Eaccess, 'this user may not flush the bucket');
  if (req.extras.length === 4 && req.extras.readUInt32BE(0) !== 0) throw new CommandError(Status.NotSupported, 'a delayed flush is not supported');
  await flushBucket(bucket);
  return session.reply(req);
};

/** Removes every document of every collection of the bucket, through the document API (a page per transaction). */
async function flushBucket(bucket: Bucket): Promise<void> {
  const manifest = await bucket.refreshManifest();
  for (const scope of manifest.scopes) {
    for (const entry of scope.collections) {
      const collection = bucket.docs.collection(`${scope.name}.${entry.name}`);
      for (;;) {
        const ids: (string | number | bigint)[] = [];
        for await (const doc of collection.scan({ limit: 500, pageSize: 500 })) ids.push(doc.id);
        if (ids.length === 0) break;
        await bucket.docs.kv.transact(async (tr) => {
          await Promise.all(ids.map((id) => collection.remove(id, { tr }).catch(() => undefined)));
        });
      }
    }
  }
}

const noop: Handler = async (session, req) => session.reply(req);

const version: Handler = async (session, req) => session.reply(req, { value: Buffer.from(session.server.version) });

const verbosity: Handler = async (session, req) => {
  expect(req, { extras: 4, key: false, value: false });
  return session.reply(req);
};

const quit: Handler = async (session, req) => {
  session.quitting = true;
  return session.reply(req);
};

/** STAT: with no key, the general statistics, one packet each, then an empty packet. */
const stat: Handler = async (session, req) => {
  if (req.key.length > 0) throw new CommandError(Status.KeyNotFound, `no statistics group ${JSON.stringify(req.key.toString('utf8'))}`);
  const { stats, startedAt, version: serverVersion } = session.server;
  const now = Date.now();
  const pairs: [string, string | number][] = [
    ['pid', process.pid],
    ['uptime', Math.floor((now - startedAt) / 1000)],
    ['time', Math.floor(now / 1000)],
    ['version', serverVersion],
    ['curr_connections', stats.currConnections],
    ['total_connections', stats.totalConnections],
    ['cmd_get', stats.cmdGet],
    ['cmd_set', stats.cmdSet],
    ['get_hits', stats.getHits],
    ['get_misses', stats.getMisses],
  ];
  const packets = pairs.map(([name, value]) => session.reply(req, { key: Buffer.from(name), value: Buffer.from(String(value)) }));
  packets.push(session.reply(req));
  return packets;
};

export const CLASSIC_COMMANDS: ReadonlyMap<number, Handler> = new Map<number, Handler>([
  [Opcode.Get, get(false)],
  [Opcode.GetQ, get(false)],
  [Opcode.GetK, get(true)],
  [Opcode.GetKQ, get(true)],
  [Opcode.Set, store('set')],
  [Opcode.SetQ, store('set')],
  [Opcode.Add, store('add')],
  [Opcode.AddQ, store('add')],
  [Opcode.Replace, store('replace')],
  [Opcode.ReplaceQ, store('replace')],
  [Opcode.Delete, remove],
  [Opcode.DeleteQ, remove],
  [Opcode.Increment, arithmetic(true)],
  [Opcode.IncrementQ, arithmetic(true)],
  [Opcode.Decrement, arithmetic(false)],
  [Opcode.DecrementQ, arithmetic(false)],
  [Opcode.Append, concat(false)],
  [Opcode.AppendQ, concat(false)],
  [Opcode.Prepend, concat(true)],
  [Opcode.PrependQ, concat(true)],
  [Opcode.Touch, touch],
  [Opcode.GetAndTouch, getAndTouch],
  [Opcode.GetAndTouchQ, getAndTouch],
  [Opcode.GetLocked, getLocked],
  [Opcode.UnlockKey, unlock],
  [Opcode.Flush, flush],
  [Opcode.FlushQ, flush],
  [Opcode.Noop, noop],
  [Opcode.Version, version],
  [Opcode.Verbosity, verbosity],
  [Opcode.Quit, quit],
  [Opcode.QuitQ, quit],
  [Opcode.Stat, stat],
]);
