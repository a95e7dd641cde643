import { Buffer } from 'node:buffer';
import type { Collection } from '../collection';
import { isDocumentError } from '../document/errors';
import { META_ITEM } from '../document/keys/layout';
import { docIdElement } from '../document/keys/ids';
import type { DocId, JsonValue, LookupInSpec, MutateInOptions, MutateInSpec } from '../document/types';
import type { Transaction } from '../kv/contract/types';
import type { Bucket } from './bucket';
import { expect, type Handler } from './classic-commands';
import type { Request } from './frame';
import { itemExpiry, JSON_COMMON_FLAGS } from './item-store';
import { readExpiry } from '../document/collection/expiry';
import { jsonText, parseJson } from './item-value';
import { Datatype, Opcode, Status, type StatusCode } from './protocol';
import { CommandError } from './server-error';
import type { Session } from './session';
import { casOfRequest, wireCas } from './wire-cas';
import { casOf } from '../document/keys/version';

/**
 * Couchbase's sub-document multi-path commands (kv_engine docs/SubDocument.md), on doclayer's
 * lookupIn and mutateIn: multi-lookup 0xd0 (get, exists, count, whole-document get) and
 * multi-mutation 0xd1 (dict add/upsert, replace, delete, array push first/last, insert, add unique,
 * counter, whole-document set and delete), with the mkdir_p path flag and the mkdoc/add document
 * flags. Extended attributes (xattrs) are not kept: a spec with the xattr flag fails with its own
 * status.
 */

const SubdocOp = {
  Get: 0xc5,
  Exists: 0xc6,
  DictAdd: 0xc7,
  DictUpsert: 0xc8,
  Delete: 0xc9,
  Replace: 0xca,
  ArrayPushLast: 0xcb,
  ArrayPushFirst: 0xcc,
  ArrayInsert: 0xcd,
  ArrayAddUnique: 0xce,
  Counter: 0xcf,
  GetCount: 0xd2,
  WholeGet: 0x00,
  WholeSet: 0x01,
  WholeDelete: 0x04,
} as const;

const PathFlag = { MkdirP: 0x01, Xattr: 0x04 } as const;
const DocFlag = { Mkdoc: 0x01, Add: 0x02, AccessDeleted: 0x04 } as const;
const MAX_SPECS = 16;

/** The sub-document status of a document-layer error about one path. */
function specStatus(err: unknown): StatusCode {
  if (!isDocumentError(err)) return Status.InternalError;
  switch (err.code) {
    case 'PATH_NOT_FOUND':
      return Status.SubdocPathNotFound;
    case 'PATH_MISMATCH':
    case 'WRONG_KIND':
      return Status.SubdocPathMismatch;
    case 'INVALID_PATH':
      return Status.SubdocPathInvalid;
    case 'PATH_EXISTS':
      return Status.SubdocPathExists;
    case 'VALUE_TOO_DEEP':
      return Status.SubdocValueTooDeep;
    case 'VALUE_CANNOT_INSERT':
    case 'INVALID_VALUE':
      return Status.SubdocValueCannotInsert;
    case 'DELTA_INVALID':
      return Status.SubdocDeltaRange;
    case 'NUMBER_TOO_BIG':
      return Status.SubdocNumRange;
    case 'DOCUMENT_TOO_LARGE':
    case 'KEY_TOO_LARGE':
      return Status.TooBig;
    default:
      return Status.SubdocInvalidCombo;
  }
}

/** Errors that fail the whole command rather than one spec. */
function isDocumentLevel(err: unknown): boolean {
  return (
    isDocumentError(err) &&
    [
      'DOCUMENT_NOT_FOUND',
      'DOCUMENT_EXISTS',
      'CAS_MISMATCH',
      'DOCUMENT_LOCKED',
      'UNKNOWN_COLLECTION',
      'UNKNOWN_SCOPE',
      'DOCUMENT_TOO_LARGE',
    ].includes(err.code)
  );
}

/** Fails unless the item is a JSON document (text and binary items have no paths). */
async function requireJson(tr: Transaction, collection: Collection, id: DocId): Promise<void> {
  const keys = await collection.structureAccess().keysToRead(tr, docIdElement(id));
  if (keys === undefined) return;
  const record = await tr.get(keys.meta(META_ITEM));
  if (record !== undefined && record[0] !== 0) throw new CommandError(Status.SubdocDocNotJson, 'the item is not a JSON document');
}

interface LookupSpecOnWire {
  readonly opcode: number;
  readonly flags: number;
  readonly path: string;
}

function parseLookupSpecs(value: Buffer): LookupSpecOnWire[] {
  const specs: LookupSpecOnWire[] = [];
  let at = 0;
  while (at < value.length) {
    if (at + 4 > value.length) throw new CommandError(Status.InvalidArguments, 'a lookup spec is cut short');
    const pathLength = value.readUInt16BE(at + 2);
    if (at + 4 + pathLength > value.length) throw new CommandError(Status.InvalidArguments, 'a lookup spec is cut short');
    specs.push({ opcode: value[at], flags: value[at + 1], path: value.toString('utf8', at + 4, at + 4 + pathLength) });
    at += 4 + pathLength;
  }
  if (specs.length === 0 || specs.length > MAX_SPECS)
    throw new CommandError(Status.SubdocInvalidCombo, `a multi-path command has 1 to ${MAX_SPECS} specs`);
  return specs;
}

function lookupSpecOf(spec: LookupSpecOnWire): LookupInSpec {
  if (spec.flags & PathFlag.Xattr) throw new CommandError(Status.SubdocPathNotFound, 'no such extended attribute: only $document is kept');
  switch (spec.opcode) {
    case SubdocOp.Get:
      return { op: 'get', path: spec.path };
    case SubdocOp.WholeGet:
      return { op: 'get', path: '' };
    case SubdocOp.Exists:
      return { op: 'exists', path: spec.path };
    case SubdocOp.GetCount:
      return { op: 'count', path: spec.path };
    default:
      throw new CommandError(Status.SubdocInvalidCombo, `0x${spec.opcode.toString(16)} is not a lookup`);
  }
}

/** Multi-lookup: each spec's status and value; Multi Path Failure when any spec failed. */
const multiLookup: Handler = async (session, req) => {
  expect(req, { extras: [0, 1], key: true, value: true });
  const { bucket, collection, id } = await session.target(req);
  const specs = parseLookupSpecs(req.value);
  const results: { status: StatusCode; value: Buffer }[] = new Array<{ status: StatusCode; value: Buffer }>(specs.length);
  const asked: { index: number; spec: LookupInSpec }[] = [];
  specs.forEach((spec, index) => {
    try {
      asked.push({ index, spec: lookupSpecOf(spec) });
    } catch (err) {
      results[index] = { status: err instanceof CommandError ? err.status : Status.SubdocInvalidCombo, value: Buffer.alloc(0) };
    }
  });
  const virtual = specs.flatMap((spec, index) => (spec.flags & PathFlag.Xattr && isDocumentAttribute(spec.path) ? [{ index, path: spec.path }] : []));
  const found = await bucket.docs.kv.transact(async (tr) => {
    await requireJson(tr, collection, id);
    const [looked, attributes] = await Promise.all([
      asked.length === 0
        ? collection.get(id, { tr }).then((doc) => ({ entries: [], cas: doc.cas }))
        : collection.lookupIn(
            id,
            asked.map((a) => a.spec),
            { tr },
          ),
      virtual.length === 0 ? undefined : documentAttributes(tr, collection, id),
    ]);
    return { ...looked, attributes };
  });
  for (const { index, path } of virtual) {
    const attributes: Record<string, JsonValue> = { ...found.attributes, CAS: `0x${wireCas(found.cas).toString(16).padStart(16, '0')}` };
    const field = path === '$document' ? undefined : path.slice('$document.'.length);
    const value = field === undefined ? attributes : attributes[field];
    results[index] =
      value === undefined
        ? { status: Status.SubdocPathNotFound, value: Buffer.alloc(0) }
        : { status: Status.Success, value: Buffer.from(jsonText(value)) };
  }
  found.entries.forEach((entry, i) => {
    const { index, spec } = asked[i];
    if (entry.error !== undefined) results[index] = { status: specStatus(entry.error), value: Buffer.alloc(0) };
    else if (spec.op === 'exists')
      results[index] = { status: entry.value === true ? Status.Success : Status.SubdocPathNotFound, value: Buffer.alloc(0) };
    else results[index] = { status: Status.Success, value: Buffer.from(jsonText(entry.value as JsonValue)) };
  });
  const body = Buffer.concat(
    results.flatMap((result) => {
      const head = Buffer.allocUnsafe(6);
      head.writeUInt16BE(result.status, 0);
      head.writeUInt32BE(result.value.length, 2);
      return [head, result.value];
    }),
  );
  const failed = results.some((result) => result.status !== Status.Success);
  return session.reply(req, {
    status: failed ? Status.SubdocMultiPathFailure : Status.Success,
    cas: wireCas(found.cas),
    value: body,
    datatype: Datatype.Raw,
  });
};

/** `$document` and its fields: the virtual extended attribute of a document's metadata. */
function isDocumentAttribute(path: string): boolean {
  return path === '$document' || path.startsWith('$document.');
}

/** The fields of `$document` this server keeps: expiry (Unix seconds, 0 for none), flags, datatype. */
async function documentAttributes(tr: Transaction, collection: Collection, id: DocId): Promise<Record<string, JsonValue>> {
  const keys = await collection.structureAccess().keysToRead(tr, docIdElement(id));
  if (keys === undefined) return {};
  const [expiresAt, record] = await Promise.all([readExpiry(tr, keys), tr.get(keys.meta(META_ITEM))]);
  const flags = record === undefined ? JSON_COMMON_FLAGS : Buffer.from(record).readUInt32BE(1);
  const json = record === undefined || record[0] === 0;
  return { exptime: expiresAt === undefined ? 0 : Math.ceil(expiresAt / 1000), flags, datatype: json ? ['json'] : ['raw'], deleted: false };
}

interface MutationSpecOnWire extends LookupSpecOnWire {
  readonly value: Buffer;
}

function parseMutationSpecs(value: Buffer): MutationSpecOnWire[] {
  const specs: MutationSpecOnWire[] = [];
  let at = 0;
  while (at < value.length) {
    if (at + 8 > value.length) throw new CommandError(Status.InvalidArguments, 'a mutation spec is cut short');
    const pathLength = value.readUInt16BE(at + 2);
    const valueLength = value.readUInt32BE(at + 4);
    const end = at + 8 + pathLength + valueLength;
    if (end > value.length) throw new CommandError(Status.InvalidArguments, 'a mutation spec is cut short');
    specs.push({
      opcode: value[at],
      flags: value[at + 1],
      path: value.toString('utf8', at + 8, at + 8 + pathLength),
      value: value.subarray(at + 8 + pathLength, end),
    });
    at = end;
  }
  if (specs.length === 0 || specs.length > MAX_SPECS)
    throw new CommandError(Status.SubdocInvalidCombo, `a multi-path command has 1 to ${MAX_SPECS} specs`);
  return specs;
}

/** A spec's JSON value; `list` for array ops, whose value is JSON values separated by commas. */
function specValue(bytes: Buffer, list: boolean): JsonValue {
  const text = bytes.toString('utf8');
  const parsed = parseJson(list ? `[${text}]` : text);
  if (parsed === undefined) throw new CommandError(Status.SubdocValueCannotInsert, 'the value is not JSON');
  return parsed.value;
}

function mutationSpecOf(spec: MutationSpecOnWire): MutateInSpec {
  if (spec.flags & PathFlag.Xattr) throw new CommandError(Status.SubdocXattrInvalidFlagCombo, 'extended attributes are not kept');
  const options = spec.flags & PathFlag.MkdirP ? { createPath: true } : undefined;
  const path = spec.path;
  switch (spec.opcode) {
    case SubdocOp.DictAdd:
      return { op: 'insert', path, value: specValue(spec.value, false), options };
    case SubdocOp.DictUpsert:
      return { op: 'upsert', path, value: specValue(spec.value, false), options };
    case SubdocOp.Replace:
      return { op: 'replace', path, value: specValue(spec.value, false), options };
    case SubdocOp.Delete:
      return { op: 'remove', path, options };
    case SubdocOp.ArrayPushLast:
      return { op: 'arrayAppend', path, value: specValue(spec.value, true), options: { ...options, multi: true } };
    case SubdocOp.ArrayPushFirst:
      return { op: 'arrayPrepend', path, value: specValue(spec.value, true), options: { ...options, multi: true } };
    case SubdocOp.ArrayInsert:
      return { op: 'arrayInsert', path, value: specValue(spec.value, true), options: { ...options, multi: true } };
    case SubdocOp.ArrayAddUnique:
      return { op: 'arrayAddUnique', path, value: specValue(spec.value, false), options };
    case SubdocOp.Counter: {
      const text = spec.value.toString('latin1');
      if (!/^[+-]?[0-9]{1,19}$/.test(text)) throw new CommandError(Status.SubdocDeltaRange, 'a counter delta is a 64-bit integer');
      const delta = BigInt(text);
      if (delta === 0n) throw new CommandError(Status.SubdocDeltaRange, 'a counter delta is not 0');
      const small = delta >= BigInt(Number.MIN_SAFE_INTEGER) && delta <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(delta) : delta;
      return { op: 'increment', path, delta: small, options };
    }
    case SubdocOp.WholeSet:
      return { op: 'upsert', path: '', value: specValue(spec.value, false) };
    case SubdocOp.WholeDelete:
      return { op: 'remove', path: '' };
    default:
      throw new CommandError(Status.SubdocInvalidCombo, `0x${spec.opcode.toString(16)} is not a mutation`);
  }
}

/** Multi-mutation extras: none, the expiry (4 bytes), the document flags (1), or both (5). */
function mutationExtras(req: Request): { expiry: number | undefined; docFlags: number } {
  switch (req.extras.length) {
    case 0:
      return { expiry: undefined, docFlags: 0 };
    case 1:
      return { expiry: undefined, docFlags: req.extras[0] };
    case 4:
      return { expiry: req.extras.readUInt32BE(0), docFlags: 0 };
    case 5:
      return { expiry: req.extras.readUInt32BE(0), docFlags: req.extras[4] };
    default:
      throw new CommandError(Status.InvalidArguments, 'a multi-mutation takes 0, 1, 4 or 5 bytes of extras');
  }
}

/**
 * Multi-mutation, all or nothing: on success the counters' results (index, status, value); on a
 * spec's failure Multi Path Failure with that spec's index and status.
 */
const multiMutation: Handler = async (session, req) => {
  expect(req, { extras: [0, 1, 4, 5], key: true, value: true });
  const { bucket, collection, id } = await session.target(req);
  const { expiry, docFlags } = mutationExtras(req);
  if (docFlags & DocFlag.AccessDeleted) throw new CommandError(Status.NotSupported, 'deleted documents are not kept');
  if (docFlags & DocFlag.Mkdoc && docFlags & DocFlag.Add) throw new CommandError(Status.InvalidArguments, 'mkdoc and add exclude each other');
  const wire = parseMutationSpecs(req.value);
  const specs: MutateInSpec[] = [];
  for (let index = 0; index < wire.length; index++) {
    try {
      specs.push(mutationSpecOf(wire[index]));
    } catch (err) {
      if (!(err instanceof CommandError) || err.status === Status.InvalidArguments) throw err;
      return pathFailure(session, req, index, err.status);
    }
  }
  const storeSemantics = docFlags & DocFlag.Add ? 'insert' : docFlags & DocFlag.Mkdoc ? 'upsert' : 'replace';
  try {
    const { values, cas } = await mutate(bucket, collection, id, specs, req.cas, {
      storeSemantics,
      ...(expiry === undefined || expiry === 0 ? {} : { expiry: itemExpiry(expiry) }),
    });
    const body = Buffer.concat(
      values.flatMap((value, index) => {
        if (value === undefined) return [];
        const text = Buffer.from(jsonText(value));
        const head = Buffer.allocUnsafe(7);
        head[0] = index;
        head.writeUInt16BE(Status.Success, 1);
        head.writeUInt32BE(text.length, 3);
        return [head, text];
      }),
    );
    return session.reply(req, { cas, value: body });
  } catch (err) {
    if (isDocumentError(err) && !isDocumentLevel(err) && err.specIndex !== undefined)
      return pathFailure(session, req, err.specIndex, specStatus(err));
    throw err;
  }
};

async function mutate(
  bucket: Bucket,
  collection: Collection,
  id: DocId,
  specs: MutateInSpec[],
  wire: bigint,
  options: Omit<MutateInOptions, 'tr' | 'cas'>,
): Promise<{ values: (JsonValue | undefined)[]; cas: bigint }> {
  let stamp: Promise<Buffer> | undefined;
  const values = await bucket.docs.kv.transact(async (tr) => {
    stamp = tr.getVersionstamp();
    stamp.catch(() => undefined);
    await requireJson(tr, collection, id);
    const cas = await casOfRequest(tr, await collection.structureAccess().keysToRead(tr, docIdElement(id)), wire);
    return (await collection.mutateIn(id, specs, { ...options, tr, cas })).values;
  });
  return { values, cas: wireCas(casOf(await (stamp as Promise<Buffer>))) };
}

function pathFailure(session: Session, req: Request, index: number, status: StatusCode): Buffer {
  const value = Buffer.allocUnsafe(3);
  value[0] = index;
  value.writeUInt16BE(status, 1);
  return session.reply(req, { status: Status.SubdocMultiPathFailure, value });
}

export const SUBDOC_COMMANDS: ReadonlyMap<number, Handler> = new Map<number, Handler>([
  [Opcode.SubdocMultiLookup, multiLookup],
  [Opcode.SubdocMultiMutation, multiMutation],
]);
