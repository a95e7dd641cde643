import { isDocumentError, LookupInSpec, MutateInSpec, type JsonValue } from '../document';
import { fromStoredJson } from './context-json';
import { ContextStoreError } from './errors';
import { isMissing, needsJavaScript, type ScopeTransaction } from './scope-transaction';

/**
 * The atomic context API of Node-RED's design (designs/atomic-context-api): `incr` and its next phase,
 * array and string operations. Each is defined as a read of the key and a write of the result, by
 * the memory store's rules, in one serializable transaction (retried on conflict), so two of them on
 * one key never lose an update wherever they run. Where the key's path allows, they run as
 * sub-document operations that touch only the value concerned:
 *
 * - `incr` by an integer: the document layer's increment (one point read, one key written);
 * - `push` / `unshift`: an array append / prepend (no read of the elements), then a count;
 * - `pop` / `shift`: a read and a removal of the last / first element.
 *
 * A missing key is `0` for `incr`, `[]` for `push` and `unshift`, `''` for `append` and `prepend`;
 * `pop` and `shift` of a missing key or an empty array return `undefined` and write nothing.
 */

export type ArrayEnd = 'first' | 'last';

/** Document-layer errors after which the operation is computed in JavaScript instead. */
function computeInstead(err: unknown): boolean {
  return needsJavaScript(err) || isDocumentError(err, 'NUMBER_TOO_BIG') || isDocumentError(err, 'VALUE_CANNOT_INSERT');
}

async function writeResult(st: ScopeTransaction, key: string, parts: readonly unknown[], value: JsonValue): Promise<void> {
  if (!(await st.write(parts, value))) {
    throw new ContextStoreError('CANNOT_SET', `cannot set ${JSON.stringify(key)}: a parent is not an object or an array`);
  }
}

/**
 * Adds `amount` (a finite number, negative to decrement) to the number at the key and returns the
 * result.
 *
 * @throws ContextStoreError INVALID_ARGUMENT (amount not a finite number), NOT_A_NUMBER (the value is
 *   not a number, or the result is not finite), CANNOT_SET
 */
export async function increment(st: ScopeTransaction, key: string, parts: readonly unknown[], amount: number): Promise<number> {
  const target = st.target(parts);
  if (target !== undefined && target.path.length > 0 && Number.isSafeInteger(amount) && amount !== 0) {
    try {
      const { values } = await st.writing(target.rootKey, () =>
        st.collection.mutateIn(target.id, [MutateInSpec.increment(target.path, amount, { createPath: true })], {
          tr: st.tr,
          storeSemantics: 'upsert',
        }),
      );
      const result = values[0] as number | bigint;
      if (typeof result === 'number' && Number.isSafeInteger(result)) return result;
      // Past 2^53 JavaScript adds in floating point: store what it would.
      const sum = Number(BigInt(result) - BigInt(amount)) + amount;
      await writeResult(st, key, parts, sum);
      return sum;
    } catch (err) {
      if (!computeInstead(err)) throw err;
    }
  }
  const current = await st.read(parts);
  const base = current === undefined ? 0 : current;
  if (typeof base !== 'number') {
    throw new ContextStoreError('NOT_A_NUMBER', `cannot increment ${JSON.stringify(key)}: its value is not a number`);
  }
  const sum = base + amount;
  if (!Number.isFinite(sum)) {
    throw new ContextStoreError('NOT_A_NUMBER', `cannot increment ${JSON.stringify(key)}: the result is not a finite number`);
  }
  await writeResult(st, key, parts, sum);
  return sum;
}

/**
 * Adds `value` at one end of the array at the key (created when missing) and returns its new length.
 *
 * @throws ContextStoreError NOT_AN_ARRAY, CANNOT_SET
 */
export async function pushTo(st: ScopeTransaction, key: string, parts: readonly unknown[], value: JsonValue, end: ArrayEnd): Promise<number> {
  const target = st.target(parts);
  if (target !== undefined) {
    const options = { createPath: target.path.length > 0 };
    const spec = end === 'last' ? MutateInSpec.arrayAppend(target.path, value, options) : MutateInSpec.arrayPrepend(target.path, value, options);
    try {
      await st.writing(target.rootKey, () => st.collection.mutateIn(target.id, [spec], { tr: st.tr, storeSemantics: 'upsert' }));
      const { entries } = await st.collection.lookupIn(target.id, [LookupInSpec.count(target.path)], { tr: st.tr });
      return entries[0].value as number;
    } catch (err) {
      if (!computeInstead(err)) throw err;
    }
  }
  const current = await st.read(parts);
  const array = current === undefined ? [] : current;
  if (!Array.isArray(array)) throw notAnArray(key, 'add to');
  const next = end === 'last' ? [...(array as JsonValue[]), value] : [value, ...(array as JsonValue[])];
  await writeResult(st, key, parts, next);
  return next.length;
}

/**
 * Removes the element at one end of the array at the key and returns it; `undefined` for a missing
 * key or an empty array.
 *
 * @throws ContextStoreError NOT_AN_ARRAY, CANNOT_SET
 */
export async function takeFrom(st: ScopeTransaction, key: string, parts: readonly unknown[], end: ArrayEnd): Promise<JsonValue | undefined> {
  const target = st.target(parts);
  if (target !== undefined) {
    const element = [...target.path, end === 'last' ? -1 : 0];
    try {
      const { content } = await st.collection.get(target.id, element, { tr: st.tr });
      await st.writing(target.rootKey, () => st.collection.mutateIn(target.id, [MutateInSpec.remove(element)], { tr: st.tr }));
      return fromStoredJson(content);
    } catch (err) {
      if (isMissing(err)) return undefined;
      if (!computeInstead(err)) throw err;
    }
  }
  const current = await st.read(parts);
  if (current === undefined) return undefined;
  if (!Array.isArray(current)) throw notAnArray(key, 'remove from');
  if (current.length === 0) return undefined;
  const array = current as JsonValue[];
  const taken = end === 'last' ? array[array.length - 1] : array[0];
  await writeResult(st, key, parts, end === 'last' ? array.slice(0, -1) : array.slice(1));
  return taken;
}

/**
 * Adds `text` at one end of the string at the key (`''` when missing) and returns the new string.
 *
 * @throws ContextStoreError NOT_A_STRING, CANNOT_SET
 */
export async function concatTo(st: ScopeTransaction, key: string, parts: readonly unknown[], text: string, end: ArrayEnd): Promise<string> {
  const current = await st.read(parts);
  const base = current === undefined ? '' : current;
  if (typeof base !== 'string') {
    throw new ContextStoreError('NOT_A_STRING', `cannot add to ${JSON.stringify(key)}: its value is not a string`);
  }
  const next = end === 'last' ? base + text : text + base;
  await writeResult(st, key, parts, next);
  return next;
}

function notAnArray(key: string, what: string): ContextStoreError {
  return new ContextStoreError('NOT_AN_ARRAY', `cannot ${what} ${JSON.stringify(key)}: its value is not an array`);
}
