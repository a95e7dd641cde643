/**
 * The binary-protocol endpoint: doclayer served to memcached and Couchbase clients (docs/server.md).
 */
export { createKvServer, SERVER_VERSION, type KvServer, type KvServerOptions } from './kv-server';
export type { KvUser } from './users';
export type { Bucket } from './bucket';
