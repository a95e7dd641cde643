/**
 * One worker process of `npm run soak` (scripts/soak.ts), run as
 * `node soak-worker.js <store folder> <slot> <incarnation> <seed> <durability>`.
 *
 * It opens the store and runs random operations until SIGTERM (then it closes the store and exits 0)
 * or until the soak SIGKILLs it. Each operation is one transaction that also records what it did in
 * the store, so the soak can check every invariant afterwards whatever the kills interrupted:
 *
 * - counter: `hits.add(1)` (blind), `exact.incr(1)` (read) and this slot's ledger counter `+1`:
 *   hits = exact = the sum of the ledgers.
 * - push: a new job id onto the queue `jobs`, with the id added to the set `pushed` (a retried push
 *   whose id is already there pushes nothing: exactly once).
 * - pop: one job off `jobs`, with its id added to the set `popped`; an id that was already there is
 *   a second delivery, counted in `duplicates`.
 * - mutateIn: on the document `profile`, `n += 1`, its token appended to `log` and stored as `last`:
 *   n = log's length and last = log's last entry (no partial mutateIn).
 * - set: a new member added to the set `members`, or one of this worker's deleted, with the change in
 *   `members-ledger`: the set's size = its members = the ledger.
 * - read-mostly document: the document `config` read whole (answered by the LMDB engine's range cache
 *   while no process wrote it since) with the counter `config-writes` in one transaction, which one
 *   time in ten writes both: its `version` must equal the counter; each read that disagrees is
 *   counted in `config-stale` (a cache answering with what another process's commit replaced).
 *
 * Output, one line each: `ready` once it handles SIGTERM, `error <message>` for an operation that
 * failed (which the soak reports), and `closed` after a clean close. After each operation resolves,
 * before the next begins, what it committed, for the soak to find in the store (a commit that
 * resolved must be there, whatever was killed since): `counted` (a counter operation), `pushed <id>`,
 * `logged <token>` (a mutateIn).
 */
import { writeSync } from 'fs';
import type { LmdbDurability } from '../src/kv/lmdb';
import { seededRandom } from '../src/kv/engine-parts/seeded-random';
import { open } from '../src/open';
import { MutateInSpec } from '../src/document/subdoc/specs';

function say(line: string): void {
  writeSync(1, `${line}\n`);
}

async function main(): Promise<void> {
  const [path, slot, incarnation, seed, durability] = process.argv.slice(2);
  const random = seededRandom(Number(seed));
  const db = await open({ path, durability: durability as LmdbDurability });
  const c = db.collection();
  const jobs = c.queue<string>('jobs');
  const pushed = c.set<string>('pushed');
  const popped = c.set<string>('popped');
  const members = c.set<string>('members');
  const mine: string[] = [];
  let stopping = false;
  process.on('SIGTERM', () => {
    stopping = true;
  });
  say('ready');

  let seq = 0;
  const token = () => `${slot}.${incarnation}.${seq++}`;
  const operations: Array<() => Promise<unknown>> = [
    async () => {
      await db.transact(async (tr) => {
        await c.counter('hits').add(1, { tr });
        await c.counter('exact').incr(1, { tr });
        await c.counter(`ledger-${slot}`).add(1, { tr });
      });
      say('counted');
    },
    async () => {
      const id = token();
      await db.transact(async (tr) => {
        if (await pushed.add(id, { tr })) await jobs.push(id, { tr });
      });
      say(`pushed ${id}`);
    },
    () =>
      db.transact(async (tr) => {
        const id = await jobs.pop({ tr });
        if (id !== undefined && !(await popped.add(id, { tr }))) await c.counter('duplicates').add(1, { tr });
      }),
    async () => {
      const value = token();
      await c.mutateIn(
        'profile',
        [
          MutateInSpec.increment('n', 1, { createPath: true }),
          MutateInSpec.arrayAppend('log', value, { createPath: true }),
          MutateInSpec.upsert('last', value, { createPath: true }),
        ],
        { storeSemantics: 'upsert' },
      );
      say(`logged ${value}`);
    },
    () => {
      const removing = mine.length > 0 && random() < 0.3;
      const member = removing ? mine.splice(Math.floor(random() * mine.length), 1)[0] : token();
      return db
        .transact(async (tr) => {
          const changed = removing ? await members.delete(member, { tr }) : await members.add(member, { tr });
          if (changed) await c.counter('members-ledger').add(removing ? -1 : 1, { tr });
        })
        .then(() => {
          if (!removing) mine.push(member);
        });
    },
    () =>
      db.transact(async (tr) => {
        const config = (await c.exists('config', { tr })) ? ((await c.get('config', { tr })).content as { version: number }) : { version: 0 };
        const writes = await c.counter('config-writes').get({ tr });
        if (config.version !== writes) await c.counter('config-stale').add(1, { tr });
        if (random() < 0.1) {
          await c.upsert('config', { version: writes + 1, by: token() }, { tr });
          await c.counter('config-writes').add(1, { tr });
        }
      }),
  ];

  while (!stopping) {
    const operation = operations[Math.floor(random() * operations.length)];
    try {
      await operation();
    } catch (err) {
      say(`error ${err instanceof Error ? err.message : String(err)}`.replace(/\n/g, ' '));
    }
  }
  await db.close();
  say('closed');
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
