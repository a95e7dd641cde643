import { checkArity } from '../args';
import { collectionStats } from '../collection-stats';
import { formatCount } from '../progress';
import type { Command } from './command';

export const statsCommand: Command = {
  name: 'stats',
  forms: [{ usage: 'stats', summary: 'documents, keys and bytes (keys plus values) per collection' }],
  options: [],
  createsDatabase: false,
  async run(context) {
    checkArity(context.args, 0, 0, 'stats');
    const session = await context.session();
    const manifest = await session.docs.getManifest();
    const rows: { collection: string; documents: number; keys: number; bytes: number }[] = [];
    for (const scope of manifest.scopes) {
      for (const collection of scope.collections) {
        const stats = await collectionStats(session.kv, session.collectionPrefix(parseInt(collection.uid, 16)));
        rows.push({ collection: `${scope.name}.${collection.name}`, ...stats });
      }
    }
    const table = () => {
      const header = ['collection', 'documents', 'keys', 'bytes'];
      const cells = rows.map((r) => [r.collection, formatCount(r.documents), formatCount(r.keys), formatCount(r.bytes)]);
      const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
      const line = (c: string[]) => c.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
      return [line(header), ...cells.map(line)].join('\n');
    };
    await context.output.result(table, { manifestUid: manifest.uid, collections: rows });
  },
};
