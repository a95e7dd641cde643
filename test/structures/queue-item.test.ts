/**
 * A queue item's stored forms, which a push builds for every item: the payload (checked and encoded in
 * one walk, which must accept and refuse exactly what the document layer's JSON check does, with the
 * same errors) and a ready item's versionstamped key template (built in place, byte for byte what the
 * tuple layer packs). Pure functions of their input: no engine involved.
 */
import { DocumentError } from '../../src/document/errors';
import { DocumentKeys } from '../../src/document/keys/layout';
import type { JsonValue } from '../../src/document/types';
import { assertJsonValue } from '../../src/document/values/json-value';
import { decodePayload, decodeRecord, encodePayload, encodeRecord, freshRecord } from '../../src/structures/queue/item';
import { QueueKeys } from '../../src/structures/queue/keys';
import { Double, pack, Versionstamp, type TupleItem } from '../../src/tuple';
import { packPrefixedWithVersionstamp } from '../../src/tuple/pack';
import { Random, testSeed } from '../support/random';

/** The payload's format (item.ts), written out plainly: an object is a tuple of '' then its keys and values. */
function reference(value: JsonValue): TupleItem {
  if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)) return new Double(value);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(reference);
  const out: TupleItem[] = [Buffer.alloc(0)];
  for (const key of Object.keys(value)) out.push(key, reference((value as Record<string, JsonValue>)[key]));
  return out;
}

function randomValue(r: Random, depth: number): JsonValue {
  const kind = r.int(depth > 4 ? 6 : 8);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return r.chance(0.5);
    case 2:
      return r.pick([0, -0, 1.5, -7, 2 ** 53 - 1, 2 ** 60, -(2 ** 70), Number.MAX_VALUE, 5e-324]);
    case 3:
      return r.pick([10n ** 20n, -(2n ** 64n), 2n ** 53n]);
    case 4:
      return r.pick(['', 'a', 'é', '\ud83d\ude00 pair', 'x'.repeat(r.int(40))]);
    case 5:
      return r.pick(['__proto__', 'k', '']);
    case 6:
      return Array.from({ length: r.int(4) }, () => randomValue(r, depth + 1));
    default: {
      const out: Record<string, JsonValue> = r.chance(0.2) ? (Object.create(null) as Record<string, JsonValue>) : {};
      for (let i = r.int(4); i > 0; i--) {
        Object.defineProperty(out, r.pick(['a', 'b', '__proto__', 'longer key', '1', '\ud83d\ude00']), {
          value: randomValue(r, depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
  }
}

/** A value `levels` deep: arrays nested around a scalar. */
function nested(levels: number): JsonValue {
  let value: JsonValue = 1;
  for (let i = 1; i < levels; i++) value = [value];
  return value;
}

function failure(fn: () => unknown): { code: string; message: string } | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (!(err instanceof DocumentError)) throw err;
    return { code: err.code, message: err.message };
  }
}

describe('queue item payload', () => {
  it('encodes every accepted value as its tuple form, and reads it back equal', () => {
    const seed = testSeed(0x17e4);
    const r = new Random(seed);
    for (let i = 0; i < 500; i++) {
      const value = randomValue(r, 0);
      const payload = encodePayload(value);
      expect({ seed, i, payload: payload.toString('hex') }).toEqual({ seed, i, payload: pack([reference(value)]).toString('hex') });
      expect(decodePayload(payload)).toEqual(value);
    }
  });

  it('accepts an item 31 levels deep and refuses one of 32 or more with VALUE_TOO_DEEP', () => {
    expect(decodePayload(encodePayload(nested(31)))).toEqual(nested(31));
    expect(decodePayload(encodePayload({ a: nested(30) }))).toEqual({ a: nested(30) });
    expect(failure(() => encodePayload(nested(32)))).toEqual({
      code: 'VALUE_TOO_DEEP',
      message: 'VALUE_TOO_DEEP: a queue item is at most 31 levels deep',
    });
    expect(failure(() => encodePayload({ a: nested(31) }))?.code).toBe('VALUE_TOO_DEEP');
    expect(failure(() => encodePayload(nested(100_000)))?.code).toBe('VALUE_TOO_DEEP');
  });

  it('refuses what the JSON check refuses, with its error', () => {
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = { back: cycle };
    const withSymbol = { a: 1, [Symbol('s')]: 2 };
    const bad: unknown[] = [
      undefined,
      { a: undefined },
      [1, Number.NaN],
      { x: Infinity },
      () => 1,
      Symbol('x'),
      new Date(0),
      { d: new Map() },
      Buffer.from('x'),
      [1, , 3], // eslint-disable-line no-sparse-arrays
      withSymbol,
      'lone \ud800',
      { ['key \udc00']: 1 },
      cycle,
      [[[{ deep: [cycle] }]]],
    ];
    for (const value of bad) {
      const expected = failure(() => assertJsonValue(value, 'the item'));
      expect(expected?.code).toBe('INVALID_VALUE');
      expect(failure(() => encodePayload(value as JsonValue))).toEqual(expected);
    }
  });
});

describe('queue ready item key template', () => {
  const keys = new QueueKeys(new DocumentKeys(Buffer.from([0x15, 0x01, 0x02, 0x63, 0x00]), 'q'));

  it('is what the tuple layer packs, for every priority and user version', () => {
    for (const priority of [0, 1, 7, 255, 1000]) {
      for (const userVersion of [0, 1, 255, 256, 0x1234, 0xffff]) {
        expect(keys.readyTemplate(userVersion, priority).toString('hex')).toBe(
          packPrefixedWithVersionstamp(keyBase(priority), [Versionstamp.incomplete(userVersion)]).toString('hex'),
        );
      }
    }
  });

  it('refuses a user version outside 0..65535 as the tuple layer does', () => {
    expect(() => keys.readyTemplate(65_536)).toThrow(/user version/i);
    expect(() => keys.readyTemplate(-1)).toThrow(/user version/i);
  });

  /** The key base of a priority's ready items, as docs/queue.md lays it out. */
  function keyBase(priority: number): Buffer {
    const ready = keys.ready;
    return priority === 0 ? ready : Buffer.concat([ready, pack([-priority])]);
  }
});

describe('queue item record', () => {
  it('of a fresh item is the general record with no lease, no attempts and no job id', () => {
    for (const payload of [encodePayload(1), encodePayload({ a: [1, 'x'] }), Buffer.alloc(0)]) {
      expect(freshRecord(payload).toString('hex')).toBe(encodeRecord(false, 0, payload).toString('hex'));
      expect(decodeRecord(freshRecord(payload))).toEqual({ leased: false, attempts: 0, payload });
    }
  });
});
