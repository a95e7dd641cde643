import { Buffer } from 'node:buffer';

/**
 * The first key that does not start with `prefix`: drop trailing 0xff bytes, then add one to the last
 * byte. `range(prefix)` ends here. Throws when the prefix is empty or all 0xff, as FDB's bindings do.
 */
export function strinc(prefix: Uint8Array): Buffer {
  let end = prefix.length;
  while (end > 0 && prefix[end - 1] === 0xff) end--;
  if (end === 0) throw new RangeError('strinc: the key must contain a byte other than 0xff');
  const out = Buffer.from(prefix.subarray(0, end));
  out[end - 1]++;
  return out;
}
