/**
 * The shared KV conformance suite against a real FoundationDB cluster, through the `foundationdb`
 * package. It runs only when FDB_CLUSTER_FILE names a cluster file, and that cluster must be dedicated
 * to tests: every test starts by clearing the whole user keyspace, from the empty key to the byte 0xff.
 * FDB_API_VERSION selects the API version (default: openFoundationDB's, 710).
 */
import { openFoundationDB } from '../../src/kv/fdb';
import { kvConformanceSuite } from './conformance';

const NO_CLUSTER = 'FDB_CLUSTER_FILE is not set: no FoundationDB cluster to run against';
const KEYSPACE_END = Buffer.from([0xff]);

const clusterFile = process.env.FDB_CLUSTER_FILE;

if (clusterFile) {
  const apiVersion = process.env.FDB_API_VERSION ? Number(process.env.FDB_API_VERSION) : undefined;
  // A real cluster injects no faults and has no clock to turn: the suite skips those tests, saying why.
  kvConformanceSuite('fdb', {
    async open() {
      const db = await openFoundationDB({ clusterFile, apiVersion });
      await db.clearRange('', KEYSPACE_END);
      return db;
    },
  });
} else {
  describe.skip(`KV conformance: fdb (skipped: ${NO_CLUSTER})`, () => {
    it('runs the shared KV conformance suite against a FoundationDB cluster', () => undefined);
  });
}
