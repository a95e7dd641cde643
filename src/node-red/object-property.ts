/**
 * What `RED.util.getObjectProperty` and `setObjectProperty` do to a JavaScript object, given the parts
 * of a property expression: the rules the memory store applies to a scope's data, and so the meaning
 * every context store must give a key. Node-RED's util runs in sloppy mode, and these functions keep
 * its outcomes: writing a property of a string or number does nothing, reading one of `undefined`
 * throws a TypeError.
 *
 * The store reaches most values without these functions (sub-document reads and writes); they define
 * the result, and compute it where a key's meaning depends on JavaScript's (a number part addressing
 * an object's key, `length` of an array or a string, a character of a string).
 */

type PropertyBag = Record<PropertyKey, unknown>;

/** `obj[key]`. @throws TypeError when `obj` is undefined or null */
function propertyOf(obj: unknown, key: unknown): unknown {
  if (obj === undefined || obj === null) {
    throw new TypeError(`Cannot read properties of ${String(obj)} (reading '${String(key)}')`);
  }
  return (Object(obj) as PropertyBag)[key as PropertyKey];
}

/** `obj[key] = value` in sloppy mode. @throws TypeError when `obj` is undefined or null */
function assign(obj: unknown, key: unknown, value: unknown): void {
  if (obj === undefined || obj === null) {
    throw new TypeError(`Cannot set properties of ${String(obj)} (setting '${String(key)}')`);
  }
  if (typeof obj === 'object' || typeof obj === 'function') Reflect.set(obj, key as PropertyKey, value);
}

/** `delete obj[key]` in sloppy mode. @throws TypeError when `obj` is undefined or null */
function remove(obj: unknown, key: unknown): void {
  if (obj === undefined || obj === null) throw new TypeError('Cannot convert undefined or null to object');
  if (typeof obj === 'object' || typeof obj === 'function') Reflect.deleteProperty(obj, key as PropertyKey);
}

/** `Object.hasOwn(obj, key)`. @throws TypeError when `obj` is undefined or null */
function hasOwn(obj: unknown, key: unknown): boolean {
  return Object.hasOwn(obj as object, key as PropertyKey);
}

/**
 * The value at `parts` below `root`, as `getObjectProperty` finds it.
 *
 * @throws TypeError when a part is read from undefined or null (a missing parent); the memory store
 *   turns that into `undefined`.
 */
export function readProperty(root: unknown, parts: readonly unknown[]): unknown {
  let value: unknown = null;
  let obj = root;
  for (const key of parts) {
    value = propertyOf(obj, key);
    obj = value;
  }
  return value;
}

/**
 * Sets (or with `value` undefined, deletes) the value at `parts` below `root` as `setObjectProperty`
 * does: missing parents are created as arrays when the next part is a number and as objects
 * otherwise; a parent that is a string, number, boolean or null stops the write; deleting an array
 * element splices it out. Returns whether the write reached its target (false: nothing changed).
 *
 * @throws TypeError where Node-RED's does: a write that passes through a value it cannot descend
 *   into (an element that is a string or null, then two more parts), or an invalid array length.
 */
export function writeProperty(root: object, parts: readonly unknown[], value: unknown): boolean {
  const createMissing = value !== undefined;
  const length = parts.length;
  let obj: unknown = root;
  for (let i = 0; i < length - 1; i++) {
    const key = parts[i];
    const emptyChild = () => (typeof parts[i + 1] === 'string' ? {} : []);
    if (typeof key === 'string' || (typeof key === 'number' && !Array.isArray(obj))) {
      if (hasOwn(obj, key)) {
        const child = propertyOf(obj, key);
        if ((typeof child !== 'object' && typeof child !== 'function') || child === null) return false;
        obj = child;
      } else if (createMissing) {
        assign(obj, key, emptyChild());
        obj = propertyOf(obj, key);
      } else {
        return false;
      }
    } else if (typeof key === 'number') {
      if (propertyOf(obj, key) === undefined) {
        if (!createMissing) return false;
        assign(obj, key, emptyChild());
      }
      obj = propertyOf(obj, key);
    }
    // A part of any other type (a reference's value) leaves `obj` where it is, as in Node-RED.
  }
  const key = parts[length - 1];
  if (value === undefined) {
    if (typeof key === 'number' && Array.isArray(obj)) obj.splice(key, 1);
    else remove(obj, key);
    return true;
  }
  if (typeof obj !== 'object' || obj === null) return false;
  assign(obj, key, value);
  return true;
}
