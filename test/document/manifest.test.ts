import fc from 'fast-check';
import { isDocumentError, type DocumentError } from '../../src/document/errors';
import {
  addCollection,
  addScope,
  compareUids,
  defaultManifest,
  diffManifests,
  dropCollection,
  dropScope,
  isSystemName,
  isUserName,
  isValidName,
  ManifestLookupError,
  MAX_NAME_BYTES,
  parseCollectionPath,
  parseManifest,
  parseScopePath,
  resolveCollection,
  resolveScope,
  validateManifestUpdate,
  type Manifest,
} from '../../src/document/manifest/manifest';

function thrown(fn: () => unknown): DocumentError {
  try {
    fn();
  } catch (err) {
    if (isDocumentError(err)) return err;
    throw err;
  }
  throw new Error('expected a DocumentError, nothing was thrown');
}

type JsonCollection = { name: unknown; uid: unknown; maxTTL?: unknown };
type JsonScope = { name: unknown; uid: unknown; collections?: unknown };

/** A manifest's JSON value: the `_default` scope (with `_default._default`) and `scopes` after it. */
function json(uid: unknown, scopes: JsonScope[] = [], defaultCollections: JsonCollection[] = []): Record<string, unknown> {
  return {
    uid,
    scopes: [{ name: '_default', uid: '0', collections: [{ name: '_default', uid: '0' }, ...defaultCollections] }, ...scopes],
  };
}

/** The INVALID_ARGUMENT that parsing `value` throws, checked to name `field`. */
function invalidAt(value: unknown, field: string): DocumentError {
  const err = thrown(() => parseManifest(value));
  expect(err.code).toBe('INVALID_ARGUMENT');
  expect(err.path).toBe(field);
  expect(err.message).toContain(`manifest field ${field}:`);
  return err;
}

const APP: Manifest = parseManifest(
  json('1f', [
    {
      name: 'app',
      uid: '8',
      collections: [
        { name: 'users', uid: '9', maxTTL: 3600 },
        { name: 'orders', uid: 'a' },
      ],
    },
    { name: 'empty', uid: '9', collections: [] },
  ]),
);

describe('parseManifest', () => {
  it("accepts Couchbase's documented example and keeps its content", () => {
    const text = JSON.stringify({
      uid: 'a2',
      scopes: [
        {
          name: '_default',
          uid: '0',
          collections: [
            { name: '_default', uid: '0' },
            { name: 'brewery', uid: '1c', maxTTL: 1 },
          ],
        },
      ],
    });
    expect(parseManifest(text)).toEqual(JSON.parse(text));
  });

  it('takes JSON text or the value it parses to', () => {
    const value = json('5', [{ name: 'app', uid: '8', collections: [] }]);
    expect(parseManifest(JSON.stringify(value))).toEqual(parseManifest(value));
  });

  it('parses uids case-insensitively and outputs them lowercase without leading zeros', () => {
    const manifest = parseManifest(json('00AbC', [{ name: 'app', uid: '0000000F', collections: [{ name: 'c', uid: 'FfFf' }] }]));
    expect(manifest.uid).toBe('abc');
    expect(manifest.scopes[1].uid).toBe('f');
    expect(manifest.scopes[1].collections[0].uid).toBe('ffff');
    expect(JSON.stringify(manifest)).toBe(
      '{"uid":"abc","scopes":[{"name":"_default","uid":"0","collections":[{"name":"_default","uid":"0"}]},' +
        '{"name":"app","uid":"f","collections":[{"name":"c","uid":"ffff"}]}]}',
    );
  });

  it("treats a scope's collections as optional (an empty array), as Couchbase documents", () => {
    const manifest = parseManifest(json('2', [{ name: 'app', uid: '8' }]));
    expect(manifest.scopes[1].collections).toEqual([]);
  });

  it('ignores unknown keys and leaves them out of its result', () => {
    const value: Record<string, unknown> = { ...json('2'), extra: true };
    (value.scopes as Record<string, unknown>[])[0].limits = { x: 1 };
    expect(parseManifest(value)).toEqual(json('2'));
  });

  it('returns a deeply frozen manifest', () => {
    expect(Object.isFrozen(APP)).toBe(true);
    expect(Object.isFrozen(APP.scopes)).toBe(true);
    expect(Object.isFrozen(APP.scopes[1].collections[0])).toBe(true);
  });

  describe('shape: invalid JSON, missing keys and wrong types are INVALID_ARGUMENT naming the field', () => {
    it('rejects text that is not JSON', () => {
      const err = thrown(() => parseManifest('{"uid": "1", '));
      expect(err.code).toBe('INVALID_ARGUMENT');
      expect(err.message).toMatch(/not valid JSON/);
    });

    it.each([
      ['an array', []],
      ['null', null],
      ['a number', 3],
    ])('rejects a manifest that is %s', (_, value) => {
      invalidAt(value, 'manifest');
    });

    it('rejects a missing or non-string uid', () => {
      expect(invalidAt({ scopes: json('1').scopes }, 'uid').message).toMatch(/missing/);
      expect(invalidAt({ ...json('1'), uid: 12 }, 'uid').message).toMatch(/expected a base-16 string, got 12/);
    });

    it('rejects missing or non-array scopes', () => {
      invalidAt({ uid: '1' }, 'scopes');
      invalidAt({ uid: '1', scopes: {} }, 'scopes');
    });

    it('rejects a scope that is not an object', () => {
      invalidAt({ uid: '1', scopes: [...(json('1').scopes as unknown[]), 'app'] }, 'scopes[1]');
    });

    it("rejects a scope's missing or wrongly typed name and uid", () => {
      invalidAt(json('1', [{ uid: '8' } as JsonScope]), 'scopes[1].name');
      invalidAt(json('1', [{ name: 7, uid: '8' }]), 'scopes[1].name');
      invalidAt(json('1', [{ name: 'app' } as JsonScope]), 'scopes[1].uid');
      invalidAt(json('1', [{ name: 'app', uid: 8 }]), 'scopes[1].uid');
    });

    it("rejects a scope's collections that are not an array, or a collection that is not an object", () => {
      invalidAt(json('1', [{ name: 'app', uid: '8', collections: {} }]), 'scopes[1].collections');
      invalidAt(json('1', [{ name: 'app', uid: '8', collections: [null] }]), 'scopes[1].collections[0]');
    });

    it("rejects a collection's missing or wrongly typed name and uid", () => {
      const scope = (c: unknown): JsonScope => ({ name: 'app', uid: '8', collections: [c] });
      invalidAt(json('1', [scope({ uid: '9' })]), 'scopes[1].collections[0].name');
      invalidAt(json('1', [scope({ name: ['c'], uid: '9' })]), 'scopes[1].collections[0].name');
      invalidAt(json('1', [scope({ name: 'c' })]), 'scopes[1].collections[0].uid');
      invalidAt(json('1', [scope({ name: 'c', uid: 9 })]), 'scopes[1].collections[0].uid');
    });
  });

  describe('uids: base-16 strings without 0x, within their width', () => {
    it.each(['', '0x1f', '1g', ' 1', '-1', '1.0'])('rejects the manifest uid %j', (uid) => {
      invalidAt(json(uid), 'uid');
    });

    it('accepts a manifest uid of up to 16 digits (u64), rejects 17', () => {
      expect(parseManifest(json('ffffffffffffffff')).uid).toBe('ffffffffffffffff');
      invalidAt(json('00000000000000001'), 'uid');
    });

    it('accepts a collection or scope id of up to 8 digits (u32), rejects 9', () => {
      const scope = { name: 'app', uid: 'ffffffff', collections: [{ name: 'c', uid: 'FFFFFFFF' }] };
      const manifest = parseManifest(json('1', [scope]));
      expect(resolveCollection(manifest, 'app.c').collectionId).toBe(0xffffffff);
      invalidAt(json('1', [{ name: 'app', uid: '100000000' }]), 'scopes[1].uid');
      invalidAt(json('1', [], [{ name: 'c', uid: '100000000' }]), 'scopes[0].collections[1].uid');
    });
  });

  describe('names', () => {
    const withCollection = (name: unknown) => json('1', [], [{ name, uid: '8' }]);
    const withScope = (name: unknown) => json('1', [{ name, uid: '8' }]);
    const COLLECTION_NAME = 'scopes[0].collections[1].name';

    it(`accepts names of 1 to ${MAX_NAME_BYTES} bytes and rejects empty and longer ones`, () => {
      expect(() => parseManifest(withCollection('a'))).not.toThrow();
      expect(() => parseManifest(withCollection('a'.repeat(251)))).not.toThrow();
      expect(() => parseManifest(withScope('s'.repeat(251)))).not.toThrow();
      invalidAt(withCollection(''), COLLECTION_NAME);
      invalidAt(withCollection('a'.repeat(252)), COLLECTION_NAME);
      invalidAt(withScope('s'.repeat(252)), 'scopes[1].name');
    });

    it('accepts user names made of A-Z a-z 0-9 _ - %', () => {
      for (const name of ['Users', 'users_2024', 'a-b', 'a%b', '0', '-x', 'A_%-9']) {
        expect(parseManifest(withCollection(name)).scopes[0].collections[1].name).toBe(name);
      }
    });

    it.each(['a.b', 'a b', 'a/b', 'a$b', 'é', 'a\u0000'])('rejects the user name %j', (name) => {
      invalidAt(withCollection(name), COLLECTION_NAME);
      invalidAt(withScope(name), 'scopes[1].name');
    });

    it('rejects a user name starting with %', () => {
      expect(invalidAt(withCollection('%a'), COLLECTION_NAME).message).toMatch(/may not start with %/);
    });

    it('accepts system names, which start with _ and may also hold $', () => {
      for (const name of ['_system', '_a$b', '_', '_$']) {
        expect(parseManifest(withCollection(name)).scopes[0].collections[1].name).toBe(name);
      }
      invalidAt(withCollection('_a.b'), COLLECTION_NAME);
    });

    it('rejects $-prefixed names: they are reserved', () => {
      expect(invalidAt(withCollection('$a'), COLLECTION_NAME).message).toMatch(/reserved/);
      invalidAt(withScope('$scope'), 'scopes[1].name');
    });
  });

  describe('ids', () => {
    it.each([1, 2, 3, 4, 5, 6, 7])('rejects the reserved id %i for a collection and for a scope', (id) => {
      const collection = invalidAt(json('1', [], [{ name: 'c', uid: String(id) }]), 'scopes[0].collections[1].uid');
      expect(collection.message).toMatch(/reserved/);
      invalidAt(json('1', [{ name: 'app', uid: String(id) }]), 'scopes[1].uid');
    });

    it('accepts 8, the first id after the reserved ones', () => {
      expect(resolveCollection(parseManifest(json('1', [], [{ name: 'c', uid: '8' }])), '.c').collectionId).toBe(8);
    });

    it('keeps id 0 for the _default scope and the _default collection only', () => {
      invalidAt(json('1', [{ name: 'app', uid: '0' }]), 'scopes[1].uid');
      invalidAt({ uid: '1', scopes: [{ name: '_default', uid: '8', collections: [] }] }, 'scopes[0].uid');
      invalidAt(json('1', [], [{ name: 'c', uid: '0' }]), 'scopes[0].collections[1].uid');
      invalidAt(json('1', [], [{ name: '_default', uid: '8' }]), 'scopes[0].collections[1].uid');
    });

    it('rejects the _default collection outside the _default scope', () => {
      const app = { name: 'app', uid: '8', collections: [{ name: '_default', uid: '0' }] };
      const value = { uid: '1', scopes: [{ name: '_default', uid: '0' }, app] };
      expect(invalidAt(value, 'scopes[1].collections[0].uid').message).toMatch(/_default scope/);
    });

    it('requires collection ids to be unique across all scopes', () => {
      const value = json('1', [{ name: 'app', uid: '8', collections: [{ name: 'c', uid: '9' }] }], [{ name: 'd', uid: '9' }]);
      expect(invalidAt(value, 'scopes[1].collections[0].uid').message).toMatch(/duplicate collection uid "9"/);
    });

    it('requires scope ids to be unique', () => {
      invalidAt(
        json('1', [
          { name: 'a', uid: '8' },
          { name: 'b', uid: '8' },
        ]),
        'scopes[2].uid',
      );
    });
  });

  describe('uniqueness and required content', () => {
    it('requires scope names to be unique', () => {
      const err = invalidAt(
        json('1', [
          { name: 'a', uid: '8' },
          { name: 'a', uid: '9' },
        ]),
        'scopes[2].name',
      );
      expect(err.message).toMatch(/duplicate scope name/);
    });

    it('requires collection names to be unique within a scope, not across scopes', () => {
      invalidAt(
        json(
          '1',
          [],
          [
            { name: 'c', uid: '8' },
            { name: 'c', uid: '9' },
          ],
        ),
        'scopes[0].collections[2].name',
      );
      const app = { name: 'app', uid: '8', collections: [{ name: 'c', uid: '9' }] };
      expect(() => parseManifest(json('1', [app], [{ name: 'c', uid: '8' }]))).not.toThrow();
    });

    it('requires the _default scope', () => {
      expect(invalidAt({ uid: '1', scopes: [{ name: 'app', uid: '8' }] }, 'scopes').message).toMatch(/_default scope is missing/);
      invalidAt({ uid: '1', scopes: [] }, 'scopes');
    });

    it('does not require the _default collection (it may have been dropped)', () => {
      const manifest = parseManifest({ uid: '1', scopes: [{ name: '_default', uid: '0', collections: [] }] });
      expect(thrown(() => resolveCollection(manifest, '.')).code).toBe('UNKNOWN_COLLECTION');
    });

    it('accepts uid 0 only for the epoch manifest: the _default scope holding only the _default collection', () => {
      expect(parseManifest(json('0'))).toEqual(defaultManifest());
      invalidAt(json('0', [], [{ name: 'c', uid: '8' }]), 'uid');
      invalidAt(json('0', [{ name: 'app', uid: '8' }]), 'uid');
      invalidAt({ uid: '0', scopes: [{ name: '_default', uid: '0', collections: [] }] }, 'uid');
    });
  });

  describe('maxTTL', () => {
    const withTTL = (maxTTL: unknown) => json('1', [], [{ name: 'c', uid: '8', maxTTL }]);

    it('accepts an integer number of seconds from 0 to 2^32-1', () => {
      for (const ttl of [0, 1, 0xffffffff]) {
        expect(parseManifest(withTTL(ttl)).scopes[0].collections[1].maxTTL).toBe(ttl);
      }
    });

    it.each([-1, 1.5, 2 ** 32, '10', null, true])('rejects %j', (ttl) => {
      invalidAt(withTTL(ttl), 'scopes[0].collections[1].maxTTL');
    });
  });
});

describe('defaultManifest', () => {
  it('is uid 0 with the _default scope (uid 0) holding only the _default collection (uid 0)', () => {
    expect(defaultManifest()).toEqual({
      uid: '0',
      scopes: [{ name: '_default', uid: '0', collections: [{ name: '_default', uid: '0' }] }],
    });
    expect(Object.isFrozen(defaultManifest())).toBe(true);
  });
});

describe('name helpers', () => {
  it('tell user names, system names and invalid names apart', () => {
    expect([isUserName('users'), isSystemName('users'), isValidName('users')]).toEqual([true, false, true]);
    expect([isUserName('_system'), isSystemName('_system'), isValidName('_system')]).toEqual([false, true, true]);
    expect([isUserName('$x'), isSystemName('$x'), isValidName('$x')]).toEqual([false, false, false]);
    expect([isUserName('_a$'), isSystemName('_a$')]).toEqual([false, true]);
    expect([isUserName('a$'), isValidName('a$')]).toEqual([false, false]);
    expect(isValidName(3)).toBe(false);
  });
});

describe('parseCollectionPath', () => {
  it('splits scope.collection', () => {
    expect(parseCollectionPath('app.users')).toEqual({ scope: 'app', collection: 'users' });
  });

  it('reads an empty part as _default: .c1 is _default.c1, . and _default._default are the default collection', () => {
    expect(parseCollectionPath('.c1')).toEqual({ scope: '_default', collection: 'c1' });
    expect(parseCollectionPath('.')).toEqual({ scope: '_default', collection: '_default' });
    expect(parseCollectionPath('_default._default')).toEqual({ scope: '_default', collection: '_default' });
    expect(parseCollectionPath('app.')).toEqual({ scope: 'app', collection: '_default' });
  });

  it.each(['users', '', 'a.b.c', '..', 'app.users.'])('rejects %j, which does not have exactly one dot', (path) => {
    expect(thrown(() => parseCollectionPath(path)).code).toBe('INVALID_ARGUMENT');
  });

  it.each(['a b.c', '$x.c', 'app.%c', '_default.$x'])('rejects %j, which holds an invalid name', (path) => {
    expect(thrown(() => parseCollectionPath(path)).code).toBe('INVALID_ARGUMENT');
  });

  it('rejects a name over 251 bytes', () => {
    expect(() => parseCollectionPath(`app.${'c'.repeat(251)}`)).not.toThrow();
    expect(thrown(() => parseCollectionPath(`app.${'c'.repeat(252)}`)).code).toBe('INVALID_ARGUMENT');
  });

  it('rejects a path that is not a string', () => {
    expect(thrown(() => parseCollectionPath(undefined as unknown as string)).code).toBe('INVALID_ARGUMENT');
  });
});

describe('parseScopePath', () => {
  it('reads a scope name, and the empty path as _default', () => {
    expect(parseScopePath('app')).toBe('app');
    expect(parseScopePath('')).toBe('_default');
    expect(parseScopePath('_default')).toBe('_default');
  });

  it('ignores a .collection part, valid or not', () => {
    expect(parseScopePath('app.users')).toBe('app');
    expect(parseScopePath('app.$bad')).toBe('app');
    expect(parseScopePath('.c1')).toBe('_default');
  });

  it('rejects several dots and invalid scope names', () => {
    expect(thrown(() => parseScopePath('a.b.c')).code).toBe('INVALID_ARGUMENT');
    expect(thrown(() => parseScopePath('$a')).code).toBe('INVALID_ARGUMENT');
    expect(thrown(() => parseScopePath('a b.c')).code).toBe('INVALID_ARGUMENT');
  });
});

describe('resolveCollection', () => {
  it('returns the manifest uid and the collection id, and the maxTTL when there is one', () => {
    expect(resolveCollection(APP, 'app.users')).toEqual({ manifestUid: '1f', collectionId: 9, maxTTL: 3600 });
    expect(resolveCollection(APP, 'app.orders')).toEqual({ manifestUid: '1f', collectionId: 10 });
  });

  it('resolves the default collection from . and _default._default', () => {
    expect(resolveCollection(APP, '.')).toEqual({ manifestUid: '1f', collectionId: 0 });
    expect(resolveCollection(APP, '_default._default')).toEqual({ manifestUid: '1f', collectionId: 0 });
  });

  it('takes the path as parts too', () => {
    expect(resolveCollection(APP, { scope: 'app', collection: 'orders' }).collectionId).toBe(10);
    expect(thrown(() => resolveCollection(APP, { scope: 'app', collection: '$x' })).code).toBe('INVALID_ARGUMENT');
  });

  it('throws UNKNOWN_COLLECTION carrying the uid of the manifest it was judged against', () => {
    const err = thrown(() => resolveCollection(APP, 'app.nope'));
    expect(err).toBeInstanceOf(ManifestLookupError);
    expect(err.code).toBe('UNKNOWN_COLLECTION');
    expect((err as ManifestLookupError).manifestUid).toBe('1f');
    expect(err.message).toContain('manifest uid 1f');
  });

  it('throws UNKNOWN_SCOPE, with the manifest uid, for a missing scope', () => {
    const err = thrown(() => resolveCollection(APP, 'nope.users'));
    expect(err.code).toBe('UNKNOWN_SCOPE');
    expect((err as ManifestLookupError).manifestUid).toBe('1f');
  });

  it('throws INVALID_ARGUMENT for an invalid path before looking', () => {
    expect(thrown(() => resolveCollection(APP, 'users')).code).toBe('INVALID_ARGUMENT');
  });
});

describe('resolveScope', () => {
  it('returns the manifest uid and the scope id', () => {
    expect(resolveScope(APP, 'app')).toEqual({ manifestUid: '1f', scopeId: 8 });
    expect(resolveScope(APP, '')).toEqual({ manifestUid: '1f', scopeId: 0 });
  });

  it('ignores a .collection part, even one that does not exist', () => {
    expect(resolveScope(APP, 'empty.nothing')).toEqual({ manifestUid: '1f', scopeId: 9 });
  });

  it('throws UNKNOWN_SCOPE carrying the manifest uid', () => {
    const err = thrown(() => resolveScope(APP, 'nope'));
    expect(err.code).toBe('UNKNOWN_SCOPE');
    expect((err as ManifestLookupError).manifestUid).toBe('1f');
  });
});

describe('validateManifestUpdate', () => {
  const next = (uid: string, extra: JsonScope[] = []) =>
    parseManifest(json(uid, [...(JSON.parse(JSON.stringify(APP.scopes.slice(1))) as JsonScope[]), ...extra]));

  it('accepts any manifest when none was set', () => {
    expect(() => validateManifestUpdate(undefined, APP)).not.toThrow();
  });

  it('refuses a lower uid with OUT_OF_RANGE', () => {
    expect(thrown(() => validateManifestUpdate(APP, next('1e'))).code).toBe('OUT_OF_RANGE');
    expect(thrown(() => validateManifestUpdate(APP, defaultManifest())).code).toBe('OUT_OF_RANGE');
  });

  it('compares uids as numbers, not as strings', () => {
    expect(() => validateManifestUpdate(parseManifest(json('f')), parseManifest(json('10')))).not.toThrow();
    expect(thrown(() => validateManifestUpdate(parseManifest(json('10')), parseManifest(json('f')))).code).toBe('OUT_OF_RANGE');
  });

  it('accepts an equal uid with the same content, in any order (a repeated set is a no-op)', () => {
    const scopes = [...APP.scopes].reverse().map((s) => ({ ...s, collections: [...s.collections].reverse() }));
    const reordered = parseManifest({ uid: '001F', scopes });
    expect(() => validateManifestUpdate(APP, reordered)).not.toThrow();
  });

  it('refuses an equal uid with different content with OUT_OF_RANGE', () => {
    const err = thrown(() => validateManifestUpdate(APP, next('1f', [{ name: 'more', uid: 'b' }])));
    expect(err.code).toBe('OUT_OF_RANGE');
    const ttl = parseManifest(JSON.parse(JSON.stringify(APP).replace('3600', '60')));
    expect(thrown(() => validateManifestUpdate(APP, ttl)).code).toBe('OUT_OF_RANGE');
  });

  it('accepts a higher uid that adds and drops scopes and collections', () => {
    expect(() => validateManifestUpdate(APP, parseManifest(json('20', [{ name: 'other', uid: 'c' }])))).not.toThrow();
  });

  it('accepts a maxTTL change under a higher uid', () => {
    const changed = parseManifest({ ...JSON.parse(JSON.stringify(APP).replace('3600', '60')), uid: '20' });
    expect(() => validateManifestUpdate(APP, changed)).not.toThrow();
  });

  it('refuses a renamed scope or collection, or a collection moved to another scope', () => {
    const renamedScope = parseManifest({ ...JSON.parse(JSON.stringify(APP).replace('"app"', '"app2"')), uid: '20' });
    expect(thrown(() => validateManifestUpdate(APP, renamedScope)).path).toBe('scopes[1].name');
    const renamedCollection = parseManifest({ ...JSON.parse(JSON.stringify(APP).replace('"orders"', '"orders2"')), uid: '20' });
    expect(thrown(() => validateManifestUpdate(APP, renamedCollection)).code).toBe('INVALID_ARGUMENT');
    const moved = parseManifest(
      json('20', [
        { name: 'app', uid: '8', collections: [{ name: 'users', uid: '9' }] },
        { name: 'empty', uid: '9', collections: [{ name: 'orders', uid: 'a' }] },
      ]),
    );
    expect(thrown(() => validateManifestUpdate(APP, moved)).message).toMatch(/renamed or moved/);
  });

  it('refuses a collection or scope id that was dropped: dropped ids are never reused', () => {
    const reusesCollection = parseManifest(json('20', [], [{ name: 'c', uid: 'b' }]));
    const err = thrown(() => validateManifestUpdate(APP, reusesCollection, { collections: [0xb], scopes: [] }));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.path).toBe('scopes[0].collections[1].uid');
    const reusesScope = parseManifest(json('20', [{ name: 's', uid: 'c' }]));
    const droppedScope = { collections: [], scopes: new Set([0xc]) };
    expect(thrown(() => validateManifestUpdate(APP, reusesScope, droppedScope)).path).toBe('scopes[1].uid');
    expect(thrown(() => validateManifestUpdate(undefined, reusesScope, droppedScope)).code).toBe('INVALID_ARGUMENT');
  });

  it('accepts dropping a collection and creating one of the same name with a new id in one update', () => {
    const recreated = parseManifest(json('20', [{ name: 'app', uid: '8', collections: [{ name: 'users', uid: 'b' }] }]));
    expect(() => validateManifestUpdate(APP, recreated, { collections: [9], scopes: [] })).not.toThrow();
  });
});

describe('diffManifests', () => {
  it('lists the ids added and dropped', () => {
    const after = parseManifest(
      json('20', [
        {
          name: 'app',
          uid: '8',
          collections: [
            { name: 'users', uid: '9' },
            { name: 'new', uid: 'b' },
          ],
        },
        { name: 's', uid: 'c' },
      ]),
    );
    expect(diffManifests(APP, after)).toEqual({
      addedScopes: [0xc],
      droppedScopes: [9],
      addedCollections: [0xb],
      droppedCollections: [0xa],
    });
    expect(diffManifests(undefined, APP).addedCollections).toEqual([0, 9, 10]);
  });
});

describe('addCollection', () => {
  it('adds a collection and its scope with id 8, the first free one, under the next uid', () => {
    const next = addCollection(defaultManifest(), 'app', 'users');
    expect(next.uid).toBe('1');
    expect(resolveScope(next, 'app').scopeId).toBe(8);
    expect(resolveCollection(next, 'app.users')).toEqual({ manifestUid: '1', collectionId: 8 });
  });

  it('adds to an existing scope, with an id above every id of every scope', () => {
    const next = addCollection(APP, 'empty', 'c');
    expect(next.uid).toBe('20');
    expect(resolveCollection(next, 'empty.c').collectionId).toBe(11);
    expect(next.scopes).toHaveLength(APP.scopes.length);
  });

  it('adds to the _default scope', () => {
    expect(resolveCollection(addCollection(APP, '_default', 'c'), '.c').collectionId).toBe(11);
  });

  it('never reuses an id: it counts the greatest ids ever used, dropped ones included', () => {
    const next = addCollection(APP, 'new', 'c', {}, { maxCollectionId: 0x40, maxScopeId: 0x30 });
    expect(resolveCollection(next, 'new.c').collectionId).toBe(0x41);
    expect(resolveScope(next, 'new').scopeId).toBe(0x31);
    const manifestHigher = addCollection(APP, 'app', 'c', {}, { maxCollectionId: 9 });
    expect(resolveCollection(manifestHigher, 'app.c').collectionId).toBe(11);
  });

  it('records a maxTTL and rejects an invalid one', () => {
    expect(resolveCollection(addCollection(APP, 'app', 'c', { maxTTL: 60 }), 'app.c').maxTTL).toBe(60);
    expect(thrown(() => addCollection(APP, 'app', 'c', { maxTTL: -1 })).code).toBe('INVALID_ARGUMENT');
  });

  it('rejects an existing collection', () => {
    expect(thrown(() => addCollection(APP, 'app', 'users')).message).toMatch(/already exists/);
  });

  it('creates user names only: not system names, invalid names or the _default collection', () => {
    const refused = [
      ['app', '_sys'],
      ['_sys', 'c'],
      ['app', '$x'],
      ['app', 'a.b'],
      ['_default', '_default'],
      ['app', ''],
    ];
    for (const [scope, name] of refused) {
      expect(thrown(() => addCollection(APP, scope, name)).code).toBe('INVALID_ARGUMENT');
    }
  });

  it('leaves its input unchanged and returns a valid, frozen successor', () => {
    const before = JSON.stringify(APP);
    const next = addCollection(APP, 'new', 'c');
    expect(JSON.stringify(APP)).toBe(before);
    expect(Object.isFrozen(next.scopes[next.scopes.length - 1].collections)).toBe(true);
    expect(parseManifest(JSON.stringify(next))).toEqual(next);
    expect(() => validateManifestUpdate(APP, next)).not.toThrow();
  });

  it('throws OUT_OF_RANGE when no collection id, scope id or manifest uid is left', () => {
    const full = parseManifest(json('1', [], [{ name: 'last', uid: 'ffffffff' }]));
    expect(thrown(() => addCollection(full, '_default', 'c')).code).toBe('OUT_OF_RANGE');
    expect(thrown(() => addCollection(APP, 's', 'c', {}, { maxScopeId: 0xffffffff })).code).toBe('OUT_OF_RANGE');
    expect(thrown(() => addCollection(parseManifest(json('ffffffffffffffff')), '_default', 'c')).code).toBe('OUT_OF_RANGE');
  });
});

describe('addScope', () => {
  it('adds an empty scope with the next free id under the next uid', () => {
    const next = addScope(APP, 'more');
    expect(next.uid).toBe('20');
    expect(resolveScope(next, 'more').scopeId).toBe(10);
    expect(thrown(() => addScope(next, 'more')).message).toMatch(/already exists/);
    expect(thrown(() => addScope(APP, '_sys')).code).toBe('INVALID_ARGUMENT');
  });
});

describe('dropCollection', () => {
  it('removes the collection under the next uid, so it no longer resolves', () => {
    const next = dropCollection(APP, 'app', 'users');
    expect(next.uid).toBe('20');
    const err = thrown(() => resolveCollection(next, 'app.users'));
    expect([err.code, (err as ManifestLookupError).manifestUid]).toEqual(['UNKNOWN_COLLECTION', '20']);
    expect(diffManifests(APP, next).droppedCollections).toEqual([9]);
  });

  it('can drop the _default collection', () => {
    expect(thrown(() => resolveCollection(dropCollection(APP, '_default', '_default'), '.')).code).toBe('UNKNOWN_COLLECTION');
  });

  it('gives a re-created collection of the same name a new id', () => {
    const dropped = dropCollection(APP, 'app', 'orders');
    const recreated = addCollection(dropped, 'app', 'orders', {}, { maxCollectionId: 10 });
    expect(resolveCollection(recreated, 'app.orders').collectionId).toBe(11);
  });

  it('throws UNKNOWN_SCOPE or UNKNOWN_COLLECTION for what does not exist', () => {
    expect(thrown(() => dropCollection(APP, 'nope', 'c')).code).toBe('UNKNOWN_SCOPE');
    expect(thrown(() => dropCollection(APP, 'app', 'nope')).code).toBe('UNKNOWN_COLLECTION');
  });
});

describe('dropScope', () => {
  it('removes a scope with its collections under the next uid', () => {
    const next = dropScope(APP, 'app');
    expect(next.uid).toBe('20');
    expect(diffManifests(APP, next)).toEqual({
      addedScopes: [],
      droppedScopes: [8],
      addedCollections: [],
      droppedCollections: [9, 10],
    });
  });

  it('refuses the _default scope and unknown scopes', () => {
    expect(thrown(() => dropScope(APP, '_default')).code).toBe('INVALID_ARGUMENT');
    expect(thrown(() => dropScope(APP, 'nope')).code).toBe('UNKNOWN_SCOPE');
  });
});

describe('compareUids', () => {
  it('orders base-16 uids by value, whatever their case and leading zeros', () => {
    expect([compareUids('f', '10'), compareUids('0A', 'a'), compareUids('ffffffffffffffff', '1')]).toEqual([-1, 0, 1]);
  });
});

describe('manifest updates (property)', () => {
  it('random adds and drops always give valid successors that never reuse an id', () => {
    const SCOPES = fc.constantFrom('_default', 'a', 'b');
    const op = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), scope: SCOPES, name: fc.constantFrom('x', 'y', 'z') }),
      fc.record({ kind: fc.constant('drop' as const), scope: SCOPES, name: fc.constantFrom('_default', 'x', 'y', 'z') }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        let manifest = defaultManifest();
        const everUsed = new Set<number>([0]);
        const dropped = new Set<number>();
        for (const { kind, scope, name } of ops) {
          let next: Manifest;
          try {
            next =
              kind === 'add'
                ? addCollection(manifest, scope, name, {}, { maxCollectionId: Math.max(0, ...dropped) })
                : dropCollection(manifest, scope, name);
          } catch (err) {
            if (isDocumentError(err) && ['INVALID_ARGUMENT', 'UNKNOWN_SCOPE', 'UNKNOWN_COLLECTION'].includes(err.code)) continue;
            throw err;
          }
          validateManifestUpdate(manifest, next, { collections: dropped, scopes: [] });
          expect(parseManifest(JSON.stringify(next))).toEqual(next);
          const diff = diffManifests(manifest, next);
          for (const id of diff.addedCollections) {
            expect(everUsed.has(id)).toBe(false);
            everUsed.add(id);
          }
          for (const id of diff.droppedCollections) dropped.add(id);
          manifest = next;
        }
      }),
    );
  });
});
