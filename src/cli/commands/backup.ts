import { statSync } from 'fs';
import { join, resolve } from 'path';
import { isKvError } from '../../kv/contract/errors';
import { backupLmdbStore } from '../../kv/lmdb';
import { checkArity } from '../args';
import { CliError, EXIT_USAGE } from '../error-report';
import { formatCount } from '../progress';
import type { Command } from './command';

/**
 * `doclayer backup <dest>`: LMDB's consistent, compacted copy of the store, taken while other
 * processes keep reading and writing it. The other engines have their own ways (FoundationDB's
 * backup tools; nothing to keep in memory), so it refuses them plainly.
 */
export const backupCommand: Command = {
  name: 'backup',
  forms: [{ usage: 'backup <dest>', summary: 'write a consistent, compacted copy of the store into the folder dest' }],
  details: [
    'For the durable embedded engine (LMDB). The copy is the store as of one moment, with only the',
    'pages in use, taken while other processes keep reading and writing; it is a store itself: use it',
    'with --db <dest>. dest is created if missing and must not already hold a store (exit status 2).',
  ],
  options: [],
  createsDatabase: false,
  async run(context) {
    checkArity(context.args, 1, 1, 'backup');
    const { choice, folder } = context.engine;
    if (choice.engine !== 'lmdb') {
      const engine = choice.engine === 'fdb' ? "FoundationDB (use FoundationDB's own backup tools)" : 'the in-memory engine (it keeps nothing)';
      throw new CliError(`backup is for the durable embedded engine (LMDB, --db <folder>), not ${engine}`, [], EXIT_USAGE);
    }
    const shown = context.args.positionals[0];
    const dest = resolve(context.cwd, shown);
    try {
      await backupLmdbStore(choice.path, dest);
    } catch (err) {
      if (isKvError(err, 'file_not_found')) throw new CliError(`no database in ${folder ?? choice.path}`, [], EXIT_USAGE);
      if (isKvError(err, 'invalid_option_value'))
        throw new CliError(`${shown} already holds a store; back up into a new or empty folder`, [], EXIT_USAGE);
      throw err;
    }
    const bytes = statSync(join(dest, 'data.mdb')).size;
    await context.output.result(`backed up ${folder ?? choice.path} to ${shown} (${formatCount(bytes)} bytes)`, { source: choice.path, dest, bytes });
  },
};
