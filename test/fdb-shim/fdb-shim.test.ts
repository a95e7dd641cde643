/**
 * FdbShim's choice of engine: which doclayer engine serves which cluster file.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { FdbShim, type FdbShimModule } from '../../src/fdb-shim';
import { openMemoryDatabase, MemoryEngine } from '../../src/kv/memory/memory-engine';
import { foundationdb } from '../support/fdb-shim';
import { expectKvError } from '../support/kv-assertions';

const { FDBError } = foundationdb();

function nativeModule(shim: FdbShim): FdbShimModule {
  const native = shim.createNativeModule();
  native.FDBError = FDBError;
  native.setAPIVersion(720);
  return native;
}

async function write(shim: FdbShim, clusterFile: string | undefined, key: string, value: string): Promise<void> {
  const tn = nativeModule(shim).createDatabase(clusterFile).createTransaction();
  tn.set(key, value);
  await tn.commit();
}

async function read(shim: FdbShim, clusterFile: string | undefined, key: string): Promise<string | undefined> {
  const value = await nativeModule(shim).createDatabase(clusterFile).createTransaction().get(key, true);
  return value?.toString();
}

describe('FdbShim', () => {
  it('gives each cluster file a memory engine of its own by default, shared by every module instance', async () => {
    const shim = new FdbShim();
    await write(shim, 'a.cluster', 'k', 'in a');
    expect(await read(shim, 'a.cluster', 'k')).toBe('in a');
    expect(await read(shim, 'b.cluster', 'k')).toBeUndefined();
    expect(await read(shim, undefined, 'k')).toBeUndefined();
    expect(shim.engine('a.cluster').name).toBe('memory');
  });

  it('serves every cluster file from one engine or Database passed in, and leaves it open on close', async () => {
    const db = openMemoryDatabase();
    const shim = new FdbShim({ engine: db });
    await write(shim, 'a.cluster', 'k', 'shared');
    expect(await read(shim, 'b.cluster', 'k')).toBe('shared');
    await shim.close();
    expect((await db.get('k'))?.toString()).toBe('shared');
  });

  it('asks an engine function once per cluster file, and closes what it returned', async () => {
    const asked: Array<string | undefined> = [];
    const engines: MemoryEngine[] = [];
    const shim = new FdbShim({
      engine: (clusterFile) => {
        asked.push(clusterFile);
        engines.push(new MemoryEngine());
        return engines[engines.length - 1];
      },
    });
    await write(shim, 'a.cluster', 'k', 'v');
    await read(shim, 'a.cluster', 'k');
    await read(shim, undefined, 'k');
    expect(asked).toEqual(['a.cluster', undefined]);
    await shim.close();
    await expectKvError(() => engines[0].createTransaction(), 2000);
  });

  it('keeps the data of every cluster file in a durable lmdb store with `path`, across shims', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'doclayer-fdb-shim-'));
    try {
      const first = new FdbShim({ path: folder });
      await write(first, 'a.cluster', 'k', 'durable');
      expect(first.engine('b.cluster').name).toBe('lmdb');
      await first.close();
      const second = new FdbShim({ path: folder });
      expect(await read(second, 'c.cluster', 'k')).toBe('durable');
      await second.close();
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it('refuses both `engine` and `path`', () => {
    expect(() => new FdbShim({ engine: new MemoryEngine(), path: '/tmp/x' })).toThrow(TypeError);
  });
});
