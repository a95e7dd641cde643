/**
 * Writes the demo's sample data set as newline-delimited JSON: orders of an online shop, nested
 * documents generated from a seed, the same bytes on every machine (see `src/cli/sample-data.ts`).
 *
 *   npm run sample -- --out orders.ndjson [count] [seed]     (or: npm run -s sample > orders.ndjson)
 *   npx doclayer --collection shop.orders import orders.ndjson --id-field id
 *
 * Without `--out` the documents go to stdout; through `npm run`, pass `-s` (`--silent`) so that npm's
 * own banner (`> doclayer@0.1.0 sample`) stays out of what is redirected to the file.
 *
 * `doclayer demo` generates the same documents itself: the data set is not stored in the repository.
 */
import { createWriteStream, type WriteStream } from 'fs';
import { SAMPLE_SEED, SAMPLE_SIZE, sampleOrders } from '../src/cli/sample-data';

function fail(message: string): never {
  process.stderr.write(`generate-sample: ${message}\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
const outAt = args.indexOf('--out');
let outFile: string | undefined;
if (outAt !== -1) {
  outFile = args[outAt + 1];
  if (outFile === undefined) fail('--out needs a file name');
  args.splice(outAt, 2);
}

function argument(index: number, fallback: number, name: string): number {
  const text = args[index];
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0) fail(`${name} is a non-negative integer, got ${JSON.stringify(text)}`);
  return n;
}

const count = argument(0, SAMPLE_SIZE, 'count');
const seed = argument(1, SAMPLE_SEED, 'seed');
const out: NodeJS.WritableStream | WriteStream = outFile === undefined ? process.stdout : createWriteStream(outFile);
let lines: string[] = [];
for (const order of sampleOrders(count, seed)) {
  lines.push(JSON.stringify(order));
  if (lines.length === 1000) {
    out.write(`${lines.join('\n')}\n`);
    lines = [];
  }
}
if (lines.length > 0) out.write(`${lines.join('\n')}\n`);
if (out !== process.stdout) out.end();
