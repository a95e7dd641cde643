/**
 * One Node-RED process of the end-to-end tests: `node runtime-worker.js '<json WorkerOptions>'`.
 * It starts the real runtime embedded (no editor, no HTTP) with the doclayer context store as its
 * default store and its atomic API in functionGlobalContext, loads the doclayer atomic node from a
 * package folder laid out as the published package, deploys the flow below, says `ready`, waits for
 * `go` on stdin if asked, injects messages into the flow's nodes, and says `result <json>` once every
 * message has completed. Lines are written synchronously, so a line read describes what happened.
 *
 * The flow (one tab, `flow`):
 * - `fn-incr`: a Function node, `msg.payload = await context.global.doclayer.incr('global', 'count')`;
 * - `node-incr`: a doclayer atomic node, incr of global `count`;
 * - `fn-get-set`: a Function node that reads `count`, adds one and writes it back (the pattern users
 *   write today), with callbacks as an asynchronous store needs.
 */
import { writeFileSync, writeSync } from 'fs';
import { join } from 'path';

export interface WorkerOptions {
  /** The package folder: package.json with the node-red field, node-red/, dist/. */
  packageDir: string;
  userDir: string;
  /** The LMDB folder of the context store (shared by the processes of a test). */
  storePath: string;
  /** Wait for a `go` line on stdin after `ready`. */
  waitForGo: boolean;
  /** Messages to inject, all at once, into each of these nodes, one node after another. */
  phases: { node: 'fn-incr' | 'node-incr' | 'fn-get-set'; messages: number }[];
}

export interface PhaseResult {
  node: string;
  completed: number;
  errors: string[];
  /** msg.payload of each message once its node completed (the incremented values). */
  payloads: unknown[];
  /** The global `count` afterwards, as this process reads it. */
  count: unknown;
  ms: number;
}

interface CompleteEvent {
  msg: { payload?: unknown };
  error?: Error;
  node: { id: string };
}

interface RuntimeNode {
  receive(msg: object): void;
  context(): { global: { get(key: string, callback: (err: Error | undefined, value: unknown) => void): void } };
}

interface NodeRed {
  init(server: undefined, settings: object): void;
  start(): Promise<void>;
  stop(): Promise<void>;
  events: { once(event: string, listener: () => void): void };
  hooks: { add(name: string, hook: (event: CompleteEvent) => void): void };
  nodes: { getNode(id: string): RuntimeNode | null };
}

const FLOW = [
  { id: 'flow', type: 'tab', label: 'doclayer e2e' },
  {
    id: 'fn-incr',
    type: 'function',
    z: 'flow',
    func: "msg.payload = await context.global.doclayer.incr('global', 'count');\nreturn msg;",
    outputs: 1,
    wires: [[]],
  },
  {
    id: 'node-incr',
    type: 'doclayer-atomic',
    z: 'flow',
    store: '',
    scope: 'global',
    key: 'count',
    keyType: 'str',
    operation: 'incr',
    amount: '1',
    amountType: 'num',
    wires: [[]],
  },
  {
    id: 'fn-get-set',
    type: 'function',
    z: 'flow',
    func: [
      "global.get('count', (err, count) => {",
      '  if (err) return node.done(err);',
      "  global.set('count', (count || 0) + 1, (err) => (err ? node.done(err) : node.done()));",
      '});',
    ].join('\n'),
    outputs: 1,
    wires: [[]],
  },
];

function say(line: string): void {
  writeSync(1, `${line}\n`);
}

function lineFromStdin(expected: string): Promise<void> {
  return new Promise((resolve) => {
    let buffered = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk: string) => {
      buffered += chunk;
      if (buffered.split('\n').includes(expected)) {
        process.stdin.pause();
        resolve();
      }
    });
  });
}

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2]) as WorkerOptions;
  const RED = require('node-red') as NodeRed;
  const doclayer = require(join(options.packageDir, 'dist', 'node-red')) as { atomic: object };
  writeFileSync(join(options.userDir, 'flows.json'), JSON.stringify(FLOW));
  RED.init(undefined, {
    userDir: options.userDir,
    flowFile: 'flows.json',
    nodesDir: options.packageDir,
    credentialSecret: false,
    disableEditor: true,
    httpAdminRoot: false,
    httpNodeRoot: false,
    logging: { console: { level: 'fatal' } },
    contextStorage: { default: { module: doclayer, config: { path: options.storePath } } },
    functionGlobalContext: { doclayer: doclayer.atomic },
  });

  const completions = new Map<string, (event: CompleteEvent) => void>();
  RED.hooks.add('onComplete', (event) => completions.get(event.node.id)?.(event));
  const flowsStarted = new Promise<void>((resolve) => RED.events.once('flows:started', resolve));
  await RED.start();
  await flowsStarted;
  for (const { node } of options.phases) {
    if (RED.nodes.getNode(node) === null) throw new Error(`node ${node} did not start (is doclayer-atomic registered?)`);
  }
  say('ready');
  if (options.waitForGo) await lineFromStdin('go');

  for (const phase of options.phases) {
    const node = RED.nodes.getNode(phase.node)!;
    const result: PhaseResult = { node: phase.node, completed: 0, errors: [], payloads: [], count: undefined, ms: 0 };
    const started = Date.now();
    await new Promise<void>((resolve) => {
      completions.set(phase.node, (event) => {
        result.completed++;
        if (event.error) result.errors.push(String(event.error));
        else result.payloads.push(event.msg.payload);
        if (result.completed === phase.messages) resolve();
      });
      for (let i = 0; i < phase.messages; i++) node.receive({ payload: i });
    });
    result.ms = Date.now() - started;
    result.count = await new Promise((resolve, reject) => node.context().global.get('count', (err, value) => (err ? reject(err) : resolve(value))));
    say(`result ${JSON.stringify(result)}`);
  }
  await RED.stop();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
