/**
 * One process of the consumer crash test, run as `node consumer-worker.js <mode> <store folder>`: it
 * runs the consumer `copier` of collection `app.items`, whose handler records each change in
 * `app.out` (a document per change token, by insert: a change handled twice fails) and counts it, in
 * the consumer's transaction, pausing a little so that a kill lands inside batches.
 *
 * Modes: `follow` says `running` and processes until killed; `drain` processes what is there, then
 * says `drained <count>` and exits.
 */
import { writeSync } from 'fs';
import { open } from '../../src';

function say(line: string): void {
  writeSync(1, `${line}\n`);
}

async function main(): Promise<void> {
  const [mode, path] = process.argv.slice(2);
  const docs = await open({ path });
  const items = docs.collection('app.items');
  const out = docs.collection('app.out');
  const follow = mode === 'follow';
  if (follow) say('running');
  const count = await items.consumer('copier').process(
    async (changes, { tr }) => {
      for (const change of changes) {
        await out.insert({ id: change.kind === 'drop' ? null : String(change.id) }, { id: change.token, tr });
        await out.counter('total').add(1, { tr });
      }
      await new Promise((resolve) => setTimeout(resolve, 3));
    },
    { batchSize: 3, follow },
  );
  say(`drained ${count}`);
  await docs.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
