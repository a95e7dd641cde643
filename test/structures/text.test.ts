/**
 * DocText: UTF-8 chunks at positions with a movable base, lengths by atomic add. Behaviour (chunking,
 * astral characters), the reference model, and the conflicts its TSDoc claims.
 */
import { descendantsBegin, subtreeEnd, type DocumentKeys } from '../../src/document/keys/layout';
import { bodyKey } from '../../src/structures/structure-keys';
import { splitUtf8 } from '../../src/document/values/chunks';
import { TEXT_CHUNK_BYTES } from '../../src/structures/text';
import { Random, testSeed } from '../support/random';
import { documentSuite } from '../document/document-suite';
import { errorOf, retriesOf } from './support';

const PIECES = ['a', 'hello ', '😀', 'ä', '', 'x\0y', '日本語', '🎉🎉'];

describe('splitUtf8', () => {
  it('never splits a character between chunks', () => {
    const bytes = Buffer.from('a😀bä日😀', 'utf8');
    for (let max = 4; max <= 8; max++) {
      const chunks = splitUtf8(bytes, max);
      expect(Buffer.concat(chunks)).toEqual(bytes);
      for (const chunk of chunks) {
        expect(chunk.length).toBeLessThanOrEqual(max);
        expect(Buffer.from(chunk.toString('utf8'), 'utf8')).toEqual(chunk);
      }
    }
  });
});

documentSuite('DocText', (ctx) => {
  it('appends and prepends, and counts length in UTF-16 units and bytes', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const t = c.text('t');
    expect(await t.get()).toBe('');
    expect(await t.length()).toBe(0);
    await t.append('world');
    await t.prepend('hello ');
    await t.append(' 😀');
    expect(await t.get()).toBe('hello world 😀');
    expect(await t.length()).toBe('hello world 😀'.length);
    expect(await t.length()).toBe(14);
    expect(await t.byteLength()).toBe(16);
    expect((await c.get('t')).content).toBe('hello world 😀');
    await t.set('new');
    expect(await t.get()).toBe('new');
    expect(await t.length()).toBe(3);
    expect(await t.byteLength()).toBe(3);
  });

  it('refuses lone surrogates and non-strings with INVALID_VALUE', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const t = c.text('t');
    expect((await errorOf(t.append('\ud83d'))).code).toBe('INVALID_VALUE');
    expect((await errorOf(t.prepend(1 as never))).code).toBe('INVALID_VALUE');
    expect(await c.exists('t')).toBe(false);
  });

  it('stores long texts in chunks of at most 100,000 bytes, splitting no character', async () => {
    const { docs, counter } = await ctx.open();
    const t = docs.collection().text('t');
    const astral = '😀'.repeat(20_000); // 80,000 bytes
    await t.append(astral);
    await t.append(astral); // does not fit: a new chunk
    await t.prepend('é'.repeat(60_000)); // 120,000 bytes: 2 chunks before
    // Fits in the last chunk: an appendIfFits of the new bytes only, and the two lengths.
    const [attempt] = (await counter.measure(() => t.append('!?'))).attempts;
    expect(attempt.atomicOps.map((a) => a.op).sort()).toEqual(['add', 'add', 'appendIfFits']);
    expect(attempt.sets.length).toBe(0);
    const expected = 'é'.repeat(60_000) + astral + astral + '!?';
    expect(await t.get()).toBe(expected);
    expect(await t.length()).toBe(expected.length);
    expect(await t.byteLength()).toBe(Buffer.byteLength(expected));
    const chunks = await docs.transact(async (tr) => {
      const keys = await docs.collection().structureAccess().keysToRead(tr, 't');
      const body = bodyKey(keys as DocumentKeys);
      return (await tr.getRangeAll(descendantsBegin(body), subtreeEnd(body))).map((pair) => pair.value);
    });
    expect(chunks.map((chunk) => chunk.length <= TEXT_CHUNK_BYTES && Buffer.from(chunk.toString('utf8')).equals(chunk))).toEqual([
      true,
      true,
      true,
      true,
    ]);
  });

  it('follows the reference model through random operation sequences', async () => {
    const seed = testSeed(305);
    const random = new Random(seed);
    const { docs } = await ctx.open();
    const c = docs.collection();
    const t = c.text('model');
    let model = '';
    for (let step = 0; step < 100; step++) {
      const op = random.pick(['append', 'append', 'prepend', 'set', 'clear'] as const);
      const piece = random.chance(0.05) ? '😀'.repeat(random.between(10_000, 30_000)) : random.pick(PIECES).repeat(random.between(1, 4));
      const where = `seed ${seed}, step ${step}: ${op}`;
      if (op === 'append') {
        await t.append(piece);
        model += piece;
      } else if (op === 'prepend') {
        await t.prepend(piece);
        model = piece + model;
      } else if (op === 'set') {
        await t.set(piece);
        model = piece;
      } else if (random.chance(0.3)) {
        await t.clear();
        model = '';
      }
      const [text, length, bytes] = [await t.get(), await t.length(), await t.byteLength()];
      expect([where, text === model, length, bytes]).toEqual([where, true, model.length, Buffer.byteLength(model)]);
    }
  });

  describe('conflicts', () => {
    it('an append and a prepend of a text of several chunks never conflict; lengths add up', async () => {
      const { docs } = await ctx.open();
      const t = docs.collection().text('t');
      await t.append('a'.repeat(TEXT_CHUNK_BYTES));
      await t.append('b');
      expect(await retriesOf(docs, [(tr) => t.append('<end>', { tr }), (tr) => t.prepend('<start>', { tr })])).toBe(0);
      expect(await t.length()).toBe(TEXT_CHUNK_BYTES + 1 + 12);
    });

    it('concurrent appends conflict, retry, and all land whole', async () => {
      const { docs } = await ctx.open();
      const t = docs.collection().text('t');
      await t.append('>');
      expect(
        await retriesOf(
          docs,
          ['x', 'y', 'z'].map((s) => (tr) => t.append(s.repeat(3), { tr })),
        ),
      ).toBeGreaterThan(0);
      const text = await t.get();
      expect(text.length).toBe(10);
      expect(
        text
          .slice(1)
          .match(/xxx|yyy|zzz/g)
          ?.sort(),
      ).toEqual(['xxx', 'yyy', 'zzz']);
    });
  });
});
