import { isDocumentError } from '../../src/document/errors';
import { docIdElement, docIdOf, generateId } from '../../src/document/keys/ids';
import {
  childKey,
  decodePosition,
  decodeStringElement,
  DocumentKeys,
  documentPrefix,
  elementEnd,
  isIntegerElement,
  Layout,
  META_BYTES,
  META_EXPIRY,
  META_KIND,
  META_LENGTH,
  META_PUSHED,
  META_RATE_LIMIT,
  META_RATE_SLOTS,
  META_SIZE,
  META_TOKENS,
  META_VERSION,
  metaKey,
  metaNameOf,
  subtreeEnd,
} from '../../src/document/keys/layout';
import { encodeLeb128 } from '../../src/document/keys/leb128';
import { casOf } from '../../src/document/keys/version';
import { pack, Uuid } from '../../src/tuple';
import { Random, testSeed } from '../support/random';

const within = (key: Buffer, begin: Buffer, end: Buffer) => Buffer.compare(begin, key) <= 0 && Buffer.compare(key, end) < 0;

describe('Layout', () => {
  it('puts system data under <prefix> 0x00 and collection c under <prefix> 0x01 <leb128(c)>', () => {
    const layout = new Layout(['doclayer']);
    expect(layout.prefix).toEqual(pack(['doclayer']));
    expect(layout.system.pack(['x'])).toEqual(Buffer.concat([pack(['doclayer']), Buffer.of(0x00), pack(['x'])]));
    expect(layout.collectionPrefix(0)).toEqual(Buffer.concat([pack(['doclayer']), Buffer.of(0x01, 0x00)]));
    expect(layout.collectionPrefix(300)).toEqual(Buffer.concat([pack(['doclayer']), Buffer.of(0x01), encodeLeb128(300)]));
  });

  it('takes a raw byte prefix as it is', () => {
    expect(new Layout(Buffer.from('app/')).prefix).toEqual(Buffer.from('app/'));
  });
});

describe('DocumentKeys', () => {
  const collection = Buffer.concat([pack(['doclayer']), Buffer.of(0x01, 0x08)]);

  it('lays out metadata at <docPrefix> 0x00 <name> and data at <docPrefix> 0x01 <tuple(path)>', () => {
    const keys = new DocumentKeys(collection, 'doc');
    const docPrefix = Buffer.concat([collection, pack(['doc'])]);
    expect(keys.prefix).toEqual(docPrefix);
    expect(keys.version).toEqual(Buffer.concat([docPrefix, Buffer.of(0x00, 0x76)]));
    expect(keys.root).toEqual(Buffer.concat([docPrefix, Buffer.of(0x01)]));
    expect(keys.dataKey(['a', 0, 'b'])).toEqual(Buffer.concat([docPrefix, Buffer.of(0x01), pack(['a', 0, 'b'])]));
    expect(keys.dataKey([])).toEqual(keys.root);
    expect(keys.begin).toEqual(Buffer.concat([docPrefix, Buffer.of(0x00)]));
    expect(keys.end).toEqual(Buffer.concat([docPrefix, Buffer.of(0x02)]));
  });

  it('packs the id after the collection prefix as packPrefixed does, for every kind of id', () => {
    const ascii = Array.from({ length: 127 }, (_, i) => String.fromCharCode(i + 1)).join('');
    const ids = [
      'doc-7',
      'a',
      ascii.slice(0, 64),
      'x'.repeat(64),
      'x'.repeat(65),
      'a\0b',
      'caf\u00e9',
      '\u{1f600}',
      7,
      -300,
      2n ** 70n,
      new Uuid('0f0e0d0c-0b0a-0908-0706-050403020100'),
    ];
    for (const id of ids) {
      expect(documentPrefix(collection, id)).toEqual(Buffer.concat([collection, pack([id])]));
      expect(new DocumentKeys(collection, id).prefix).toEqual(Buffer.concat([collection, pack([id])]));
    }
  });

  it('keeps an object key "1" and an array index 1 apart', () => {
    const keys = new DocumentKeys(collection, 'doc');
    expect(keys.dataKey(['1'])).not.toEqual(keys.dataKey([1]));
  });

  it('a document range holds its own keys and no key of a document whose id extends its id', () => {
    const short = new DocumentKeys(collection, 'ab');
    const long = new DocumentKeys(collection, 'ab\0c');
    // The tuple packing of "ab" is a prefix of that of "ab\0c": only the section byte tells them apart.
    expect(long.prefix.subarray(0, short.prefix.length)).toEqual(short.prefix);
    for (const key of [long.version, long.root, long.dataKey(['x'])]) expect(within(key, short.begin, short.end)).toBe(false);
    for (const key of [short.version, short.root, short.dataKey(['x'])]) expect(within(key, short.begin, short.end)).toBe(true);
  });

  it('a subtree range holds the node and its descendants, not a sibling whose key extends its key', () => {
    const keys = new DocumentKeys(collection, 'doc');
    const node = keys.dataKey(['ab']);
    const end = subtreeEnd(node);
    for (const path of [['ab'], ['ab', 'x'], ['ab', 0], ['ab', -5, 'y'], ['ab', '']]) {
      expect(within(keys.dataKey(path), node, end)).toBe(true);
    }
    expect(within(Buffer.concat([node, pack([null, 3])]), node, end)).toBe(true);
    for (const path of [['ab\0c'], ['ab\0'], ['abc'], ['a'], ['b']]) expect(within(keys.dataKey(path), node, end)).toBe(false);
  });

  it('allocates each metadata name once, as the stored bytes v k x s l b p t r w, with the expiry last', () => {
    const names = [
      META_VERSION,
      META_KIND,
      META_EXPIRY,
      META_SIZE,
      META_LENGTH,
      META_BYTES,
      META_PUSHED,
      META_TOKENS,
      META_RATE_LIMIT,
      META_RATE_SLOTS,
    ];
    expect(Buffer.from(names).toString('latin1')).toBe('vkxslbptrw');
    expect(Math.max(...names)).toBe(META_EXPIRY);
  });

  it('builds metadata keys as <docPrefix> 0x00 <name> and recognises exactly those', () => {
    const keys = new DocumentKeys(collection, 'doc');
    const size = metaKey(keys.prefix, META_SIZE);
    expect(size).toEqual(Buffer.concat([keys.prefix, Buffer.of(0x00, 0x73)]));
    expect(keys.meta(META_SIZE)).toEqual(size);
    expect(metaNameOf(size, keys.prefix.length)).toBe(META_SIZE);
    expect(metaNameOf(keys.root, keys.prefix.length)).toBe(-1);
    expect(metaNameOf(Buffer.concat([keys.meta(META_TOKENS), pack([1])]), keys.prefix.length)).toBe(-1);
  });

  it('childKey extends a key by one element', () => {
    const keys = new DocumentKeys(collection, 'doc');
    expect(childKey(keys.dataKey(['a']), 3)).toEqual(keys.dataKey(['a', 3]));
    expect(childKey(keys.root, 'k')).toEqual(keys.dataKey(['k']));
  });
});

describe('path elements in keys', () => {
  it('elementEnd finds the end of string, integer and chunk elements, and -1 for anything else', () => {
    const strings = ['', 'a', 'a\0b', '\0\0', 'é\u{1f600}'];
    for (const s of strings) {
      const key = Buffer.concat([Buffer.from('p'), pack([s]), pack(['next'])]);
      const end = elementEnd(key, 1);
      expect(end).toBe(1 + pack([s]).length);
      expect(decodeStringElement(key, 1, end)).toBe(s);
    }
    for (const n of [0, 1, -1, 255, 256, -256, 2 ** 40, -(2 ** 40), Number.MAX_SAFE_INTEGER]) {
      const key = Buffer.concat([Buffer.from('p'), pack([n])]);
      expect(elementEnd(key, 1)).toBe(key.length);
      expect(isIntegerElement(key, 1)).toBe(true);
      expect(decodePosition(key, 1)).toBe(n);
    }
    expect(elementEnd(pack([null]), 0)).toBe(1);
    expect(elementEnd(pack([true]), 0)).toBe(-1);
    expect(elementEnd(Buffer.of(0x02, 0x61), 0)).toBe(-1);
    expect(elementEnd(Buffer.of(0x16, 0x01), 0)).toBe(-1);
  });

  it('decodes any string element exactly', () => {
    const random = new Random(testSeed(201));
    const pool = [0x00, 0x01, 0x7f, 0x80, 0xff, 0x7ff, 0x800, 0xfffd, 0xffff, 0x10000, 0x10ffff, 0x61, 0x2e];
    for (let run = 0; run < 500; run++) {
      const codePoints = Array.from({ length: random.int(30) }, () => (random.chance(0.5) ? random.pick(pool) : random.int(0x110000))).filter(
        (c) => c < 0xd800 || c > 0xdfff,
      );
      const s = String.fromCodePoint(...codePoints);
      const key = pack([s]);
      expect(decodeStringElement(key, 0, elementEnd(key, 0))).toBe(s);
    }
  });
});

describe('document ids', () => {
  const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it('generates UUIDv7 strings with the current time and increasing within a millisecond', () => {
    const before = Date.now();
    const ids = Array.from({ length: 5000 }, generateId);
    const after = Date.now();
    expect(ids.filter((id) => !UUID_V7.test(id))).toEqual([]);
    expect(ids.filter((id, i) => i > 0 && id <= ids[i - 1])).toEqual([]);
    const ms = parseInt(ids[0].replace(/-/g, '').slice(0, 12), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(after + 5000 / 2048);
  });

  it('stores a canonical lowercase UUID string as a tuple UUID and reads it back as the same string', () => {
    const id = generateId();
    const element = docIdElement(id);
    expect(element).toBeInstanceOf(Uuid);
    expect(pack([element])).toHaveLength(17);
    expect(docIdOf(element)).toBe(id);
  });

  it('stores every other string as a tuple string, so the mapping is exact', () => {
    for (const id of ['0190A7B2-3C4D-7E5F-8A6B-7C8D9E0F1A2B', '0190a7b23c4d7e5f8a6b7c8d9e0f1a2b', 'user::1', ' ']) {
      expect(docIdElement(id)).toBe(id);
      expect(docIdOf(docIdElement(id))).toBe(id);
    }
  });

  it('stores integers as tuple integers (-0 as 0)', () => {
    expect(docIdElement(42)).toBe(42);
    expect(Object.is(docIdElement(-0), 0)).toBe(true);
    expect(docIdElement(2n ** 70n)).toBe(2n ** 70n);
  });

  it('rejects other ids with INVALID_ARGUMENT', () => {
    for (const id of ['', 1.5, NaN, Infinity, 2 ** 60, '\ud800', null, undefined, {}, [], true]) {
      let code: string | undefined;
      try {
        docIdElement(id);
      } catch (err) {
        code = isDocumentError(err) ? err.code : 'other';
      }
      expect(code).toBe('INVALID_ARGUMENT');
    }
  });
});

describe('casOf', () => {
  const seed = testSeed();

  it(`spells a version key's value in lowercase hex, byte by byte, whatever its length (seed ${seed})`, () => {
    const random = new Random(seed);
    for (let round = 0; round < 200; round++) {
      const length = round % 4 === 0 ? random.int(16) : 10;
      const bytes = Buffer.from(Array.from({ length }, () => random.int(256)));
      expect(casOf(bytes)).toBe(bytes.toString('hex'));
      expect(casOf(new Uint8Array(bytes))).toBe(bytes.toString('hex'));
    }
  });
});
