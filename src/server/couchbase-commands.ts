import { Buffer } from 'node:buffer';
import { isDocumentError } from '../document/errors';
import { ManifestLookupError } from '../document/manifest/manifest';
import { unknownCollection, unknownScope } from './bucket';
import { expect, type Handler } from './classic-commands';
import type { Request } from './frame';
import { Datatype, Feature, Opcode, Status } from './protocol';
import { errorMap } from './error-map';
import { clusterConfig } from './cluster-config';
import { CommandError } from './server-error';
import type { Session } from './session';
import { MECHANISMS } from './users';

/**
 * Couchbase's commands around the memcached ones: HELLO, SASL (PLAIN and SCRAM), SELECT_BUCKET,
 * GET_ERROR_MAP, GET_CLUSTER_CONFIG, GET_META and the collections commands 0xb9-0xbc.
 */

/** The HELLO features this server agrees to, when a client asks for them. */
const SUPPORTED_FEATURES: ReadonlySet<number> = new Set([
  Feature.Datatype,
  Feature.TcpNodelay,
  Feature.Xerror,
  Feature.SelectBucket,
  Feature.Json,
  Feature.AltRequestSupport,
  Feature.Collections,
]);

const hello: Handler = async (session, req) => {
  if (req.value.length % 2 !== 0) throw new CommandError(Status.InvalidArguments, 'HELLO lists 16-bit features');
  session.agent = req.key.toString('utf8').slice(0, 200);
  session.features.clear();
  const agreed: number[] = [];
  for (let at = 0; at < req.value.length; at += 2) {
    const feature = req.value.readUInt16BE(at);
    if (SUPPORTED_FEATURES.has(feature) && !session.features.has(feature)) {
      session.features.add(feature);
      agreed.push(feature);
    }
  }
  const value = Buffer.allocUnsafe(agreed.length * 2);
  agreed.forEach((feature, i) => value.writeUInt16BE(feature, i * 2));
  return session.reply(req, { value });
};

const listMechanisms: Handler = async (session, req) => session.reply(req, { value: Buffer.from(MECHANISMS.join(' ')) });

/** SASL_AUTH: PLAIN in one step; SCRAM's first message (answered with Auth Continue). */
const saslAuth: Handler = async (session, req) => {
  const mechanism = req.key.toString('utf8');
  session.scram = undefined;
  if (mechanism === 'PLAIN') {
    const user = await session.server.users.plain(req.value);
    if (user === undefined) throw authFailure();
    authenticated(session, user, mechanism);
    return session.reply(req, { value: Buffer.from('Authenticated') });
  }
  const exchange = session.server.users.scram(mechanism);
  if (exchange === undefined) throw new CommandError(Status.AuthError, `unknown mechanism ${JSON.stringify(mechanism)}`);
  const first = exchange.first(req.value);
  if (first === undefined) throw authFailure();
  session.scram = exchange;
  session.scramMechanism = mechanism;
  return session.reply(req, { status: Status.AuthContinue, value: Buffer.from(first) });
};

/** SASL_STEP: SCRAM's final message. */
const saslStep: Handler = async (session, req) => {
  const exchange = session.scram;
  session.scram = undefined;
  const done = exchange?.final(req.value);
  if (done === undefined) throw authFailure();
  authenticated(session, done.user, session.scramMechanism);
  return session.reply(req, { value: Buffer.from(done.reply) });
};

function authFailure(): CommandError {
  return new CommandError(Status.AuthError, 'authentication failed');
}

function authenticated(session: Session, user: NonNullable<Session['user']>, mechanism: string): void {
  session.user = user;
  const counts = session.server.stats.authentications;
  counts[mechanism] = (counts[mechanism] ?? 0) + 1;
  // As Couchbase Server does for legacy clients: a bucket named as the user is selected.
  const own = session.server.buckets.get(user.name);
  session.bucket = own !== undefined && mayUse(session, own.name) ? own : undefined;
}

function mayUse(session: Session, bucket: string): boolean {
  if (session.server.users.empty) return true;
  const allowed = session.user?.buckets;
  return session.user !== undefined && (allowed === undefined || allowed.includes(bucket));
}

const selectBucket: Handler = async (session, req) => {
  expect(req, { extras: 0, key: true, value: false });
  const name = req.key.toString('utf8');
  const bucket = session.server.buckets.get(name);
  if (!mayUse(session, name)) throw new CommandError(Status.Eaccess, `no access to bucket ${JSON.stringify(name)}`);
  if (bucket === undefined) throw new CommandError(Status.KeyNotFound, `no bucket ${JSON.stringify(name)}`);
  session.bucket = bucket;
  return session.reply(req);
};

const getErrorMap: Handler = async (session, req) => {
  if (req.value.length !== 2) throw new CommandError(Status.InvalidArguments, 'GET_ERROR_MAP takes a 16-bit version');
  return session.reply(req, { value: Buffer.from(JSON.stringify(errorMap(req.value.readUInt16BE(0)))), datatype: jsonType(session) });
};

const getClusterConfig: Handler = async (session, req) => {
  const { host, port } = session.server.address();
  const config = clusterConfig(session.bucket?.name, localHost(session) ?? host, port);
  return session.reply(req, { value: Buffer.from(JSON.stringify(config)), datatype: jsonType(session) });
};

/** The address this connection reached the server at: the config must name it. */
function localHost(session: Session): string | undefined {
  const address = session.socket.localAddress;
  if (address === undefined) return undefined;
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

/**
 * GET_META: extras deleted (always 0: no tombstones are kept), flags, expiry (Unix seconds, 0 for
 * none), sequence number (0: none kept), and with request extras version 2 the datatype.
 */
const getMeta: Handler = async (session, req) => {
  expect(req, { extras: [0, 1], key: true, value: false });
  const { bucket, collection, id } = await session.target(req);
  const item = await bucket.items.get(collection, id);
  const withDatatype = req.extras.length === 1 && req.extras[0] >= 2;
  const extras = Buffer.alloc(withDatatype ? 21 : 20);
  extras.writeUInt32BE(item.flags >>> 0, 4);
  extras.writeUInt32BE(item.expiresAt === undefined ? 0 : Math.ceil(item.expiresAt.getTime() / 1000), 8);
  if (withDatatype) extras[20] = item.json ? Datatype.Json : Datatype.Raw;
  return session.reply(req, { cas: item.cas, extras });
};

/** The collections commands' header rule: extras, CAS, vbucket and datatype are 0. */
function collectionsHeader(req: Request, rule: { value: boolean | 'optional' }): void {
  if (req.extras.length !== 0 || req.cas !== 0n || req.vbucket !== 0 || req.datatype !== 0) {
    throw new CommandError(Status.InvalidArguments, 'extra len, cas, vbucket and datatype must be 0');
  }
  if (req.key.length !== 0) throw new CommandError(Status.InvalidArguments, 'the command takes no key');
  if (rule.value !== 'optional' && rule.value !== req.value.length > 0)
    throw new CommandError(Status.InvalidArguments, rule.value ? 'the command needs a value' : 'the command takes no value');
}

const setCollectionsManifest: Handler = async (session, req) => {
  collectionsHeader(req, { value: true });
  const bucket = session.selectedBucket();
  if (!session.server.users.empty && session.user?.admin !== true) throw new CommandError(Status.Eaccess, 'this user may not set the manifest');
  let json: unknown;
  try {
    json = JSON.parse(req.value.toString('utf8'));
  } catch {
    throw new CommandError(Status.InvalidArguments, 'the manifest is not JSON');
  }
  try {
    await bucket.docs.setManifest(json as object);
  } catch (err) {
    if (isDocumentError(err, 'OUT_OF_RANGE')) throw new CommandError(Status.OutOfRange, err.message);
    throw err;
  }
  await bucket.refreshManifest();
  return session.reply(req);
};

const getCollectionsManifest: Handler = async (session, req) => {
  collectionsHeader(req, { value: false });
  const manifest = await session.selectedBucket().refreshManifest();
  return session.reply(req, { value: Buffer.from(JSON.stringify(manifest)), datatype: jsonType(session) });
};

/** The path of 0xbb/0xbc, from the value (as the specification says; a key is refused by the header rule). */
function pathOf(req: Request): string {
  return req.value.toString('utf8');
}

const getCollectionId: Handler = async (session, req) => {
  collectionsHeader(req, { value: true });
  const bucket = session.selectedBucket();
  const path = pathOf(req);
  if (path.split('.').length !== 2) throw new CommandError(Status.InvalidArguments, 'a collection path is scope.collection');
  try {
    const found = await bucket.docs.getCollectionId(path);
    return session.reply(req, { extras: idExtras(found.manifestUid, found.collectionId) });
  } catch (err) {
    throw lookupFailure(err);
  }
};

const getScopeId: Handler = async (session, req) => {
  collectionsHeader(req, { value: 'optional' });
  const bucket = session.selectedBucket();
  const path = pathOf(req);
  const parts = path.split('.');
  if (parts.length > 2) throw new CommandError(Status.InvalidArguments, 'a scope path is scope (or scope.collection)');
  try {
    const found = await bucket.docs.getScopeId(parts[0]);
    return session.reply(req, { extras: idExtras(found.manifestUid, found.scopeId) });
  } catch (err) {
    throw lookupFailure(err);
  }
};

function lookupFailure(err: unknown): unknown {
  if (err instanceof ManifestLookupError) return err.code === 'UNKNOWN_SCOPE' ? unknownScope(err.manifestUid) : unknownCollection(err.manifestUid);
  if (isDocumentError(err, 'INVALID_ARGUMENT')) return new CommandError(Status.InvalidArguments, err.message);
  return err;
}

function idExtras(manifestUid: string, id: number): Buffer {
  const out = Buffer.allocUnsafe(12);
  out.writeBigUInt64BE(BigInt(`0x${manifestUid}`), 0);
  out.writeUInt32BE(id, 8);
  return out;
}

function jsonType(session: Session): number {
  return session.jsonDatatype ? Datatype.Json : Datatype.Raw;
}

export const COUCHBASE_COMMANDS: ReadonlyMap<number, Handler> = new Map<number, Handler>([
  [Opcode.Hello, hello],
  [Opcode.SaslListMechs, listMechanisms],
  [Opcode.SaslAuth, saslAuth],
  [Opcode.SaslStep, saslStep],
  [Opcode.SelectBucket, selectBucket],
  [Opcode.GetErrorMap, getErrorMap],
  [Opcode.GetClusterConfig, getClusterConfig],
  [Opcode.GetMeta, getMeta],
  [Opcode.GetMetaQ, getMeta],
  [Opcode.SetCollectionsManifest, setCollectionsManifest],
  [Opcode.GetCollectionsManifest, getCollectionsManifest],
  [Opcode.GetCollectionId, getCollectionId],
  [Opcode.GetScopeId, getScopeId],
]);
