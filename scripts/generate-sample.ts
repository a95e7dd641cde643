/**
 * Writes the demo's sample data set as newline-delimited JSON: orders of an online shop, nested
 * documents generated from a seed, the same bytes on every machine (see `src/cli/sample-data.ts`).
 *
 *   node -r ts-node/register/transpile-only scripts/generate-sample.ts [count] [seed] > orders.ndjson
 *   npx doclayer --collection shop.orders import orders.ndjson --id-field id
 *
 * `doclayer demo` generates the same documents itself: the data set is not stored in the repository.
 */
import { SAMPLE_SEED, SAMPLE_SIZE, sampleOrders } from '../src/cli/sample-data';

function argument(index: number, fallback: number, name: string): number {
  const text = process.argv[index];
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0) {
    process.stderr.write(`generate-sample: ${name} is a non-negative integer, got ${JSON.stringify(text)}\n`);
    process.exit(2);
  }
  return n;
}

const count = argument(2, SAMPLE_SIZE, 'count');
const seed = argument(3, SAMPLE_SEED, 'seed');
let lines: string[] = [];
for (const order of sampleOrders(count, seed)) {
  lines.push(JSON.stringify(order));
  if (lines.length === 1000) {
    process.stdout.write(`${lines.join('\n')}\n`);
    lines = [];
  }
}
if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
