import type { Collection } from '../collection';
import { isDocumentError } from '../document/errors';
import { MutateInSpec } from '../document/subdoc/specs';
import type { JsonValue } from '../document/types';
import { BatchWriter } from './batch-writer';
import type { KvCounts } from '../kv/counting-engine';
import { stringifyJson } from './json-text';
import type { Output } from './output';
import { formatCount, ProgressBar } from './progress';
import { documentWrites } from './record-writes';
import { SAMPLE_SEED, SAMPLE_SIZE, sampleOrderId, sampleOrders } from './sample-data';
import type { Session } from './session';

/**
 * `doclayer demo`: a tour of the document layer on the sample data set, printing what each step cost
 * in keys read and written (counted by the engine wrapper, see `counting-engine.ts`) and time:
 *
 * 1. load the sample orders (or reuse them from an earlier run: a marker document records a finished
 *    load of this seed and size);
 * 2. sub-document reads by path, against a whole-document read;
 * 3. a multi-path mutation guarded by CAS, then the same with the stale CAS;
 * 4. a queue of orders to ship and two sets, used by concurrent workers that pop, read and add in one
 *    transaction each (exactly-once consumption).
 */

export const DEMO_ORDERS = 'demo.orders';
const DEMO_META = 'demo.meta';
const DEMO_WORK = 'demo.work';
const MARKER_ID = 'sample';
const SHOWCASE_ORDER = sampleOrderId(42);
const ORDERS_TO_SHIP = 200;
const WORKERS = 4;

export interface DemoOptions {
  /** Load the sample again even when an earlier run loaded it. */
  reset: boolean;
  /** Where the data is, for people: `the durable embedded engine (LMDB) in ./doclayer-data`. */
  where: string;
}

interface StepCost {
  step: string;
  counts: KvCounts;
  ms: number;
}

export async function runDemo(session: Session, output: Output, options: DemoOptions): Promise<void> {
  const counting = session.counting;
  if (counting === undefined) throw new Error('the demo needs a session that counts');
  const say = (text = '') => output.write(`${text}\n`);
  const costs: StepCost[] = [];
  const measure = async <T>(step: string, fn: () => Promise<T>): Promise<{ result: T; cost: StepCost }> => {
    counting.take();
    const started = process.hrtime.bigint();
    const result = await fn();
    const cost = { step, counts: counting.take(), ms: Number(process.hrtime.bigint() - started) / 1e6 };
    return { result, cost };
  };
  const orders = session.collection(DEMO_ORDERS);

  await say(`doclayer demo: ${options.where}`);
  await say();

  // 1. The sample data.
  await say(`1. The sample data set: ${formatCount(SAMPLE_SIZE)} orders of an online shop (nested documents, generated from seed ${SAMPLE_SEED})`);
  const marker = await readMarker(session);
  if (marker !== undefined && !options.reset) {
    await say(`   Reusing the orders an earlier run loaded (${marker}); \`doclayer demo --reset\` loads them again.`);
  } else {
    await say(
      options.reset
        ? '   --reset: loading them again (each order replaces its earlier copy).'
        : '   No finished load found here: loading them (later runs reuse them).',
    );
    const progress = new ProgressBar(output.stderr, { verb: '   loading', noun: 'orders', total: SAMPLE_SIZE });
    const { result: writer, cost } = await measure('load the sample', async () => {
      const writer = new BatchWriter<string>(session.kv, {
        onCommitted: () => progress.update(writer.written),
        onRejected: (_, error) => {
          throw error;
        },
      });
      for (const doc of sampleOrders()) {
        const id = doc.id as string;
        await writer.add(id, documentWrites(orders, id, doc, JSON.stringify(doc).length));
      }
      await writer.flush();
      return writer;
    });
    progress.finish();
    // Outside the step measured: its cost and the table's row are the load's alone.
    await session.collection(DEMO_META).upsert(MARKER_ID, { seed: SAMPLE_SEED, size: SAMPLE_SIZE, loadedAt: new Date().toISOString() });
    costs.push(cost);
    await say(`   Loaded ${formatCount(writer.written)} orders in ${formatCount(cost.counts.commits)} transactions ${costText(cost)}`);
  }
  await say();

  // 2. Sub-document reads.
  await say(`2. Reads by path of ${SHOWCASE_ORDER}: each is one range read of the subtree, whatever the document's size`);
  await orders.get(SHOWCASE_ORDER, 'id');
  const paths = ['customer.address.city', 'items[-1].sku', 'customer.address', 'history[0]'];
  for (const path of paths) {
    const { result, cost } = await measure(`get ${path}`, () => orders.get(SHOWCASE_ORDER, path));
    costs.push(cost);
    await say(`   get ${path.padEnd(22)} ${clip(stringifyJson(result.content), 44).padEnd(44)} ${costText(cost)}`);
  }
  const whole = await measure('get (whole document)', () => orders.get(SHOWCASE_ORDER));
  costs.push(whole.cost);
  await say(`   get (the whole document)   ${`${stringifyJson(whole.result.content).length} bytes of JSON`.padEnd(44)} ${costText(whole.cost)}`);
  await say();

  // 3. A multi-path mutation with CAS.
  await say(`3. A multi-path mutation of ${SHOWCASE_ORDER}, all or nothing, guarded by the CAS of a read`);
  const read = await orders.get(SHOWCASE_ORDER, 'status');
  await say(`   read: status ${stringifyJson(read.content)}, cas ${read.cas}`);
  const at = new Date().toISOString();
  const specs = [
    MutateInSpec.upsert('status', 'shipped'),
    MutateInSpec.upsert('shipping.tracking', `TRK${Date.now()}`),
    MutateInSpec.arrayAppend('history', { at, status: 'shipped' }),
    MutateInSpec.increment('revisions', 1, { createPath: true }),
  ];
  const mutation = await measure('mutateIn with CAS', () => orders.mutateIn(SHOWCASE_ORDER, specs, { cas: read.cas }));
  costs.push(mutation.cost);
  await say(`   mutateIn: status, shipping.tracking, history += 1 entry, revisions += 1 with that cas`);
  await say(
    `     committed, new cas ${mutation.result.cas}, revisions now ${stringifyJson(mutation.result.values[3] ?? null)} ${costText(mutation.cost)}`,
  );
  const stale = await measure('mutateIn with a stale CAS', async () => {
    try {
      await orders.mutateIn(SHOWCASE_ORDER, specs, { cas: read.cas });
      return 'committed';
    } catch (err) {
      if (isDocumentError(err, 'CAS_MISMATCH')) return 'CAS_MISMATCH';
      throw err;
    }
  });
  costs.push(stale.cost);
  await say(`   the same mutation again with the old cas: ${stale.result}, nothing written ${costText(stale.cost)}`);
  await say();

  // 4. A queue and sets shared by concurrent workers.
  await say(
    `4. A queue of ${ORDERS_TO_SHIP} orders to ship, consumed by ${WORKERS} concurrent workers; each pop, read and set update is one transaction`,
  );
  const work = session.collection(DEMO_WORK);
  const queue = work.queue<string>('to-ship');
  const countries = work.set<string>('countries-shipped-to');
  const customers = work.set<string>('customers-shipped-to');
  await Promise.all([queue.clear(), countries.clear(), customers.clear()]);
  const ids = Array.from({ length: ORDERS_TO_SHIP }, (_, i) => sampleOrderId(i + 1));
  const push = await measure('queue: push 200 ids', () => queue.pushMany(ids));
  costs.push(push.cost);
  await say(`   pushed ${ORDERS_TO_SHIP} order ids in one transaction ${costText(push.cost)} (the queue and sets are emptied first)`);
  const consumed = await measure(`${WORKERS} workers: pop + get + 2 set adds`, () =>
    Promise.all(Array.from({ length: WORKERS }, () => worker(session, orders, queue, countries, customers))),
  );
  costs.push(consumed.cost);
  const taken = consumed.result.flat();
  const unique = new Set(taken).size;
  await say(
    `   worker${consumed.result.map((w, i) => ` ${i + 1}: ${w.length}`).join(',')} orders; ${taken.length} popped, ${unique} distinct: each exactly once`,
  );
  await say(`   ${costText(consumed.cost)}, ${consumed.cost.counts.retries} retried on conflict`);
  const [countryList, customerCount, left] = await Promise.all([countries.values(), customers.size(), queue.size()]);
  await say(`   countries-shipped-to: ${stringifyJson(countryList)}`);
  await say(`   customers-shipped-to: ${customerCount} members; queue left: ${left}`);
  await say();

  await say('What each step cost:');
  await say(costTable(costs));
  await say();
  await say('Try next:');
  await say(`  npx doclayer --collection ${DEMO_ORDERS} get ${SHOWCASE_ORDER} customer`);
  await say(`  npx doclayer --collection ${DEMO_ORDERS} scan --limit 3`);
  await say(`  npx doclayer --collection ${DEMO_WORK} set countries-shipped-to members`);
  await say('  npx doclayer stats');
}

/** The marker of a finished load of this sample, described, or undefined when there is none. */
async function readMarker(session: Session): Promise<string | undefined> {
  try {
    const { content } = await session.collection(DEMO_META).get(MARKER_ID);
    const marker = content as { seed?: JsonValue; size?: JsonValue; loadedAt?: JsonValue };
    if (marker.seed !== SAMPLE_SEED || marker.size !== SAMPLE_SIZE || typeof marker.loadedAt !== 'string') return undefined;
    return `${formatCount(SAMPLE_SIZE)} orders, loaded ${marker.loadedAt}`;
  } catch (err) {
    if (isDocumentError(err, 'DOCUMENT_NOT_FOUND')) return undefined;
    throw err;
  }
}

/** Pops order ids until the queue is empty; returns the ids it took. */
async function worker(
  session: Session,
  orders: Collection,
  queue: ReturnType<Collection['queue']>,
  countries: ReturnType<Collection['set']>,
  customers: ReturnType<Collection['set']>,
): Promise<string[]> {
  const taken: string[] = [];
  for (;;) {
    const id = await session.kv.transact(async (tr) => {
      const popped = await queue.pop({ tr, spread: WORKERS });
      if (popped === undefined) return undefined;
      const orderId = popped as string;
      const { content } = await orders.get(orderId, 'customer', { tr });
      const customer = content as { id: string; address: { country: string } };
      await Promise.all([countries.add(customer.address.country, { tr }), customers.add(customer.id, { tr })]);
      return orderId;
    });
    if (id === undefined) return taken;
    taken.push(id);
  }
}

function costText(cost: StepCost): string {
  const { keysRead, keysWritten } = cost.counts;
  return `[${formatCount(keysRead)} key${keysRead === 1 ? '' : 's'} read, ${formatCount(keysWritten)} written, ${formatMs(cost.ms)}]`;
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`;
}

function clip(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 3)}...`;
}

function costTable(costs: readonly StepCost[]): string {
  const header = ['step', 'keys read', 'keys written', 'transactions', 'retries', 'time'];
  const rows = costs.map((c) => [
    c.step,
    formatCount(c.counts.keysRead),
    formatCount(c.counts.keysWritten),
    formatCount(c.counts.commits),
    formatCount(c.counts.retries),
    formatMs(c.ms),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `  ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ')}`;
  return [line(header), ...rows.map(line)].join('\n');
}
