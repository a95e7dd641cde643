import type { OptionSpec } from './args';

/** Every option of the CLI. The global ones are accepted by every command; the others by the commands that list them. */

export const GLOBAL_OPTIONS: readonly OptionSpec[] = [
  { name: 'db', value: 'required', valueName: 'folder', description: 'the durable embedded engine (LMDB) in this folder (default ./doclayer-data)' },
  { name: 'memory', value: 'none', description: 'an in-memory database, gone when the command ends' },
  { name: 'fdb', value: 'optional', valueName: 'clusterFile', description: 'a FoundationDB cluster (needs the client library libfdb_c)' },
  {
    name: 'durability',
    value: 'required',
    valueName: 'sync|fast',
    description: "LMDB: when a write is done: on disk ('sync', default) or in the OS's cache",
  },
  {
    name: 'read-cache-bytes',
    value: 'required',
    valueName: 'n',
    description: 'LMDB: bytes of recently read ranges kept in memory (default 16 MiB; 0: none)',
  },
  { name: 'collection', value: 'required', valueName: 'scope.collection', description: 'the collection to work on (default _default._default)' },
  { name: 'json', value: 'none', description: 'machine-readable output: one JSON value per line' },
  { name: 'help', value: 'none', description: 'usage (also: doclayer help <command>)' },
  { name: 'version', value: 'none', description: "doclayer's version" },
];

export const COMMAND_OPTIONS: readonly OptionSpec[] = [
  { name: 'id-field', value: 'required', valueName: 'field', description: 'the top-level field holding each id' },
  { name: 'format', value: 'required', valueName: 'json|ndjson', description: "the input's format (default: by its extension)" },
  { name: 'documents', value: 'none', description: 'the documents alone, without ids, kinds and expiry' },
  { name: 'skip-bad', value: 'none', description: 'skip bad records instead of stopping' },
  { name: 'from-line', value: 'required', valueName: 'n', description: 'skip the records before line n' },
  { name: 'limit', value: 'required', valueName: 'n', description: 'at most n documents' },
  { name: 'state', value: 'required', valueName: 'state', description: 'the state of the jobs to list: waiting, delayed, active or dead' },
  { name: 'sort', value: 'required', valueName: 'spec', description: 'result order: path[:desc],... or JSON' },
  { name: 'after', value: 'required', valueName: 'token', description: "continue after an earlier page's token" },
  { name: 'explain', value: 'none', description: 'print the query plan and what it read' },
  { name: 'scan', value: 'none', description: 'scan the collection when no index serves the filter' },
  { name: 'cas', value: 'required', valueName: 'cas', description: 'only if the document is at this version' },
  { name: 'reset', value: 'none', description: 'load the sample again' },
  { name: 'unique', value: 'none', description: 'a unique index' },
  { name: 'include', value: 'required', valueName: 'paths', description: 'comma-separated paths stored in each index entry' },
  { name: 'where', value: 'required', valueName: 'filter', description: "a partial index's filter, as JSON" },
  { name: 'workers', value: 'required', valueName: 'n', description: 'id ranges an index build runs at once' },
  { name: 'since', value: 'required', valueName: 'token', description: 'start after this change feed token' },
  { name: 'follow', value: 'none', description: 'keep following the change feed' },
  { name: 'docs', value: 'none', description: 'include the documents' },
  { name: 'enable', value: 'none', description: "switch the collection's change feed on" },
  { name: 'port', value: 'required', valueName: 'port', description: 'the TCP port to serve on (default 11210; 0: any free one)' },
  { name: 'host', value: 'required', valueName: 'address', description: 'the address to bind (default 127.0.0.1)' },
  { name: 'path', value: 'required', valueName: 'folder', description: 'the same as --db' },
  { name: 'user', value: 'required', valueName: 'name:password', description: 'a user clients authenticate as (repeatable)', repeatable: true },
  { name: 'bucket', value: 'required', valueName: 'name', description: 'a bucket to serve (repeatable; default: default)', repeatable: true },
];

export const OPTION_SPECS: ReadonlyMap<string, OptionSpec> = new Map([...GLOBAL_OPTIONS, ...COMMAND_OPTIONS].map((spec) => [spec.name, spec]));

export const GLOBAL_OPTION_NAMES: ReadonlySet<string> = new Set(GLOBAL_OPTIONS.map((spec) => spec.name));
