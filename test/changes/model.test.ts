/**
 * The change feed against a model, on every engine: seeded random writers run concurrently (single
 * and multi-document transactions, inserts, upserts, sub-document writes, removals) while a follower
 * reads the feed, stopping and resuming from its last token at random points, and a compactor runs
 * now and then. The follower must end with every document's final state, see each document's changes
 * in increasing CAS order and the feed's tokens in increasing order, and lose nothing across resumes.
 * Replay a failure with DOCLAYER_SEED=<seed>.
 */
import { isDocumentError, MutateInSpec, type ChangeEvent, type Collection, type DocLayer, type JsonValue } from '../../src';
import { documentSuite } from '../document/document-suite';
import { Random, testSeed } from '../support/random';

const IDS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
const WRITERS = 3;
const OPERATIONS = 30;

interface Seen {
  readonly cas: string;
  readonly doc: JsonValue | undefined;
}

/** Runs one random write, ignoring the errors a random write may rightly get. */
async function randomWrite(docs: DocLayer, c: Collection, random: Random, writer: number, i: number): Promise<void> {
  const id = random.pick(IDS);
  const op = random.int(6);
  try {
    if (op === 0) await c.upsert(id, { writer, i });
    else if (op === 1) await c.insert({ inserted: i }, { id });
    else if (op === 2) await c.mutateIn(id, [MutateInSpec.upsert(`w${writer}`, i)], { storeSemantics: 'upsert' });
    else if (op === 3) await c.remove(id);
    else {
      const ids = [id, random.pick(IDS), random.pick(IDS)];
      await docs.transact(async (tr) => {
        for (const [k, each] of ids.entries()) await c.upsert(each, { writer, i, k }, { tr });
      });
    }
  } catch (err) {
    if (!isDocumentError(err, 'DOCUMENT_NOT_FOUND') && !isDocumentError(err, 'DOCUMENT_EXISTS')) throw err;
  }
}

documentSuite('the change feed against a model', (ctx) => {
  it('a follower resuming at random tokens sees every final state, each document in order', async () => {
    const seed = testSeed(15);
    const { docs } = await ctx.open();
    await docs.createCollection('app.m', { history: true });
    const c = docs.collection('app.m');

    const state = new Map<string, Seen>();
    const problems: string[] = [];
    let token: string | undefined;
    let resumes = 0;
    const abort = new AbortController();
    const apply = (change: ChangeEvent) => {
      if (change.kind === 'drop') return void problems.push('unexpected drop');
      if (token !== undefined && change.token <= token) problems.push(`token ${change.token} after ${token}`);
      token = change.token;
      const id = String(change.id);
      const before = state.get(id);
      if (before !== undefined && change.cas <= before.cas) problems.push(`${id}: cas ${change.cas} after ${before.cas}`);
      state.set(id, { cas: change.cas, doc: change.kind === 'upsert' ? change.doc : undefined });
    };
    const followerRandom = new Random(seed ^ 0x5f);
    const follower = (async () => {
      while (!abort.signal.aborted) {
        const stopAfter = followerRandom.between(1, 12);
        let n = 0;
        const options = { since: token, follow: true, includeDocs: true, signal: abort.signal, pageSize: followerRandom.between(1, 8) };
        for await (const change of c.changes(options)) {
          apply(change);
          if (++n >= stopAfter) break;
        }
        resumes++;
      }
    })();

    const writers = Array.from({ length: WRITERS }, async (_, writer) => {
      const own = new Random(seed + writer + 1);
      for (let i = 0; i < OPERATIONS; i++) {
        await randomWrite(docs, c, own, writer, i);
        if (own.chance(0.05)) await docs.compactChanges();
      }
    });
    await Promise.all(writers);

    const final = new Map<string, Seen>();
    for (const id of IDS) {
      const found = await c.getMany([id]);
      if (found[0] !== undefined) final.set(id, { cas: found[0].cas as string, doc: found[0].content });
    }
    const live = () => new Map([...state].filter(([, seen]) => seen.doc !== undefined));
    const deadline = Date.now() + 20_000;
    while (JSON.stringify([...live()].sort()) !== JSON.stringify([...final].sort()) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    abort.abort();
    await follower;

    expect({ seed, problems }).toEqual({ seed, problems: [] });
    expect({ seed, state: [...live()].sort() }).toEqual({ seed, state: [...final].sort() });
    expect(resumes).toBeGreaterThan(3);
  });
});
