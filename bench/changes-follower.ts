/**
 * The follower process of bench/changes.ts: follows `app.feed` of the lmdb store at argv[2] and prints
 * `<id> <time>` for each change as it is delivered, the time in ms since the epoch with microseconds
 * (performance.timeOrigin + performance.now(), comparable across processes on one machine).
 */
import { writeSync } from 'fs';
import { performance } from 'perf_hooks';
import { open } from '../src';

async function main(): Promise<void> {
  const docs = await open({ path: process.argv[2] });
  const abort = new AbortController();
  process.on('SIGTERM', () => abort.abort());
  writeSync(1, 'ready\n');
  for await (const change of docs.collection('app.feed').changes({ follow: true, signal: abort.signal, since: process.argv[3] })) {
    if (change.kind !== 'drop') writeSync(1, `${String(change.id)} ${(performance.timeOrigin + performance.now()).toFixed(3)}\n`);
  }
  await docs.close();
}

void main();
