import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import {
  addHandedOver,
  addReadConflictRangeHandedOver,
  clearHandedOver,
  getRangeAllHandedOver,
  setHandedOver,
  setVersionstampedKeyHandedOver,
  setVersionstampedValueHandedOver,
} from '../../src/kv/client/hand-over';
import { prepareVersionstampTemplate } from '../../src/kv/client/versionstamp-template';
import { readInt64LE, int64LE } from '../../src/kv/contract/bytes';
import { isKvError } from '../../src/kv/contract/errors';
import { Limits } from '../../src/kv/contract/limits';
import type { Engine, Transaction } from '../../src/kv/contract/types';
import { CountingEngine } from '../../src/kv/counting-engine';
import { LmdbEngine } from '../../src/kv/lmdb';
import { MemoryEngine } from '../../src/kv/memory/memory-engine';

const root = mkdtempSync(join(tmpdir(), 'doclayer-hand-over-'));
let stores = 0;
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The code of the KvError `fn` throws. */
function errorCode(fn: () => void): string | undefined {
  try {
    fn();
  } catch (err) {
    if (isKvError(err)) return err.name;
    throw err;
  }
  return undefined;
}

async function committed(engine: Engine, fn: (tr: Transaction) => void): Promise<void> {
  const tr = engine.createTransaction();
  fn(tr);
  await tr.commit();
}

async function stored(engine: Engine, begin: string, end: string): Promise<Array<[string, string]>> {
  const tr = engine.createTransaction();
  const pairs = await tr.getRangeAll(begin, end);
  return pairs.map(({ key, value }) => [key.toString(), value.toString()]);
}

describe.each([
  ['memory', () => new MemoryEngine()],
  ['lmdb', () => new LmdbEngine({ path: join(root, `store-${stores++}`) })],
  ['a transaction that is no engine client (counting wrapper)', () => new CountingEngine(new MemoryEngine())],
] as const)('setHandedOver [%s]', (_name, makeEngine) => {
  let engine: Engine;
  beforeEach(() => {
    engine = makeEngine();
  });
  afterEach(() => engine.close());

  it('writes what set writes, read back by point and range reads', async () => {
    await committed(engine, (tr) => {
      setHandedOver(tr, Buffer.from('a/1'), Buffer.from('one'));
      setHandedOver(tr, Buffer.from('a/2'), Buffer.from('two'));
      tr.set('a/3', 'three');
    });
    expect(await stored(engine, 'a/', 'a0')).toEqual([
      ['a/1', 'one'],
      ['a/2', 'two'],
      ['a/3', 'three'],
    ]);
  });

  it('is seen by the transaction that made it (read-your-writes), over a stored value', async () => {
    await committed(engine, (tr) => tr.set('k', 'old'));
    const tr = engine.createTransaction();
    setHandedOver(tr, Buffer.from('k'), Buffer.from('new'));
    expect((await tr.get('k'))?.toString()).toBe('new');
    await tr.commit();
    expect(await stored(engine, 'k', 'l')).toEqual([['k', 'new']]);
  });

  it('refuses what set refuses, with its error, and writes nothing', async () => {
    const tr = engine.createTransaction();
    const tooLongKey = Buffer.alloc((engine.maxKeyBytes ?? Limits.maxKeyBytes) + 1, 'k');
    expect(errorCode(() => setHandedOver(tr, Buffer.from([0xff, 1]), Buffer.from('v')))).toBe('key_outside_legal_range');
    expect(errorCode(() => setHandedOver(tr, tooLongKey, Buffer.from('v')))).toBe('key_too_large');
    expect(errorCode(() => setHandedOver(tr, Buffer.from('k'), Buffer.alloc(Limits.maxValueBytes + 1)))).toBe('value_too_large');
    await tr.commit();
    expect(await stored(engine, '', '\xff')).toEqual([]);
  });
});

describe('setHandedOver on the memory engine', () => {
  it('keeps the Buffers it is given instead of copies: a range read hands back the same objects', async () => {
    const engine = new MemoryEngine();
    const key = Buffer.from('doc/leaf');
    const value = Buffer.from('leaf value');
    await committed(engine, (tr) => setHandedOver(tr, key, value));
    const [pair] = await engine.createTransaction().getRangeAll('doc/', 'doc0');
    expect(pair.key).toBe(key);
    expect(pair.value).toBe(value);
    await engine.close();
  });

  it('while set copies them, so that its caller may reuse its buffers', async () => {
    const engine = new MemoryEngine();
    const value = Buffer.from('first');
    await committed(engine, (tr) => tr.set('k', value));
    value.write('later');
    expect(await stored(engine, 'k', 'l')).toEqual([['k', 'first']]);
    await engine.close();
  });
});

/** `prefix` + 10 placeholder bytes + `suffix` + the placeholder's offset (4 bytes little-endian). */
function template(prefix: string, suffix = ''): Buffer {
  const offset = Buffer.alloc(4);
  offset.writeUInt32LE(prefix.length, 0);
  return Buffer.concat([Buffer.from(prefix), Buffer.alloc(10), Buffer.from(suffix), offset]);
}

describe.each([
  ['memory', () => new MemoryEngine()],
  ['lmdb', () => new LmdbEngine({ path: join(root, `store-${stores++}`) })],
  ['a transaction that is no engine client (counting wrapper)', () => new CountingEngine(new MemoryEngine())],
] as const)('setVersionstampedKeyHandedOver [%s]', (_name, makeEngine) => {
  let engine: Engine;
  beforeEach(() => {
    engine = makeEngine();
  });
  afterEach(() => engine.close());

  it('writes what setVersionstampedKey writes: the key with the commit versionstamp, in call order', async () => {
    const tr = engine.createTransaction();
    setVersionstampedKeyHandedOver(tr, template('q/', '/1'), Buffer.from('one'));
    tr.setVersionstampedKey(template('q/', '/2'), 'two');
    const versionstamp = tr.getVersionstamp();
    await tr.commit();
    const stamp = await versionstamp;
    const key = (suffix: string) => Buffer.concat([Buffer.from('q/'), stamp, Buffer.from(suffix)]).toString('hex');
    const pairs = await engine.createTransaction().getRangeAll('q/', 'q0');
    expect(pairs.map((p) => [p.key.toString('hex'), p.value.toString()])).toEqual([
      [key('/1'), 'one'],
      [key('/2'), 'two'],
    ]);
  });

  it('makes the keys it may become unreadable (1036) until commit, as setVersionstampedKey does', async () => {
    const tr = engine.createTransaction();
    setVersionstampedKeyHandedOver(tr, template('q/'), Buffer.from('item'));
    await expect(tr.getRangeAll('q/', 'q0')).rejects.toMatchObject({ name: 'accessed_unreadable' });
    expect(await tr.getRangeAll('r', 's')).toEqual([]);
  });

  it('refuses what setVersionstampedKey refuses, with its error, and writes nothing', async () => {
    const tr = engine.createTransaction();
    const tooLongKey = Buffer.concat([Buffer.alloc(engine.maxKeyBytes ?? Limits.maxKeyBytes, 'k'), template('')]);
    const value = Buffer.from('v');
    expect(errorCode(() => setVersionstampedKeyHandedOver(tr, Buffer.from([0xff, ...template('')]), value))).toBe('key_outside_legal_range');
    expect(errorCode(() => setVersionstampedKeyHandedOver(tr, tooLongKey, value))).toBe('key_too_large');
    expect(errorCode(() => setVersionstampedKeyHandedOver(tr, template('q/'), Buffer.alloc(Limits.maxValueBytes + 1)))).toBe('value_too_large');
    expect(errorCode(() => setVersionstampedKeyHandedOver(tr, Buffer.from('short\0\0\0\0'), value))).toBe('client_invalid_operation');
    await tr.commit();
    expect(await stored(engine, '', '\xff')).toEqual([]);
  });
});

describe('setVersionstampedKeyHandedOver on the memory engine', () => {
  it('keeps the value it is given instead of a copy: a range read hands back the same object', async () => {
    const engine = new MemoryEngine();
    const value = Buffer.from('item value');
    await committed(engine, (tr) => setVersionstampedKeyHandedOver(tr, template('q/'), value));
    const [pair] = await engine.createTransaction().getRangeAll('q/', 'q0');
    expect(pair.value).toBe(value);
    await engine.close();
  });
});

/** Whether a transaction with the read conflict `addConflict` adds fails to commit after a write of `key`. */
async function conflictsWith(engine: Engine, key: Buffer, addConflict: (tr: Transaction) => void): Promise<boolean> {
  const tr = engine.createTransaction();
  await tr.getReadVersion();
  addConflict(tr);
  tr.set('other', 'x');
  await committed(engine, (writer) => writer.set(key, 'w'));
  try {
    await tr.commit();
    return false;
  } catch (err) {
    if (isKvError(err) && err.name === 'not_committed') return true;
    throw err;
  }
}

describe.each([
  ['memory', () => new MemoryEngine()],
  ['lmdb', () => new LmdbEngine({ path: join(root, `store-${stores++}`) })],
  ['a transaction that is no engine client (counting wrapper)', () => new CountingEngine(new MemoryEngine())],
] as const)('addReadConflictRangeHandedOver [%s]', (_name, makeEngine) => {
  let engine: Engine;
  beforeEach(() => {
    engine = makeEngine();
  });
  afterEach(() => engine.close());

  const long = (fill: string) => Buffer.alloc(Limits.maxKeyBytes + 5, fill);
  it.each([
    ['a write inside the range', 'b/1', 'b/0', 'b/2', true],
    ['a write of its begin', 'b/0', 'b/0', 'b/2', true],
    ['a write of its end (exclusive)', 'b/2', 'b/0', 'b/2', false],
    ['a write before it', 'a', 'b/0', 'b/2', false],
  ] as const)('conflicts as addReadConflictRange does with %s', async (_case, written, begin, end, expected) => {
    const handedOver = await conflictsWith(engine, Buffer.from(written), (tr) =>
      addReadConflictRangeHandedOver(tr, Buffer.from(begin), Buffer.from(end)),
    );
    const copied = await conflictsWith(engine, Buffer.from(written), (tr) => tr.addReadConflictRange(begin, end));
    expect([handedOver, copied]).toEqual([expected, expected]);
  });

  it('conflicts as addReadConflictRange does over keys longer than a key can be (shortened ends)', async () => {
    const written = Buffer.alloc(engine.maxKeyBytes ?? Limits.maxKeyBytes, 'm');
    expect(await conflictsWith(engine, written, (tr) => addReadConflictRangeHandedOver(tr, long('a'), long('z')))).toBe(true);
    expect(await conflictsWith(engine, Buffer.from('n'), (tr) => addReadConflictRangeHandedOver(tr, long('a'), long('m')))).toBe(false);
  });

  it('does not conflict on what the transaction cleared, as addReadConflictRange does not', async () => {
    const add = (tr: Transaction) => {
      tr.clearRange('b/0', 'b/5');
      addReadConflictRangeHandedOver(tr, Buffer.from('b/'), Buffer.from('b/9'));
    };
    expect(await conflictsWith(engine, Buffer.from('b/1'), add)).toBe(false);
    expect(await conflictsWith(engine, Buffer.from('b/7'), add)).toBe(true);
  });

  it.each([
    ['a begin past the user keyspace', Buffer.from([0xff, 0]), Buffer.from([0xff, 1])],
    ['an end past the user keyspace', Buffer.from('a'), Buffer.from([0xff, 0])],
    ['an inverted range', Buffer.from('b'), Buffer.from('a')],
    ['an empty range', Buffer.from('a'), Buffer.from('a')],
    ['a range ending at the user keyspace end', Buffer.from('a'), Buffer.from([0xff])],
  ])('refuses (or accepts) %s exactly as addReadConflictRange does', async (_case, begin, end) => {
    const tr = engine.createTransaction();
    const expected = errorCode(() => tr.addReadConflictRange(begin, end));
    expect(errorCode(() => addReadConflictRangeHandedOver(tr, begin, end))).toBe(expected);
    await tr.commit();
    const done = engine.createTransaction();
    await done.commit();
    expect(errorCode(() => addReadConflictRangeHandedOver(done, Buffer.from('a'), Buffer.from('b')))).toBe(
      errorCode(() => done.addReadConflictRange('a', 'b')),
    );
  });
});

describe.each([
  ['memory', () => new MemoryEngine()],
  ['lmdb', () => new LmdbEngine({ path: join(root, `store-${stores++}`) })],
  ['a transaction that is no engine client (counting wrapper)', () => new CountingEngine(new MemoryEngine())],
] as const)('clearHandedOver [%s]', (_name, makeEngine) => {
  let engine: Engine;
  beforeEach(() => {
    engine = makeEngine();
  });
  afterEach(() => engine.close());

  it('clears what clear clears, seen by the transaction itself and after commit', async () => {
    await committed(engine, (tr) => {
      tr.set('c/1', 'one');
      tr.set('c/2', 'two');
      tr.set('c/3', 'three');
    });
    const tr = engine.createTransaction();
    const [first] = await tr.getRangeAll('c/', 'c0', { limit: 1 });
    clearHandedOver(tr, first.key);
    tr.clear('c/2');
    expect(await tr.get('c/1')).toBeUndefined();
    expect((await tr.getRangeAll('c/', 'c0')).map((p) => p.key.toString())).toEqual(['c/3']);
    await tr.commit();
    expect(await stored(engine, 'c/', 'c0')).toEqual([['c/3', 'three']]);
  });

  it('refuses what clear refuses, and ignores a key too long to exist, as clear does', async () => {
    const tr = engine.createTransaction();
    const tooLongKey = Buffer.alloc((engine.maxKeyBytes ?? Limits.maxKeyBytes) + 1, 'k');
    expect(errorCode(() => clearHandedOver(tr, Buffer.from([0xff, 1])))).toBe('key_outside_legal_range');
    expect(errorCode(() => tr.clear(Buffer.from([0xff, 1])))).toBe('key_outside_legal_range');
    expect(errorCode(() => clearHandedOver(tr, tooLongKey))).toBeUndefined();
    await tr.commit();
    expect(errorCode(() => clearHandedOver(tr, Buffer.from('k')))).toBe(errorCode(() => tr.clear('k')));
    expect(errorCode(() => tr.clear('k'))).toBe('used_during_commit');
  });
});

describe.each([
  ['memory', () => new MemoryEngine()],
  ['lmdb', () => new LmdbEngine({ path: join(root, `store-${stores++}`) })],
  ['a transaction that is no engine client (counting wrapper)', () => new CountingEngine(new MemoryEngine())],
] as const)('addHandedOver [%s]', (_name, makeEngine) => {
  let engine: Engine;
  beforeEach(() => {
    engine = makeEngine();
  });
  afterEach(() => engine.close());

  const count = async (tr: Transaction, key: string) => readInt64LE(await tr.get(key));

  it('adds as add does, to an absent and a stored value, seen by the transaction itself', async () => {
    const one = int64LE(1);
    await committed(engine, (tr) => tr.add('n/stored', 40));
    const tr = engine.createTransaction();
    addHandedOver(tr, Buffer.from('n/absent'), one);
    addHandedOver(tr, Buffer.from('n/absent'), one);
    addHandedOver(tr, Buffer.from('n/stored'), one);
    tr.add('n/stored', one);
    expect(await count(tr, 'n/absent')).toBe(2n);
    expect(await count(tr, 'n/stored')).toBe(42n);
    await tr.commit();
    const after = engine.createTransaction();
    expect([await count(after, 'n/absent'), await count(after, 'n/stored')]).toEqual([2n, 42n]);
    expect(one).toEqual(int64LE(1));
  });

  it('refuses what add refuses, with its error, and writes nothing', async () => {
    const tr = engine.createTransaction();
    const tooLongKey = Buffer.alloc((engine.maxKeyBytes ?? Limits.maxKeyBytes) + 1, 'k');
    const one = int64LE(1);
    expect(errorCode(() => addHandedOver(tr, Buffer.from([0xff, 1]), one))).toBe('key_outside_legal_range');
    expect(errorCode(() => addHandedOver(tr, tooLongKey, one))).toBe('key_too_large');
    expect(errorCode(() => addHandedOver(tr, Buffer.from('k'), Buffer.alloc(Limits.maxValueBytes + 1)))).toBe('value_too_large');
    await tr.commit();
    expect(await stored(engine, '', '\xff')).toEqual([]);
    expect(errorCode(() => addHandedOver(tr, Buffer.from('k'), one))).toBe(errorCode(() => tr.add('k', one)));
  });

  it('counts toward the transaction size as add does', async () => {
    const handed = engine.createTransaction();
    addHandedOver(handed, Buffer.from('size/key'), int64LE(5));
    clearHandedOver(handed, Buffer.from('size/gone'));
    const copied = engine.createTransaction();
    copied.add('size/key', int64LE(5));
    copied.clear('size/gone');
    expect(await handed.getApproximateSize()).toBe(await copied.getApproximateSize());
  });
});

describe('addHandedOver on the memory engine', () => {
  it('keeps the key it is given, but never stores the operand itself, which callers may share', async () => {
    const engine = new MemoryEngine();
    const key = Buffer.from('n/count');
    const shared = int64LE(1);
    await committed(engine, (tr) => addHandedOver(tr, key, shared));
    const [pair] = await engine.createTransaction().getRangeAll('n/', 'n0');
    expect(pair.key).toBe(key);
    expect(pair.value).not.toBe(shared);
    expect(pair.value).toEqual(shared);
    await engine.close();
  });
});

describe.each([
  ['memory', () => new MemoryEngine()],
  ['lmdb', () => new LmdbEngine({ path: join(root, `store-${stores++}`) })],
  ['a transaction that is no engine client (counting wrapper)', () => new CountingEngine(new MemoryEngine())],
] as const)('setVersionstampedValueHandedOver [%s]', (_name, makeEngine) => {
  let engine: Engine;
  beforeEach(() => {
    engine = makeEngine();
  });
  afterEach(() => engine.close());

  it('writes what setVersionstampedValue writes: a stamp alone, and one inside other bytes', async () => {
    const alone = prepareVersionstampTemplate(template(''));
    const inside = prepareVersionstampTemplate(template('v:', ':end'));
    const tr = engine.createTransaction();
    setVersionstampedValueHandedOver(tr, Buffer.from('s/1'), alone);
    setVersionstampedValueHandedOver(tr, Buffer.from('s/2'), alone);
    setVersionstampedValueHandedOver(tr, Buffer.from('s/3'), inside);
    tr.setVersionstampedValue('s/4', template('v:', ':end'));
    // Unreadable until commit, as a versionstamped value is.
    await expect(tr.get('s/1')).rejects.toMatchObject({ name: 'accessed_unreadable' });
    const stamp = tr.getVersionstamp();
    await tr.commit();
    const hex = (await stamp).toString('hex');
    const pairs = await engine.createTransaction().getRangeAll('s/', 's0');
    expect(pairs.map(({ key, value }) => [key.toString(), value.toString('hex')])).toEqual([
      ['s/1', hex],
      ['s/2', hex],
      ['s/3', Buffer.concat([Buffer.from('v:'), await stamp, Buffer.from(':end')]).toString('hex')],
      ['s/4', Buffer.concat([Buffer.from('v:'), await stamp, Buffer.from(':end')]).toString('hex')],
    ]);
  });

  it('refuses the keys setVersionstampedValue refuses, with its error, and writes nothing', async () => {
    const prepared = prepareVersionstampTemplate(template(''));
    const tr = engine.createTransaction();
    const tooLongKey = Buffer.alloc((engine.maxKeyBytes ?? Limits.maxKeyBytes) + 1, 'k');
    expect(errorCode(() => setVersionstampedValueHandedOver(tr, Buffer.from([0xff, 1]), prepared))).toBe('key_outside_legal_range');
    expect(errorCode(() => setVersionstampedValueHandedOver(tr, tooLongKey, prepared))).toBe('key_too_large');
    await tr.commit();
    expect(await stored(engine, '', '\xff')).toEqual([]);
  });
});

describe('prepareVersionstampTemplate', () => {
  it('refuses what setVersionstampedValue refuses: no offset suffix, or a placeholder that does not fit', () => {
    expect(errorCode(() => prepareVersionstampTemplate(Buffer.from([1, 2])))).toBe('client_invalid_operation');
    const offset = Buffer.alloc(4);
    offset.writeUInt32LE(3, 0);
    expect(errorCode(() => prepareVersionstampTemplate(Buffer.concat([Buffer.alloc(10), offset])))).toBe('client_invalid_operation');
  });
});

describe.each([
  ['memory', () => new MemoryEngine()],
  ['lmdb', () => new LmdbEngine({ path: join(root, `store-${stores++}`) })],
  ['a transaction that is no engine client (counting wrapper)', () => new CountingEngine(new MemoryEngine())],
] as const)('getRangeAllHandedOver [%s]', (_name, makeEngine) => {
  let engine: Engine;
  beforeEach(async () => {
    engine = makeEngine();
    await committed(engine, (tr) => ['r/1', 'r/2', 'r/3', 'r/4'].forEach((k) => tr.set(k, k.toUpperCase())));
  });
  afterEach(() => engine.close());

  it.each([
    ['the whole range', {}],
    ['a limit', { limit: 2 }],
    ['a limit, in reverse', { limit: 1, reverse: true }],
  ])('reads what getRangeAll reads, with %s, own writes included', async (_case, options) => {
    const tr = engine.createTransaction();
    tr.set('r/25', 'mine');
    tr.clear('r/3');
    const handedOver = await getRangeAllHandedOver(tr, Buffer.from('r/'), Buffer.from('r0'), options);
    const plain = await tr.getRangeAll('r/', 'r0', options);
    expect(handedOver.map(({ key, value }) => `${key.toString()}=${value.toString()}`)).toEqual(
      plain.map(({ key, value }) => `${key.toString()}=${value.toString()}`),
    );
  });

  it.each([
    ['a write inside what it read', 'r/2', {}, true],
    ['a write past the last key a limited read returned', 'r/4', { limit: 2 }, false],
    ['a write before the range', 'q', {}, false],
  ] as const)('conflicts as getRangeAll does with %s', async (_case, written, options, expected) => {
    const handedOver = await conflictsWith(engine, Buffer.from(written), (tr) => {
      void getRangeAllHandedOver(tr, Buffer.from('r/'), Buffer.from('r0'), options);
    });
    const plain = await conflictsWith(engine, Buffer.from(written), (tr) => {
      void tr.getRangeAll('r/', 'r0', options);
    });
    expect([handedOver, plain]).toEqual([expected, expected]);
  });

  it('refuses a bound past the user keyspace as getRangeAll does', async () => {
    const tr = engine.createTransaction();
    await expect(getRangeAllHandedOver(tr, Buffer.from('r/'), Buffer.from([0xff, 0]))).rejects.toMatchObject({ name: 'key_outside_legal_range' });
    await expect(tr.getRangeAll('r/', Buffer.from([0xff, 0]))).rejects.toMatchObject({ name: 'key_outside_legal_range' });
  });
});

describe('getRangeAllHandedOver on the memory engine', () => {
  it('keeps the end bound it is given in its read conflict instead of a copy', async () => {
    // What the caller promises not to do shows that the bound is kept: moving the end past a later
    // write makes the read conflict with it.
    const engine = new MemoryEngine();
    const probe = async (handOver: boolean): Promise<boolean> =>
      conflictsWith(engine, Buffer.from('t/5'), (tr) => {
        const end = Buffer.from('t/3');
        void (handOver ? getRangeAllHandedOver(tr, Buffer.from('t/'), end) : tr.getRangeAll(Buffer.from('t/'), end));
        end.write('t/9');
      });
    expect([await probe(true), await probe(false)]).toEqual([true, false]);
    await engine.close();
  });
});
