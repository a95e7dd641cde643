import { DocumentError } from '../document/errors';
import { assertJsonValue, MAX_DEPTH, valueDepth } from '../document/values/json-value';
import type { JsonValue } from '../document/types';

/**
 * Checks a value stored as an element of a list or a value of a map: a JSON value (see
 * `assertJsonValue`) whose depth, counted inside the structure's JSON form (one level more), is at
 * most {@link MAX_DEPTH}.
 *
 * @throws DocumentError INVALID_VALUE, VALUE_TOO_DEEP.
 */
export function checkElementValue(value: unknown, what: string): asserts value is JsonValue {
  assertJsonValue(value, what);
  const depth = valueDepth(value);
  if (depth + 1 > MAX_DEPTH) {
    throw new DocumentError('VALUE_TOO_DEEP', `${what} is ${depth} levels deep; inside the structure that is over ${MAX_DEPTH}`);
  }
}
