import { Buffer } from 'node:buffer';

/**
 * The one-node cluster configuration (GET_CLUSTER_CONFIG) a Couchbase SDK bootstraps from: this
 * server is the only node, running only the key-value service, and owns every vBucket (clients hash
 * keys to vBuckets and send each request to the vBucket's node: here always this one).
 */

const VBUCKETS = 1024;

/** Couchbase's bucket capabilities that this server's behaviour matches. */
const BUCKET_CAPABILITIES = ['collections', 'cbhello', 'touch', 'cccp', 'nodesExt'] as const;

export function clusterConfig(bucket: string | undefined, host: string, port: number): object {
  const node = {
    services: { kv: port },
    thisNode: true,
    hostname: host,
  };
  const common = {
    rev: 1,
    revEpoch: 1,
    nodesExt: [node],
    clusterCapabilitiesVer: [1, 0],
    clusterCapabilities: {},
  };
  if (bucket === undefined) return common;
  return {
    ...common,
    name: bucket,
    uuid: Buffer.from(bucket).toString('hex').padEnd(32, '0').slice(0, 32),
    nodeLocator: 'vbucket',
    bucketCapabilitiesVer: '',
    bucketCapabilities: BUCKET_CAPABILITIES,
    nodes: [{ hostname: `${host}:${port}`, ports: { direct: port } }],
    vBucketServerMap: {
      hashAlgorithm: 'CRC',
      numReplicas: 0,
      serverList: [`${host}:${port}`],
      vBucketMap: Array.from({ length: VBUCKETS }, () => [0]),
    },
  };
}
