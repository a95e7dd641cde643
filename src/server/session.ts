import { Buffer } from 'node:buffer';
import type { Socket } from 'node:net';
import type { Collection } from '../collection';
import type { DocId } from '../document/types';
import type { Bucket } from './bucket';
import { encodeResponse, type Request, type ResponseParts } from './frame';
import { idOfKey } from './item-store';
import { Datatype, Feature, Status, type StatusCode } from './protocol';
import { CommandError } from './server-error';
import type { ScramExchange, StoredUser, UserStore } from './users';

/** What every connection of a server shares. */
export interface ServerContext {
  readonly buckets: ReadonlyMap<string, Bucket>;
  readonly users: UserStore;
  /** Whether FLUSH is allowed when no users are configured. */
  readonly flushWithoutUsers: boolean;
  readonly version: string;
  readonly startedAt: number;
  readonly stats: ServerStats;
  /** The address and port clients reach this server at, for the cluster config. */
  address(): { host: string; port: number };
}

export interface ServerStats {
  currConnections: number;
  totalConnections: number;
  cmdGet: number;
  cmdSet: number;
  getHits: number;
  getMisses: number;
  /** Successful authentications, by SASL mechanism. */
  authentications: Record<string, number>;
}

/** What a command answers: one packet, several (STAT), or nothing (a quiet command's success). */
export type Reply = Buffer | Buffer[] | undefined;

/** The longest key a client may send (memcached's and Couchbase's 250 bytes, after any collection id). */
export const MAX_KEY_BYTES = 250;

/** The state of one connection: negotiated features, the authenticated user, the selected bucket. */
export class Session {
  readonly features = new Set<number>();
  user: StoredUser | undefined;
  bucket: Bucket | undefined;
  scram: ScramExchange | undefined;
  scramMechanism = '';
  /** Set by QUIT: close once the replies so far are written. */
  quitting = false;
  agent = '';

  constructor(
    readonly server: ServerContext,
    readonly socket: Socket,
  ) {
    // Without users, everyone is in: the `default` bucket (or the only one) is selected from the start.
    if (server.users.empty) this.bucket = server.buckets.get('default') ?? (server.buckets.size === 1 ? [...server.buckets.values()][0] : undefined);
  }

  get xerror(): boolean {
    return this.features.has(Feature.Xerror);
  }

  get collections(): boolean {
    return this.features.has(Feature.Collections);
  }

  /** Whether values may be marked JSON in replies (the client negotiated JSON or datatype). */
  get jsonDatatype(): boolean {
    return this.features.has(Feature.Json);
  }

  get authenticated(): boolean {
    return this.server.users.empty || this.user !== undefined;
  }

  /** A reply to `req`. */
  reply(req: Request, parts: ResponseParts = {}): Buffer {
    return encodeResponse(req.opcode, req.opaque, parts);
  }

  /** A failure reply to `req`: the error's body, or a text saying what failed. */
  failure(req: Request, status: StatusCode, message: string, body?: Buffer): Buffer {
    const value = body ?? (this.xerror ? Buffer.from(JSON.stringify({ error: { context: message } })) : Buffer.from(STATUS_TEXT[status] ?? message));
    const json = (body !== undefined || this.xerror) && this.jsonDatatype;
    return encodeResponse(req.opcode, req.opaque, { status, value, datatype: json ? Datatype.Json : Datatype.Raw });
  }

  /** The selected bucket. @throws CommandError NoBucket. */
  selectedBucket(): Bucket {
    if (this.bucket === undefined) throw new CommandError(Status.NoBucket, 'no bucket is selected');
    return this.bucket;
  }

  /**
   * The document a request's key names: its bucket, collection (by the key's collection id when
   * collections are negotiated, else the default one) and id.
   *
   * @throws CommandError NoBucket, InvalidArguments (empty, too long or not UTF-8 key, bad collection
   *   id), UnknownCollection.
   */
  async target(req: Request): Promise<{ bucket: Bucket; collection: Collection; id: DocId }> {
    const bucket = this.selectedBucket();
    let collection = bucket.defaultCollection;
    let key = req.key;
    if (this.collections) ({ collection, rest: key } = await bucket.collectionOfKey(req.key));
    if (key.length === 0) throw new CommandError(Status.InvalidArguments, 'the command needs a key');
    if (key.length > MAX_KEY_BYTES) throw new CommandError(Status.InvalidArguments, `a key is at most ${MAX_KEY_BYTES} bytes`);
    return { bucket, collection, id: idOfKey(key) };
  }
}

/** memcached's texts for the statuses, for clients that did not negotiate xerror. */
const STATUS_TEXT: Partial<Record<number, string>> = {
  [Status.KeyNotFound]: 'Not found',
  [Status.KeyExists]: 'Data exists for key.',
  [Status.TooBig]: 'Too large.',
  [Status.InvalidArguments]: 'Invalid arguments',
  [Status.NotStored]: 'Not stored.',
  [Status.DeltaBadValue]: 'Non-numeric server-side value for incr or decr',
  [Status.AuthError]: 'Auth failure.',
  [Status.UnknownCommand]: 'Unknown command',
  [Status.OutOfMemory]: 'Out of memory',
  [Status.TemporaryFailure]: 'Temporary failure',
};
