import { MutateInSpec } from '../../document/subdoc/specs';
import { checkArity, stringOption, UsageError } from '../args';
import { formatIdArgument, parseIdArgument, parseJsonArgument } from '../argument-values';
import { withPathShown } from '../error-report';
import type { Command } from './command';
import { isSetStructureOp, opLines, runStructureOp } from './structures';

/**
 * `set <id> <path> <json>`: one path of a document, created with its parents when missing (and the
 * document too), or an array element that exists (`tags[0]`); `''` as the path sets the whole document. With `--cas` the document must exist and
 * still be at that version.
 */
export const setCommand: Command = {
  name: 'set',
  forms: [
    { usage: 'set <id> <path> <json> [--cas <cas>]', summary: "set the value at a path, creating what is missing ('' is the whole document)" },
    { usage: 'set <id> <op> [member]', summary: 'a set structure: add, remove, contains, members, size, clear' },
  ],
  details: [
    'The value is JSON: a string needs double quotes, which the shell needs quoting around: \'"Paris"\'.',
    '--cas <cas>  only if the document is still at this version (from get --json); else CAS_MISMATCH',
    'With an operation of the set structure as its second argument, set works on a set structure instead',
    "(a top-level field named like one is written in backticks: set <id> '`size`' 3):",
    ...opLines('set'),
  ],
  options: ['cas'],
  createsDatabase: true,
  async run(context) {
    if (isSetStructureOp(context.args.positionals[1])) {
      if (context.args.options.has('cas')) throw new UsageError('--cas is for documents, not set structures', 'set');
      return runStructureOp('set', context);
    }
    checkArity(context.args, 3, 3, 'set');
    const [idText, path, json] = context.args.positionals as [string, string, string];
    const id = parseIdArgument(idText);
    const value = parseJsonArgument(json, 'the value');
    const cas = stringOption(context.args, 'cas');
    const collection = (await context.session()).collection(context.collectionName);
    const result =
      path === ''
        ? cas === undefined
          ? await collection.upsert(id, value)
          : await collection.replace(id, value, { cas })
        : await withPathShown(path, () =>
            // Couchbase's upsert takes a key; an array element (which must exist, as its document) is replaced.
            path.endsWith(']')
              ? collection.mutateIn(id, [MutateInSpec.replace(path, value)], cas === undefined ? {} : { cas })
              : collection.mutateIn(
                  id,
                  [MutateInSpec.upsert(path, value, { createPath: true })],
                  cas === undefined ? { storeSemantics: 'upsert' } : { cas },
                ),
          );
    const where = path === '' ? '' : ` ${path} of`;
    await context.output.result(`set${where} ${formatIdArgument(id)} (cas ${result.cas})`, { id, cas: result.cas ?? null });
  },
};
