/**
 * The watch registry's range question, which the lmdb engine asks after each of its own commits: it
 * polls the store at once only when the commit wrote a watched key.
 */
import { KeyWatch } from '../../src/kv/client/key-watch';
import { WatchRegistry } from '../../src/kv/engine-parts/watch-registry';

const b = (s: string): Buffer => Buffer.from(s, 'latin1');
const range = (begin: string, end: string) => ({ begin: b(begin), end: b(end) });

describe('WatchRegistry.watchesIn', () => {
  it('tells whether an outstanding watch is on a key inside one of the ranges, ends excluded', () => {
    const registry = new WatchRegistry(10);
    expect(registry.watchesIn([range('a', 'z')])).toBe(false);
    registry.add(new KeyWatch(b('m'), undefined), undefined);
    expect(registry.watchesIn([range('m', 'm\0')])).toBe(true);
    expect(registry.watchesIn([range('a', 'n')])).toBe(true);
    expect(registry.watchesIn([range('a', 'm')])).toBe(false);
    expect(registry.watchesIn([range('m\0', 'z')])).toBe(false);
    expect(registry.watchesIn([range('a', 'b'), range('l', 'mm')])).toBe(true);
    expect(registry.watchesIn([])).toBe(false);
  });

  it('forgets watches once they settle', () => {
    const registry = new WatchRegistry(10);
    const watch = new KeyWatch(b('k'), undefined);
    registry.add(watch, undefined);
    watch.cancel();
    expect(registry.watchesIn([range('a', 'z')])).toBe(false);
  });
});
