import { int64LE } from '../../src/kv/contract/bytes';
import type { AtomicOp } from '../../src/kv/contract/types';

/**
 * FDB's atomic operations case by case, each expectation worked out by hand from FDB's documentation
 * (and `fdbclient/Atomic.h`), with the rule it demonstrates as its title. The conformance suite runs
 * them on every engine; `atomic-model.test.ts` checks the suite's model against them.
 */
export interface AtomicCase {
  readonly title: string;
  /** The value before the operation; `undefined` for a missing key. */
  readonly existing: Buffer | undefined;
  readonly param: Buffer;
  /** The value after; `undefined` when the key ends up missing. */
  readonly expected: Buffer | undefined;
}

const b = (...bytes: number[]): Buffer => Buffer.from(bytes);
const s = (text: string): Buffer => Buffer.from(text, 'utf8');
const fill = (length: number, char: string): Buffer => Buffer.alloc(length, char);

export const atomicCases: Record<AtomicOp, readonly AtomicCase[]> = {
  add: [
    { title: 'a missing key takes the parameter', existing: undefined, param: int64LE(5), expected: int64LE(5) },
    { title: "two's complement: a negative parameter subtracts", existing: int64LE(5), param: int64LE(-7), expected: int64LE(-2) },
    { title: "overflow wraps at the parameter's length", existing: b(0xff), param: b(0x01), expected: b(0x00) },
    { title: 'carries into the next byte, little-endian', existing: b(0xff, 0x00), param: b(0x01, 0x00), expected: b(0x00, 0x01) },
    { title: 'a shorter existing value is zero-extended', existing: b(0xff), param: int64LE(1), expected: int64LE(256) },
    { title: "a longer existing value is truncated to the parameter's length", existing: b(0x01, 0x00, 0x01), param: b(0x01), expected: b(0x02) },
    { title: 'an empty existing value counts as zero', existing: b(), param: b(0x07, 0x00), expected: b(0x07, 0x00) },
  ],
  max: [
    { title: 'a missing key takes the parameter', existing: undefined, param: b(0x05), expected: b(0x05) },
    { title: 'compares little-endian, not bytewise: 256 beats 255', existing: b(0x00, 0x01), param: b(0xff, 0x00), expected: b(0x00, 0x01) },
    { title: 'takes the parameter when it is the larger integer', existing: b(0x10, 0x00), param: b(0x00, 0x01), expected: b(0x00, 0x01) },
    { title: 'unsigned: 0xff is 255, not -1', existing: b(0x01), param: b(0xff), expected: b(0xff) },
    {
      title: "a shorter existing value wins zero-extended to the parameter's length",
      existing: b(0x05),
      param: b(0x03, 0x00),
      expected: b(0x05, 0x00),
    },
    { title: 'a longer existing value is truncated before comparing', existing: b(0x02, 0x01), param: b(0x07), expected: b(0x07) },
  ],
  min: [
    { title: 'a missing key takes the parameter', existing: undefined, param: b(0x05), expected: b(0x05) },
    { title: 'compares little-endian, not bytewise: 255 beats 256', existing: b(0x00, 0x01), param: b(0xff, 0x00), expected: b(0xff, 0x00) },
    { title: 'unsigned: 0x01 is smaller than 0xff', existing: b(0xff), param: b(0x01), expected: b(0x01) },
    {
      title: "a shorter existing value wins zero-extended to the parameter's length",
      existing: b(0x05),
      param: b(0x03, 0x01),
      expected: b(0x05, 0x00),
    },
    { title: 'a longer existing value is truncated before comparing', existing: b(0x02, 0x01), param: b(0x07), expected: b(0x02) },
    { title: 'an empty existing value counts as zero', existing: b(), param: b(0x03, 0x00), expected: b(0x00, 0x00) },
  ],
  byteMin: [
    { title: 'a missing key takes the parameter', existing: undefined, param: s('b'), expected: s('b') },
    { title: 'compares bytewise: "ab" < "b" though longer', existing: s('ab'), param: s('b'), expected: s('ab') },
    { title: 'a prefix is smaller than its extensions', existing: s('ab'), param: s('a'), expected: s('a') },
    { title: 'bytes are unsigned: 0x7f < 0x80', existing: b(0x80), param: b(0x7f), expected: b(0x7f) },
  ],
  byteMax: [
    { title: 'a missing key takes the parameter', existing: undefined, param: s('b'), expected: s('b') },
    { title: 'compares bytewise: "b" > "ab" though shorter', existing: s('ab'), param: s('b'), expected: s('b') },
    { title: 'an extension is larger than its prefix', existing: s('ab'), param: s('a'), expected: s('ab') },
    { title: 'bytes are unsigned: 0x80 > 0x7f', existing: b(0x80), param: b(0x7f), expected: b(0x80) },
  ],
  bitAnd: [
    { title: 'a missing key takes the parameter', existing: undefined, param: b(0x0f), expected: b(0x0f) },
    { title: 'ands bit by bit', existing: b(0b1100), param: b(0b1010), expected: b(0b1000) },
    { title: 'a shorter existing value is zero-extended', existing: b(0xff), param: b(0x0f, 0xff), expected: b(0x0f, 0x00) },
    { title: 'a longer existing value is truncated', existing: b(0xff, 0xff), param: b(0x3c), expected: b(0x3c) },
  ],
  bitOr: [
    { title: 'a missing key takes the parameter', existing: undefined, param: b(0x0f), expected: b(0x0f) },
    { title: 'ors bit by bit', existing: b(0b1100), param: b(0b1010), expected: b(0b1110) },
    { title: 'a shorter existing value is zero-extended', existing: b(0x01), param: b(0x10, 0x02), expected: b(0x11, 0x02) },
    { title: 'a longer existing value is truncated', existing: b(0x01, 0x02), param: b(0x10), expected: b(0x11) },
  ],
  bitXor: [
    { title: 'a missing key takes the parameter', existing: undefined, param: b(0x0f), expected: b(0x0f) },
    { title: 'xors bit by bit', existing: b(0b1100), param: b(0b1010), expected: b(0b0110) },
    { title: 'a shorter existing value is zero-extended', existing: b(0x0f), param: b(0xff, 0x01), expected: b(0xf0, 0x01) },
    { title: 'a longer existing value is truncated', existing: b(0xff, 0xff), param: b(0x0f), expected: b(0xf0) },
  ],
  appendIfFits: [
    { title: 'a missing key takes the parameter', existing: undefined, param: s('cd'), expected: s('cd') },
    { title: 'appends', existing: s('ab'), param: s('cd'), expected: s('abcd') },
    {
      title: 'appends up to exactly the 100,000-byte value limit',
      existing: fill(60_000, 'x'),
      param: fill(40_000, 'y'),
      expected: Buffer.concat([fill(60_000, 'x'), fill(40_000, 'y')]),
    },
    {
      title: 'does nothing when the result would exceed the value limit',
      existing: fill(60_000, 'x'),
      param: fill(40_001, 'y'),
      expected: fill(60_000, 'x'),
    },
  ],
  compareAndClear: [
    { title: 'clears the key when the value equals the parameter', existing: s('same'), param: s('same'), expected: undefined },
    { title: 'leaves a different value alone', existing: s('other'), param: s('same'), expected: s('other') },
    { title: 'compares whole values: a prefix does not match', existing: s('abc'), param: s('ab'), expected: s('abc') },
    { title: 'a missing key stays missing', existing: undefined, param: s('same'), expected: undefined },
  ],
};
