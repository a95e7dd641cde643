import { Database } from '../../src/kv/contract/database';
import { CountingEngine } from '../../src/kv/counting-engine';
import { MemoryEngine } from '../../src/kv/memory/memory-engine';

describe('CountingEngine and the metadata version', () => {
  it('counts metadata-version reads and bumps on their own, not as gets or keys written', async () => {
    const engine = new CountingEngine(new MemoryEngine());
    const db = new Database(engine);
    const { counts } = await engine.measure(() =>
      db.transact(async (tr) => {
        await tr.getMetadataVersion();
        await tr.snapshot().getMetadataVersion();
        await tr.get('k');
        tr.bumpMetadataVersion();
      }),
    );
    expect(counts).toMatchObject({ metadataVersionReads: 2, metadataVersionBumps: 1, gets: 1, keysWritten: 0, versionstamped: 0, commits: 1 });
    await db.close();
  });
});
