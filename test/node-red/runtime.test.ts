/**
 * End to end with the real Node-RED runtime (node-red from npm), started embedded in child processes
 * with the doclayer store as `contextStorage.default` on an LMDB folder (see
 * support/runtime-worker.ts): a Function node using the atomic API through functionGlobalContext, the
 * doclayer atomic node loaded through the package's `node-red` field, and two processes sharing one
 * store. No assertion depends on timing, only on counts; timeouts are generous for a loaded 2-core
 * machine.
 */
import { mkdtempSync, mkdirSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import type { Worker } from '../kv/lmdb/child-processes';
import { preparePackage, resultsOf, startRuntime } from './support/node-red-processes';
import type { PhaseResult, WorkerOptions } from './support/runtime-worker';

jest.setTimeout(120_000);

const MESSAGES = 1000;

let root: string;
let packageDir: string;
let worker: string;
let runs = 0;
const running: Worker[] = [];

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'doclayer-node-red-e2e-'));
  ({ packageDir, worker } = preparePackage(root));
});

afterEach(() => {
  for (const process of running.splice(0)) process.kill();
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** A new LMDB folder for the processes of one test to share. */
function newStore(): string {
  return join(root, `store-${runs}`);
}

function start(storePath: string, phases: WorkerOptions['phases'], waitForGo: boolean): Worker {
  const userDir = join(root, `user-${runs++}`);
  mkdirSync(userDir);
  const process = startRuntime(worker, { packageDir, userDir, storePath, waitForGo, phases });
  running.push(process);
  return process;
}

/** Starts `phases` in each of two processes on one store at the same moment; their results. */
async function twoProcesses(phases: [WorkerOptions['phases'], WorkerOptions['phases']]): Promise<[PhaseResult, PhaseResult]> {
  const storePath = newStore();
  const processes = phases.map((p) => start(storePath, p, true));
  await Promise.all(processes.map((p) => p.waitFor((lines) => lines.includes('ready'), 60_000, 'Node-RED to start')));
  for (const p of processes) p.child.stdin!.write('go\n');
  await Promise.all(processes.map((p) => p.succeeded(100_000)));
  return [resultsOf(processes[0])[0], resultsOf(processes[1])[0]];
}

/** The values handed out, sorted. */
function sorted(values: unknown[]): number[] {
  return (values as number[]).slice().sort((a, b) => a - b);
}

const oneTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('Node-RED runtime with the doclayer context store', () => {
  it('counts each of 1,000 messages once, through a Function node and through the doclayer atomic node', async () => {
    const process = start(
      newStore(),
      [
        { node: 'fn-incr', messages: MESSAGES },
        { node: 'node-incr', messages: MESSAGES },
      ],
      false,
    );
    await process.succeeded(100_000);
    const [viaFunction, viaNode] = resultsOf(process);
    expect(viaFunction).toMatchObject({ completed: MESSAGES, errors: [], count: MESSAGES });
    expect(sorted(viaFunction.payloads)).toEqual(oneTo(MESSAGES));
    expect(viaNode).toMatchObject({ completed: MESSAGES, errors: [], count: 2 * MESSAGES });
    expect(sorted(viaNode.payloads)).toEqual(oneTo(2 * MESSAGES).slice(MESSAGES));
  });

  it('two processes sharing one store, each incrementing 1,000 times at once, end at exactly 2,000', async () => {
    // One process through a Function node, the other through the atomic node: both reach the same key.
    const [first, second] = await twoProcesses([[{ node: 'fn-incr', messages: MESSAGES }], [{ node: 'node-incr', messages: MESSAGES }]]);
    expect(first).toMatchObject({ completed: MESSAGES, errors: [] });
    expect(second).toMatchObject({ completed: MESSAGES, errors: [] });
    // Every value from 1 to 2,000 handed out exactly once: no increment lost, none applied twice.
    expect(sorted([...first.payloads, ...second.payloads])).toEqual(oneTo(2 * MESSAGES));
    expect([first.count, second.count]).toContain(2 * MESSAGES);
    // And the processes did run at the same time: neither got one unbroken block of values.
    const contiguous = (values: number[]) => values[values.length - 1] - values[0] === values.length - 1;
    expect([contiguous(sorted(first.payloads)), contiguous(sorted(second.payloads))]).toEqual([false, false]);
  });

  it('the read-add-write users write today loses updates under the same load', async () => {
    const [first, second] = await twoProcesses([[{ node: 'fn-get-set', messages: MESSAGES }], [{ node: 'fn-get-set', messages: MESSAGES }]]);
    expect(first).toMatchObject({ completed: MESSAGES, errors: [] });
    expect(second).toMatchObject({ completed: MESSAGES, errors: [] });
    const final = Math.max(first.count as number, second.count as number);
    expect(final).toBeGreaterThan(0);
    expect(final).toBeLessThan(2 * MESSAGES);
  });
});
