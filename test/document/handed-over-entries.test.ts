/**
 * Document writes and list pushes hand their encoded entries to the memory engine, which stores those
 * very Buffers (`writeEncodedEntries`, `setHandedOver`). The leaves every document shares (null, true, false, the object
 * and array markers) are encoded as shared Buffers, so they must be copied on the way: a stored
 * entry must never be the same object as another document's.
 */
import { open, type JsonValue } from '../../src';

describe('document writes on the memory engine', () => {
  const shape = { t: true, f: false, n: null, o: {}, a: [], nested: { deep: [true, null] } };

  it.each(['insert', 'upsert', 'replace'] as const)('%s stores no Buffer another document shares', async (write) => {
    const db = await open();
    try {
      const docs = db.collection('app.docs');
      if (write === 'replace') await docs.insert({}, { id: 'first' });
      if (write === 'insert') await docs.insert(shape, { id: 'first' });
      else if (write === 'upsert') await docs.upsert('first', shape);
      else await docs.replace('first', shape);
      await docs.insert(shape, { id: 'second' });
      // Buffers read from the store are read-only by contract; a caller who breaks that may damage
      // the entries it read, and nothing else.
      const pairs = await db.kv.getRangeAll('', '\xff');
      expect(pairs.length).toBeGreaterThan(0);
      for (const { value } of pairs) value.fill(0xee);
      await docs.insert(shape, { id: 'third' });
      expect((await docs.get('third')).content).toEqual(shape);
    } finally {
      await db.close();
    }
  });
});

describe('list push on the memory engine', () => {
  it('stores no Buffer another element or document shares', async () => {
    const db = await open();
    try {
      const docs = db.collection('app.docs');
      const values: JsonValue[] = [true, false, null, {}, [], { nested: [true, null] }];
      for (const value of values) await docs.list('first').push(value);
      // Buffers read from the store are read-only by contract; a caller who breaks that may damage
      // the entries it read (the first list), and nothing else.
      const pairs = await db.kv.getRangeAll('', '\xff');
      for (const { value } of pairs) value.fill(0xee);
      const second = docs.list('second');
      for (const value of values) await second.push(value);
      await docs.insert({ t: true, f: false, n: null, o: {}, a: [] }, { id: 'after' });
      expect(await second.slice()).toEqual(values);
      expect((await docs.get('after')).content).toEqual({ t: true, f: false, n: null, o: {}, a: [] });
    } finally {
      await db.close();
    }
  });
});
