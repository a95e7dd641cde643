import { Buffer } from 'node:buffer';
import type { Collection } from '../collection';
import { decodeLeb128 } from '../document/keys/leb128';
import type { Manifest } from '../document/manifest/manifest';
import type { Database } from '../kv/contract/database';
import { open, type DocLayer } from '../open';
import type { Tuple } from '../tuple';
import { ItemStore } from './item-store';
import { Status } from './protocol';
import { CommandError } from './server-error';

/**
 * A bucket: one doclayer database (its own key prefix) on the server's engine. Its scopes and
 * collections are doclayer's, so collection ids in keys are doclayer's collection ids. The bucket named
 * `default` uses doclayer's default prefix, so `open({ path })` on the same folder sees its documents;
 * any other bucket `b` lives under the prefix `('doclayer-bucket', b)`.
 */
export class Bucket {
  readonly items: ItemStore;
  private manifest: Manifest | undefined;
  private byId = new Map<number, Collection>();

  private constructor(
    readonly name: string,
    readonly docs: DocLayer,
  ) {
    this.items = new ItemStore(docs.kv);
  }

  static async open(name: string, database: Database): Promise<Bucket> {
    const prefix: Tuple = name === 'default' ? ['doclayer'] : ['doclayer-bucket', name];
    return new Bucket(name, await open({ database, prefix, autoCreate: false }));
  }

  /** The default collection. */
  get defaultCollection(): Collection {
    return this.docs.collection();
  }

  /**
   * The collection a key names (its canonical LEB128 collection id, then the document's key), and the
   * rest of the key. A manifest cached from an earlier call is read again when the id is not in it.
   *
   * @throws CommandError InvalidArguments for an id that is not canonical LEB128 or an empty key,
   *   UnknownCollection (with the manifest uid) for an id no collection has.
   */
  async collectionOfKey(key: Buffer): Promise<{ collection: Collection; rest: Buffer }> {
    let decoded: { value: number; length: number };
    try {
      decoded = decodeLeb128(key);
    } catch {
      throw new CommandError(Status.InvalidArguments, 'the key does not start with a canonical LEB128 collection id');
    }
    const rest = key.subarray(decoded.length);
    return { collection: await this.collectionById(decoded.value), rest };
  }

  async collectionById(id: number): Promise<Collection> {
    if (id === 0) return this.defaultCollection;
    let found = this.byId.get(id);
    if (found === undefined) {
      await this.refreshManifest();
      found = this.byId.get(id);
    }
    if (found === undefined) throw unknownCollection((await this.currentManifest()).uid);
    return found;
  }

  async currentManifest(): Promise<Manifest> {
    return this.manifest ?? this.refreshManifest();
  }

  async refreshManifest(): Promise<Manifest> {
    const manifest = await this.docs.getManifest();
    const byId = new Map<number, Collection>();
    for (const scope of manifest.scopes) {
      for (const collection of scope.collections) byId.set(parseInt(collection.uid, 16), this.docs.collection(`${scope.name}.${collection.name}`));
    }
    this.manifest = manifest;
    this.byId = byId;
    return manifest;
  }

  async close(): Promise<void> {
    await this.docs.close();
  }
}

/** Couchbase's Unknown Collection error, with the manifest uid in the body. */
export function unknownCollection(manifestUid: string): CommandError {
  return new CommandError(Status.UnknownCollection, 'unknown collection', Buffer.from(JSON.stringify({ manifest_uid: manifestUid })));
}

export function unknownScope(manifestUid: string): CommandError {
  return new CommandError(Status.UnknownScope, 'unknown scope', Buffer.from(JSON.stringify({ manifest_uid: manifestUid })));
}
