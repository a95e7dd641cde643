/**
 * One process of the multi-process scheduler test, run as `node repeat-worker.js <store folder> <ms>`:
 * runs a scheduler of queue `q` in the default collection, says `running`, stops after `ms`, says
 * `stopped` and exits.
 */
import { writeSync } from 'fs';
import { open } from '../../src';

function say(line: string): void {
  writeSync(1, `${line}\n`);
}

async function main(): Promise<void> {
  const [path, ms] = process.argv.slice(2);
  const docs = await open({ path });
  const scheduler = docs.collection().queue('q').scheduler({ lookaheadMs: 500 });
  say('running');
  await new Promise((resolve) => setTimeout(resolve, Number(ms)));
  await scheduler.stop();
  say('stopped');
  await docs.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
