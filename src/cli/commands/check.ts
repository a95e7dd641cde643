import { checkDocuments, type DocumentCheckReport, type DocumentProblem } from '../../check';
import { isKvError } from '../../kv/contract/errors';
import { checkLmdbStore, type LmdbStoreReport } from '../../kv/lmdb';
import { checkArity } from '../args';
import { CliError, EXIT_FAILURE, EXIT_USAGE } from '../error-report';
import type { JsonValue } from '../../document/types';
import { formatCount } from '../progress';
import type { Command, CommandContext } from './command';

/**
 * `doclayer check`: the engine's check of its files (LMDB: every page, then every pair), then, only
 * when they are sound (reading damaged pages could crash the process), the document check. Each
 * problem is one line on stdout, then a summary; the exit status says whether damage was found.
 */
export const checkCommand: Command = {
  name: 'check',
  forms: [{ usage: 'check', summary: 'look for damage: the store file, then every document (exit 1 when damage is found)' }],
  details: [
    'With the durable embedded engine (LMDB), every page of the data file is checked first, then every',
    'key and value is read back; only if those are sound is every document checked: keys and entries',
    'that do not decode, structures whose stored sizes disagree with their members, documents of',
    'collections the manifest does not have. Other processes may go on using the store meanwhile.',
    'Exit status: 0 no damage, 1 damage found (each problem on a line), 2 no store there.',
  ],
  options: [],
  createsDatabase: false,
  async run(context) {
    checkArity(context.args, 0, 0, 'check');
    const { choice, folder } = context.engine;
    let store: LmdbStoreReport | undefined;
    if (choice.engine === 'lmdb') {
      store = await checkStore(choice.path, folder ?? choice.path);
      if (!store.ok) {
        await report(context, store, undefined);
        return EXIT_FAILURE;
      }
    }
    const session = await context.session();
    const documents = await checkDocuments(session.docs);
    await report(context, store, documents);
    return documents.ok ? 0 : EXIT_FAILURE;
  },
};

/** The LMDB check of the store in `path`. @throws CliError (exit 2) when there is no store. */
async function checkStore(path: string, shown: string): Promise<LmdbStoreReport> {
  try {
    return await checkLmdbStore(path);
  } catch (err) {
    if (isKvError(err, 'file_not_found')) throw new CliError(`no database in ${shown}`, [], EXIT_USAGE);
    throw err;
  }
}

async function report(context: CommandContext, store: LmdbStoreReport | undefined, documents: DocumentCheckReport | undefined): Promise<void> {
  const ok = (store?.ok ?? true) && (documents?.ok ?? false);
  const value = { ok, store: store === undefined ? null : storeJson(store), documents: documents === undefined ? null : documentsJson(documents) };
  await context.output.result(() => reportText(store, documents), value);
}

function reportText(store: LmdbStoreReport | undefined, documents: DocumentCheckReport | undefined): string {
  const lines: string[] = [];
  if (store !== undefined) {
    lines.push(...store.problems.map((problem) => `store: ${problem}`));
    const keys = store.keys === undefined ? 'keys not read' : `${formatCount(store.keys)} keys`;
    lines.push(`store: ${keys}, ${formatCount(store.pagesVisited)} pages, ${formatCount(store.fileBytes)} bytes: ${verdict(store.problems.length)}`);
  }
  if (documents !== undefined) {
    lines.push(...documents.problems.map(problemLine));
    lines.push(`documents: ${formatCount(documents.documents)} checked: ${verdict(documents.problems.length)}`);
  } else {
    lines.push('documents: not checked, as the store is damaged');
  }
  return lines.join('\n');
}

function verdict(problems: number): string {
  return problems === 0 ? 'no damage found' : `${formatCount(problems)} problem${problems === 1 ? '' : 's'}`;
}

/** `_default._default "ada": the document does not decode: ...` */
function problemLine(problem: DocumentProblem): string {
  const where = [problem.collection];
  if (problem.id !== undefined) where.push(typeof problem.id === 'bigint' ? `${problem.id}n` : JSON.stringify(problem.id));
  if (problem.key !== undefined) where.push(`key ${problem.key}`);
  return `${where.join(' ')}: ${problem.problem}`;
}

function storeJson(store: LmdbStoreReport): JsonValue {
  return { ok: store.ok, problems: [...store.problems], keys: store.keys ?? null, pages: store.pagesVisited, bytes: store.fileBytes };
}

function documentsJson(documents: DocumentCheckReport): JsonValue {
  return {
    ok: documents.ok,
    documents: documents.documents,
    problems: documents.problems.map((p) => ({
      collection: p.collection,
      ...(p.id === undefined ? {} : { id: p.id }),
      ...(p.key === undefined ? {} : { key: p.key }),
      problem: p.problem,
    })),
  };
}
