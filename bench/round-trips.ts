/**
 * `npm run bench:round-trips`: the sequential round trips each document, structure and queue operation
 * makes on a FoundationDB cluster, next to FoundationDB's floor for what the operation is (2 for a
 * read: read version + read; 2 for a blind write: read version + commit; 3 for a read-modify-write:
 * read version + read + commit). On a cluster these round trips, not CPU, are what an operation costs.
 *
 *   npm run bench:round-trips
 *
 * The engine is the memory engine wrapped so that it charges round trips as a cluster client pays
 * them (`test/support/round-trip-engine.ts`, which the tests that state round trips use too): the
 * read version, each read that waited on an earlier one, the commit of a transaction that writes.
 * docs/performance.md says why an operation stays above its floor.
 */
import { open, LookupInSpec, MutateInSpec, type DocLayer } from '../src';
import type { Collection } from '../src/collection';
import { Database } from '../src/kv/contract/database';
import { roundTripEngine, RoundTrips } from '../test/support/round-trip-engine';
import { MemoryEngine } from '../src/kv/memory/memory-engine';
import { writeResultsSection } from './results-section';

type Kind = 'read' | 'blind write' | 'read-modify-write';
const FLOOR: Record<Kind, number> = { read: 2, 'blind write': 2, 'read-modify-write': 3 };

interface Case {
  readonly name: string;
  readonly kind: Kind;
  /** Runs before the operation, uncounted. */
  readonly setup?: (c: Collection) => Promise<unknown>;
  readonly run: (c: Collection) => Promise<unknown>;
}

const doc = { name: 'Ada', langs: ['en', 'fr'], address: { city: 'London', zip: 'N1' }, logins: 3 };

export const CASES: readonly Case[] = [
  // Documents
  { name: 'document insert (generated id)', kind: 'read-modify-write', run: (c) => c.insert(doc) },
  { name: 'document upsert', kind: 'blind write', run: (c) => c.upsert('d1', doc) },
  { name: 'document replace', kind: 'read-modify-write', run: (c) => c.replace('d1', doc) },
  { name: 'document get (whole)', kind: 'read', run: (c) => c.get('d1') },
  { name: 'document get (a path)', kind: 'read', run: (c) => c.get('d1', 'address.city') },
  { name: 'document exists', kind: 'read', run: (c) => c.exists('d1') },
  { name: 'document getMany (3 ids)', kind: 'read', run: (c) => c.getMany(['d1', 'd2', 'd3']) },
  { name: 'document lookupIn (2 paths)', kind: 'read', run: (c) => c.lookupIn('d1', [LookupInSpec.get('name'), LookupInSpec.exists('langs')]) },
  {
    name: 'document mutateIn (upsert a field, increment)',
    kind: 'read-modify-write',
    run: (c) => c.mutateIn('d1', [MutateInSpec.upsert('address.city', 'Paris'), MutateInSpec.increment('logins', 1)]),
  },
  {
    name: 'document mutateIn with cas',
    kind: 'read-modify-write',
    setup: async (c) => {
      read = await c.get('d1');
    },
    run: (c) => c.mutateIn('d1', [MutateInSpec.upsert('address.city', 'Paris'), MutateInSpec.increment('logins', 1)], { cas: read!.cas }),
  },
  { name: 'document remove', kind: 'read-modify-write', setup: (c) => c.upsert('gone', doc), run: (c) => c.remove('gone') },
  // Counter
  { name: 'counter add (blind)', kind: 'blind write', run: (c) => c.counter('k').add(1) },
  { name: 'counter incr', kind: 'read-modify-write', run: (c) => c.counter('k').incr() },
  { name: 'counter get', kind: 'read', run: (c) => c.counter('k').get() },
  { name: 'counter set', kind: 'blind write', run: (c) => c.counter('k').set(5) },
  // Set
  { name: 'set add', kind: 'read-modify-write', run: (c) => c.set('s').add('a') },
  { name: 'set has', kind: 'read', run: (c) => c.set('s').has('a') },
  { name: 'set size', kind: 'read', run: (c) => c.set('s').size() },
  { name: 'set values', kind: 'read', run: (c) => c.set('s').values() },
  { name: 'set delete', kind: 'read-modify-write', run: (c) => c.set('s').delete('a') },
  // Map
  { name: 'map set', kind: 'blind write', run: (c) => c.map('m').set('a', 1) },
  { name: 'map get', kind: 'read', run: (c) => c.map('m').get('a') },
  { name: 'map has', kind: 'read', run: (c) => c.map('m').has('a') },
  { name: 'map size', kind: 'read', run: (c) => c.map('m').size() },
  { name: 'map increment', kind: 'read-modify-write', run: (c) => c.map('m').increment('n') },
  { name: 'map entries', kind: 'read', run: (c) => c.map('m').entries() },
  { name: 'map delete', kind: 'read-modify-write', run: (c) => c.map('m').delete('a') },
  // List
  { name: 'list push', kind: 'read-modify-write', run: (c) => c.list('l').push(1) },
  { name: 'list unshift', kind: 'read-modify-write', run: (c) => c.list('l').unshift(0) },
  { name: 'list get(i)', kind: 'read', run: (c) => c.list('l').get(1) },
  { name: 'list get(-1)', kind: 'read', run: (c) => c.list('l').get(-1) },
  { name: 'list set(i)', kind: 'read-modify-write', run: (c) => c.list('l').set(0, 5) },
  { name: 'list size', kind: 'read', run: (c) => c.list('l').size() },
  { name: 'list slice', kind: 'read', run: (c) => c.list('l').slice(0, 2) },
  { name: 'list insert(1)', kind: 'read-modify-write', run: (c) => c.list('l').insert(1, 7) },
  { name: 'list removeAt(1)', kind: 'read-modify-write', run: (c) => c.list('l').removeAt(1) },
  { name: 'list pop', kind: 'read-modify-write', run: (c) => c.list('l').pop() },
  { name: 'list shift', kind: 'read-modify-write', run: (c) => c.list('l').shift() },
  // Text
  { name: 'text append', kind: 'read-modify-write', run: (c) => c.text('t').append('abc') },
  { name: 'text prepend', kind: 'read-modify-write', run: (c) => c.text('t').prepend('x') },
  { name: 'text get', kind: 'read', run: (c) => c.text('t').get() },
  { name: 'text length', kind: 'read', run: (c) => c.text('t').length() },
  // Queue
  { name: 'queue push', kind: 'blind write', run: (c) => c.queue('q').push({ n: 1 }) },
  { name: 'queue pushMany (10)', kind: 'blind write', run: (c) => c.queue('q').pushMany(Array.from({ length: 10 }, (_, n) => ({ n }))) },
  { name: 'queue push (dedupeId)', kind: 'read-modify-write', run: (c) => c.queue('q').push({ n: 2 }, { dedupeId: 'job-2' }) },
  { name: 'queue pop', kind: 'read-modify-write', run: (c) => c.queue('q').pop() },
  { name: 'queue pop (spread 8)', kind: 'read-modify-write', run: (c) => c.queue('q').pop({ spread: 8 }) },
  { name: 'queue peek', kind: 'read', run: (c) => c.queue('q').peek() },
  { name: 'queue size', kind: 'read', run: (c) => c.queue('q').size() },
  { name: 'queue lease(1)', kind: 'read-modify-write', run: (c) => c.queue('q').lease(1) },
  {
    name: 'queue ack',
    kind: 'read-modify-write',
    setup: async (c) => {
      leased = (await c.queue('q').lease(1))[0];
    },
    run: (c) => c.queue('q').ack(leased!),
  },
  {
    name: 'queue nack',
    kind: 'read-modify-write',
    setup: async (c) => {
      leased = (await c.queue('q').lease(1))[0];
    },
    run: (c) => c.queue('q').nack(leased!),
  },
];

/** The document as a setup read it, for an operation with its cas. */
let read: Awaited<ReturnType<Collection['get']>> | undefined;
let leased: Awaited<ReturnType<ReturnType<Collection['queue']>['lease']>>[number] | undefined;

export interface RoundTripRow {
  readonly operation: string;
  readonly kind: Kind;
  readonly roundTrips: number;
  readonly floor: number;
}

/** Each case in order, on one database (later cases read what earlier ones wrote). */
export async function runRoundTrips(): Promise<RoundTripRow[]> {
  const trips = new RoundTrips();
  const docs: DocLayer = await open({ database: new Database(roundTripEngine(new MemoryEngine(), trips)) });
  const rows: RoundTripRow[] = [];
  try {
    const c = docs.collection();
    await c.upsert('warm-up', {}); // creates the collection, so that no row pays for that
    for (const d of ['d2', 'd3']) await c.upsert(d, doc);
    for (const op of CASES) {
      // Once uncounted, so that the row counts the operation on a structure that exists (creating
      // one reads its expiry and root entries too: one more round trip, once).
      await op.setup?.(c);
      await op.run(c);
      await op.setup?.(c);
      const before = trips.count;
      await op.run(c);
      rows.push({ operation: op.name, kind: op.kind, roundTrips: trips.count - before, floor: FLOOR[op.kind] });
    }
  } finally {
    await docs.close();
  }
  return rows;
}

export function roundTripTable(rows: readonly RoundTripRow[]): string[] {
  return [
    '| operation | kind | sequential round trips | FoundationDB floor | above the floor |',
    '| --- | --- | ---: | ---: | ---: |',
    ...rows.map(
      (r) => `| ${r.operation} | ${r.kind} | ${r.roundTrips} | ${r.floor} | ${r.roundTrips > r.floor ? `+${r.roundTrips - r.floor}` : ''} |`,
    ),
  ];
}

if (require.main === module) {
  runRoundTrips().then(
    (rows) => {
      console.log(roundTripTable(rows).join('\n'));
      const above = rows.filter((r) => r.roundTrips > r.floor);
      const summary = `${rows.length - above.length} of ${rows.length} operations at their floor; above it: ${above.map((r) => r.operation).join(', ') || 'none'}.`;
      console.log(`\n${summary}`);
      const file = writeResultsSection('bench:round-trips', [
        `Written by \`npm run bench:round-trips\` on ${new Date().toISOString().slice(0, 10)}: sequential round trips per operation on a cluster-like`,
        "engine (read version, each read, the commit of a writing transaction), next to FoundationDB's floor. docs/performance.md says",
        'why an operation stays above it.',
        '',
        ...roundTripTable(rows),
        '',
        summary,
      ]);
      console.log(`wrote ${file}`);
    },
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
