import { createServer, type Server, type Socket } from 'node:net';
import { Database } from '../kv/contract/database';
import type { Engine } from '../kv/contract/types';
import { chooseEngine, ENGINE_OPTIONS, openEngine, type EngineOptions } from '../kv/open-database';
import type { DocLayer } from '../open';
import { Bucket } from './bucket';
import { serveConnection } from './connection';
import type { ServerContext, ServerStats } from './session';
import { UserStore, type KvUser } from './users';

/** Options of {@link createKvServer}: the engine (`db`, `engine`, or as `open`'s), where to listen, buckets and users. */
export interface KvServerOptions extends EngineOptions {
  /**
   * A doclayer database already open (what `open()` returns): the server serves its engine, and the
   * caller closes it after the server. Instead of `engine` and the engine options.
   */
  db?: DocLayer;
  /** A KV engine already made (e.g. `new MemoryEngine()`): the caller's to close. Instead of `db` and the engine options. */
  engine?: Engine;
  /** TCP port; default 11210 (Couchbase's). 0 picks a free one (see {@link KvServer.port}). */
  port?: number;
  /** Address to bind; default 127.0.0.1 (loopback only). */
  host?: string;
  /** Bucket names; default `['default']`. The bucket `default` is doclayer's default database. */
  buckets?: string[];
  /**
   * Users; default none, and then every client is in without authenticating and starts with the
   * `default` bucket (or the only bucket) selected, as a memcached client expects.
   */
  users?: KvUser[];
  /** Connections served at once; more are closed as they arrive. Default 1,000. */
  maxConnections?: number;
  /** Close a connection idle (nothing sent or received) this long. Default 300,000 ms. */
  idleTimeoutMs?: number;
  /** Close a connection whose packet stays incomplete this long. Default 30,000 ms. */
  frameTimeoutMs?: number;
  /** Whether FLUSH is allowed on a server without users (with users: admins only). Default true. */
  flush?: boolean;
}

export interface KvServer {
  readonly host: string;
  /** The port listened on (the one picked, for port 0). */
  readonly port: number;
  /** The buckets served, by name. */
  readonly buckets: ReadonlyMap<string, Bucket>;
  /** Counters of connections, commands and authentications (also answered to STAT). */
  readonly stats: Readonly<ServerStats>;
  /** Stops listening, closes every connection, then the buckets and the engine (if the server opened it). */
  close(): Promise<void>;
}

export const SERVER_VERSION = '1.6.0-doclayer';

/**
 * Serves doclayer over the memcached binary protocol with Couchbase's extensions (see docs/server.md):
 * each bucket is a doclayer database on the engine the options choose (as `open`'s: `database`,
 * `path`, `fdb` or `memory`), each command one transaction. Several servers may share one store (an
 * LMDB folder, a FoundationDB cluster) without coordinating.
 *
 * @throws TypeError for bad options; the engine's errors; the listen error (EADDRINUSE...).
 */
export async function createKvServer(options: KvServerOptions = {}): Promise<KvServer> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 11210;
  const names = options.buckets ?? ['default'];
  if (!Array.isArray(names) || names.length === 0 || names.some((name) => typeof name !== 'string' || !/^[A-Za-z0-9._%-]{1,100}$/.test(name))) {
    throw new TypeError('buckets is a non-empty list of names of letters, digits and . _ % -');
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new TypeError(`port is an integer in 0..65535, got ${String(port)}`);
  const users = await UserStore.create(options.users ?? []);
  const { database, owned } = await serverDatabase(options);
  const buckets = new Map<string, Bucket>();
  for (const name of new Set(names)) buckets.set(name, await Bucket.open(name, database));

  const stats: ServerStats = { currConnections: 0, totalConnections: 0, cmdGet: 0, cmdSet: 0, getHits: 0, getMisses: 0, authentications: {} };
  const sockets = new Set<Socket>();

  const context: ServerContext = {
    buckets,
    users,
    flushWithoutUsers: options.flush !== false,
    version: SERVER_VERSION,
    startedAt: Date.now(),
    stats,
    address: () => ({ host, port: listening.port }),
  };
  const limits = { idleTimeoutMs: options.idleTimeoutMs ?? 300_000, frameTimeoutMs: options.frameTimeoutMs ?? 30_000 };
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    serveConnection(context, socket, limits);
  });
  server.maxConnections = options.maxConnections ?? 1000;
  const listening = { port };
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch(async (err: unknown) => {
    for (const bucket of buckets.values()) await bucket.close();
    if (owned) await database.close();
    throw err;
  });
  const address = server.address();
  if (address !== null && typeof address === 'object') listening.port = address.port;

  let closing: Promise<void> | undefined;
  return {
    host,
    port: listening.port,
    buckets,
    stats,
    close: () =>
      (closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const socket of sockets) socket.destroy();
        await closed;
        for (const bucket of buckets.values()) await bucket.close();
        if (owned) await database.close();
      })()),
  };
}

/** The database the options name: `db`'s or `engine`'s (the caller's to close), or one `open`'s options choose. */
async function serverDatabase(options: KvServerOptions): Promise<{ database: Database; owned: boolean }> {
  const named = (['db', 'engine', ...ENGINE_OPTIONS] as const).filter((name) => options[name] !== undefined);
  if (options.db === undefined && options.engine === undefined) return openEngine(chooseEngine(options));
  if (named.length > 1) throw new TypeError(`give one of db, engine, ${ENGINE_OPTIONS.join(', ')}; got ${named.join(' and ')}`);
  if (options.db !== undefined) return { database: options.db.kv, owned: false };
  return { database: new Database(options.engine as Engine), owned: false };
}
