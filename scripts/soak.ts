/**
 * Soak test of the lmdb engine: worker processes on one store, SIGKILLed at random and respawned, then
 * a check of every invariant their operations keep (see scripts/soak-worker.ts).
 *
 *   npm run soak -- --seconds 60 --workers 4 --seed 1 [--kill-ms 500] [--durability fast|sync]
 *                   [--path <folder>] [--keep]
 *
 * - `--seconds` of work (default 30), then every worker gets SIGTERM and must close within 20 s.
 * - `--workers` processes (default 4); every `--kill-ms` on average (default 500) one of them, or
 *   now and then two at once, is SIGKILLed and respawned.
 * - `--seed` (default: the time) seeds the kills and the workers' operations.
 * - The store is a new temporary folder, removed after a clean run, unless `--path` names one;
 *   `--keep` keeps it.
 *
 * The summary counts the operations, kills and respawns, and lists each finding: a worker that died
 * without being killed (a crash), a worker that did not close within 20 s of SIGTERM, an operation that
 * failed, an invariant that does not hold, a problem `checkLmdbStore` reports. Exit code 0 when there
 * is none, 1 otherwise.
 */
import { spawn, type ChildProcess } from 'child_process';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join, relative, resolve } from 'path';
import { parseArgs } from 'util';
import { open } from '../src/open';
import { seededRandom } from '../src/kv/engine-parts/seeded-random';
import { checkLmdbStore } from '../src/kv/lmdb';
import { transpileTree } from '../test/support/transpile';

const REPO = resolve(__dirname, '..');
const CLOSE_MS = 20_000;

interface Settings {
  seconds: number;
  workers: number;
  seed: number;
  killMs: number;
  durability: 'sync' | 'fast';
  path: string | undefined;
  keep: boolean;
}

function settings(): Settings {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '30' },
      workers: { type: 'string', default: '4' },
      seed: { type: 'string', default: String(Date.now() % 1_000_000) },
      'kill-ms': { type: 'string', default: '500' },
      durability: { type: 'string', default: 'fast' },
      path: { type: 'string' },
      keep: { type: 'boolean', default: false },
    },
  });
  const number = (name: 'seconds' | 'workers' | 'seed' | 'kill-ms', min: number): number => {
    const n = Number(values[name]);
    if (!Number.isSafeInteger(n) || n < min) usage(`--${name} is an integer of at least ${min}, got ${String(values[name])}`);
    return n;
  };
  if (values.durability !== 'sync' && values.durability !== 'fast') usage(`--durability is sync or fast, got ${values.durability}`);
  return {
    seconds: number('seconds', 1),
    workers: number('workers', 1),
    seed: number('seed', 0),
    killMs: number('kill-ms', 10),
    durability: values.durability,
    path: values.path,
    keep: values.keep ?? false,
  };
}

function usage(message: string): never {
  process.stderr.write(`soak: ${message}\n`);
  process.exit(2);
}

/** One worker slot: the process in it now, and what its processes did. */
interface Slot {
  readonly index: number;
  incarnation: number;
  child: ChildProcess | undefined;
  killedByUs: boolean;
  /** Whether the process in the slot has opened the store and handles SIGTERM. */
  ready: boolean;
  startedAt: number;
  stderr: string;
}

/** What the workers said their resolved operations committed (scripts/soak-worker.ts), to find in the store. */
interface Resolved {
  /** Counter operations, by slot (its ledger counter counts them, and those a kill interrupted after they committed). */
  readonly counted: number[];
  readonly pushed: Set<string>;
  readonly logged: Set<string>;
}

class Soak {
  readonly findings: string[] = [];
  readonly resolved: Resolved;
  private readonly slots: Slot[];
  private readonly random: () => number;
  private kills = 0;
  /** When each SIGKILL was sent, to tell what happened just before a crash. */
  private readonly killedAt: number[] = [];
  private spawns = 0;
  private stopping = false;

  constructor(
    private readonly options: Settings,
    private readonly store: string,
    private readonly worker: string,
    private readonly scratch: string,
  ) {
    this.random = seededRandom(options.seed);
    this.resolved = { counted: new Array<number>(options.workers).fill(0), pushed: new Set(), logged: new Set() };
    this.slots = Array.from({ length: options.workers }, (_, index) => ({
      index,
      incarnation: 0,
      child: undefined,
      killedByUs: false,
      ready: false,
      startedAt: 0,
      stderr: '',
    }));
  }

  async run(): Promise<void> {
    for (const slot of this.slots) this.spawn(slot);
    const end = Date.now() + this.options.seconds * 1000;
    while (Date.now() < end) {
      await pause(this.options.killMs * (0.5 + this.random()));
      if (Date.now() >= end) break;
      const victims = this.random() < 0.2 ? 2 : 1;
      for (const slot of this.pick(victims)) this.kill(slot);
    }
    await this.stop();
  }

  summary(): string {
    return `${this.spawns} worker processes started, ${this.kills} SIGKILLed`;
  }

  private pick(count: number): Slot[] {
    const running = this.slots.filter((slot) => slot.child);
    const picked: Slot[] = [];
    while (picked.length < count && running.length > 0) picked.push(...running.splice(Math.floor(this.random() * running.length), 1));
    return picked;
  }

  private spawn(slot: Slot): void {
    slot.incarnation++;
    slot.killedByUs = false;
    slot.ready = false;
    slot.startedAt = Date.now();
    slot.stderr = '';
    this.spawns++;
    const seed = Math.floor(this.random() * 2 ** 31);
    const child = spawn(
      process.execPath,
      [this.worker, this.store, String(slot.index), String(slot.incarnation), String(seed), this.options.durability],
      {
        env: { ...process.env, NODE_PATH: join(REPO, 'node_modules') },
        // Where a crash leaves its core file, if core files are on (ulimit -c).
        cwd: this.scratch,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    slot.child = child;
    const name = `worker ${slot.index}.${slot.incarnation} (pid ${child.pid})`;
    let partial = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        if (line === 'ready') slot.ready = true;
        else if (line === 'counted') this.resolved.counted[slot.index]++;
        else if (line.startsWith('pushed ')) this.resolved.pushed.add(line.slice(7));
        else if (line.startsWith('logged ')) this.resolved.logged.add(line.slice(7));
        else if (line.startsWith('error ')) this.findings.push(`${name}: operation failed: ${line.slice(6)}`);
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      slot.stderr = (slot.stderr + chunk).slice(-2000);
    });
    child.on('exit', (code, signal) => {
      if (slot.child === child) slot.child = undefined;
      // SIGTERM ends a worker that has not opened the store yet: it has nothing to close.
      const expected = slot.killedByUs || (this.stopping && (code === 0 || (!slot.ready && signal === 'SIGTERM')));
      if (!expected) {
        const now = Date.now();
        const recentKills = this.killedAt.filter((at) => now - at < 1000).length;
        this.findings.push(
          `${name} died by itself with ${signal ?? `exit code ${code}`}, ${now - slot.startedAt} ms after it started ` +
            `(${slot.ready ? 'after' : 'before'} opening the store; ${recentKills} SIGKILLs in the second before)` +
            `${slot.stderr ? `: ${slot.stderr.trim()}` : ''}`,
        );
      }
      if (!this.stopping) this.spawn(slot);
    });
  }

  private kill(slot: Slot): void {
    if (!slot.child || slot.killedByUs) return;
    slot.killedByUs = true;
    this.kills++;
    this.killedAt.push(Date.now());
    slot.child.kill('SIGKILL');
  }

  /** SIGTERM to every worker; each must exit within {@link CLOSE_MS}, or it is a finding (and SIGKILLed). */
  private async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(
      this.slots.map(async (slot) => {
        const child = slot.child;
        if (!child) return;
        const exited = new Promise<void>((done) => child.once('exit', () => done()));
        child.kill('SIGTERM');
        const timer = setTimeout(() => {
          this.findings.push(`worker ${slot.index}.${slot.incarnation} (pid ${child.pid}) did not close within ${CLOSE_MS} ms of SIGTERM`);
          slot.killedByUs = true;
          child.kill('SIGKILL');
        }, CLOSE_MS);
        await exited;
        clearTimeout(timer);
      }),
    );
  }
}

/** Checks every invariant of the workers' operations on the store; returns what does not hold, and the counts. */
async function checkInvariants(path: string, workers: number, resolved: Resolved): Promise<{ problems: string[]; counts: Record<string, number> }> {
  const problems: string[] = [];
  const db = await open({ path });
  try {
    const c = db.collection();
    const hits = await c.counter('hits').get();
    const exact = await c.counter('exact').get();
    let ledgers = 0;
    for (let slot = 0; slot < workers; slot++) ledgers += await c.counter(`ledger-${slot}`).get();
    if (hits !== ledgers || exact !== ledgers) problems.push(`counters: hits ${hits}, exact ${exact}, ledgers ${ledgers}`);
    // Every operation a worker saw resolve is in the store: a lost commit keeps the invariants above
    // (each one writes its ledger with what it counts), so it shows only here.
    for (let slot = 0; slot < workers; slot++) {
      const ledger = await c.counter(`ledger-${slot}`).get();
      if (ledger < resolved.counted[slot])
        problems.push(`lost commits: slot ${slot}'s ledger is ${ledger}, its workers saw ${resolved.counted[slot]} counter operations resolve`);
    }

    const pushed = new Set(await c.set<string>('pushed').values());
    const popped = new Set(await c.set<string>('popped').values());
    const queued = (await c.exists('jobs')) ? ((await c.get('jobs')).content as string[]) : [];
    const duplicates = await c.counter('duplicates').get();
    if (duplicates !== 0) problems.push(`queue: ${duplicates} jobs delivered twice`);
    const queuedSet = new Set(queued);
    if (queuedSet.size !== queued.length) problems.push(`queue: ${queued.length - queuedSet.size} jobs queued twice`);
    for (const id of queued) if (popped.has(id)) problems.push(`queue: job ${id} was popped and is still queued`);
    for (const id of [...popped, ...queued]) if (!pushed.has(id)) problems.push(`queue: job ${id} was never pushed`);
    const lostPushes = [...resolved.pushed].filter((id) => !pushed.has(id));
    if (lostPushes.length > 0)
      problems.push(`lost commits: ${lostPushes.length} pushes resolved but are not in the store, e.g. ${lostPushes.slice(0, 3).join(', ')}`);
    const lost = [...pushed].filter((id) => !popped.has(id) && !queuedSet.has(id));
    if (lost.length > 0) problems.push(`queue: ${lost.length} pushed jobs are neither popped nor queued, e.g. ${lost.slice(0, 3).join(', ')}`);
    if ((await c.queue('jobs').size()) !== queued.length) problems.push(`queue: size ${await c.queue('jobs').size()}, ${queued.length} jobs`);

    let mutations = 0;
    if (await c.exists('profile')) {
      const profile = (await c.get('profile')).content as { n: number; log: string[]; last: string };
      mutations = profile.n;
      if (profile.n !== profile.log.length || profile.last !== profile.log[profile.log.length - 1]) {
        problems.push(`mutateIn: n ${profile.n}, log of ${profile.log.length}, last ${profile.last} vs ${profile.log[profile.log.length - 1]}`);
      }
    }
    const logged = new Set((await c.exists('profile')) ? ((await c.get('profile')).content as { log: string[] }).log : []);
    const lostLogs = [...resolved.logged].filter((value) => !logged.has(value));
    if (lostLogs.length > 0)
      problems.push(`lost commits: ${lostLogs.length} mutateIns resolved but are not in the store, e.g. ${lostLogs.slice(0, 3).join(', ')}`);

    const members = c.set<string>('members');
    const size = await members.size();
    const values = await members.values();
    const ledger = await c.counter('members-ledger').get();
    if (size !== values.length || size !== ledger) problems.push(`set: size ${size}, ${values.length} members, ledger ${ledger}`);

    const stale = await c.counter('config-stale').get();
    const configWrites = await c.counter('config-writes').get();
    const config = (await c.exists('config')) ? ((await c.get('config')).content as { version: number }).version : 0;
    if (stale !== 0) problems.push(`read cache: ${stale} reads of config disagreed with the counter written with it`);
    if (config !== configWrites) problems.push(`read cache: config is at version ${config}, its counter at ${configWrites}`);

    return {
      problems,
      counts: {
        counterOps: ledgers,
        pushes: pushed.size,
        pops: popped.size,
        queued: queued.length,
        mutateIns: mutations,
        setMembers: values.length,
        configWrites,
      },
    };
  } finally {
    await db.close();
  }
}

async function main(): Promise<void> {
  const options = settings();
  const scratch = mkdtempSync(join(tmpdir(), 'doclayer-soak-'));
  const store = options.path ?? join(scratch, 'store');
  const workerSource = join(REPO, 'scripts', 'soak-worker.ts');
  transpileTree([workerSource], REPO, join(scratch, 'compiled'));
  const worker = join(scratch, 'compiled', relative(REPO, workerSource)).replace(/\.ts$/, '.js');

  process.stdout.write(
    `soak: ${options.workers} workers on ${store} for ${options.seconds} s, a SIGKILL every ~${options.killMs} ms, ` +
      `durability ${options.durability}, seed ${options.seed}\n`,
  );
  const started = Date.now();
  const soak = new Soak(options, store, worker, scratch);
  await soak.run();
  const { problems, counts } = await checkInvariants(store, options.workers, soak.resolved);
  const report = await checkLmdbStore(store);
  const findings = [...soak.findings, ...problems, ...report.problems.map((problem) => `checkLmdbStore: ${problem}`)];

  process.stdout.write(`soak: ${((Date.now() - started) / 1000).toFixed(1)} s, ${soak.summary()}\n`);
  process.stdout.write(
    `soak: in the store: ${Object.entries(counts)
      .map(([name, n]) => `${name} ${n}`)
      .join(', ')}; ${report.keys} keys, ${report.fileBytes} bytes\n`,
  );
  for (const finding of findings) process.stdout.write(`soak: FINDING ${finding}\n`);
  process.stdout.write(`soak: ${findings.length === 0 ? 'clean' : `${findings.length} findings`}\n`);
  if (findings.length === 0 && !options.keep) rmSync(scratch, { recursive: true, force: true });
  else if (!options.path) process.stdout.write(`soak: kept ${scratch}\n`);
  process.exitCode = findings.length === 0 ? 0 : 1;
}

function pause(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

main().catch((err: unknown) => {
  process.stderr.write(`soak: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
