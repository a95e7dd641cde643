import type { JsonValue } from '../document';

/**
 * Context values are stored as JSON, as Node-RED's localfilesystem store writes them: a value is
 * stored as `JSON.parse(JSON.stringify(value))` would return it, with circular references left out
 * (that store serialises with json-stringify-safe and drops them). So `toJSON` is honoured (a Date is
 * stored as its ISO string, a Buffer as `{ type: 'Buffer', data: [...] }`), `undefined`, functions and
 * symbols disappear from objects and become `null` in arrays, `NaN` and `±Infinity` become `null`,
 * `-0` becomes `0`, and only own enumerable properties of other objects are kept (a Map is `{}`).
 * A `bigint` is refused with the TypeError JSON.stringify throws.
 */

/** Boxed primitives JSON.stringify unwraps. */
function unboxed(value: object): unknown {
  if (value instanceof Number) return Number(value);
  if (value instanceof String) return String(value);
  if (value instanceof Boolean || value instanceof BigInt) return value.valueOf();
  return value;
}

function hasToJson(value: unknown): value is { toJSON(key: string): unknown } {
  return ((typeof value === 'object' && value !== null) || typeof value === 'bigint') && typeof (value as { toJSON?: unknown }).toJSON === 'function';
}

/**
 * The JSON form of `value`: what a context store keeps; `undefined` when JSON has no form for it
 * (undefined, a function, a symbol), which a store treats as deleting the key.
 *
 * @throws TypeError for a bigint, as JSON.stringify does
 */
export function toContextJson(value: unknown): JsonValue | undefined {
  return convert(value, '', []);
}

function convert(input: unknown, key: string, ancestors: object[]): JsonValue | undefined {
  let value = hasToJson(input) ? input.toJSON(key) : input;
  if (typeof value === 'object' && value !== null) value = unboxed(value);
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) return null;
      return value === 0 ? 0 : value;
    case 'bigint':
      throw new TypeError('Do not know how to serialize a BigInt');
    case 'object': {
      if (value === null) return null;
      if (ancestors.includes(value)) return undefined;
      const inner = [...ancestors, value];
      if (Array.isArray(value)) {
        const out: JsonValue[] = [];
        for (let i = 0; i < value.length; i++) out.push(convert(value[i], String(i), inner) ?? null);
        return out;
      }
      const out: { [key: string]: JsonValue } = {};
      for (const k of Object.keys(value)) {
        const converted = convert((value as Record<string, unknown>)[k], k, inner);
        if (converted === undefined) continue;
        // An own `__proto__` key, as JSON.parse makes it: assigning it would set the prototype.
        if (k === '__proto__') Object.defineProperty(out, k, { value: converted, enumerable: true, writable: true, configurable: true });
        else out[k] = converted;
      }
      return out;
    }
    default:
      return undefined;
  }
}

/**
 * A value read from the store as JavaScript sees JSON: integers the document layer returns as
 * `bigint` (integral numbers beyond 2^53, which JSON holds as plain numbers) become numbers.
 */
export function fromStoredJson(value: JsonValue): JsonValue {
  if (typeof value === 'bigint') return Number(value);
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = fromStoredJson(value[i]);
    return value;
  }
  for (const k of Object.keys(value)) value[k] = fromStoredJson(value[k]);
  return value;
}
