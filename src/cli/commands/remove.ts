import { MutateInSpec } from '../../document/subdoc/specs';
import { checkArity, stringOption } from '../args';
import { formatIdArgument, parseIdArgument } from '../argument-values';
import { requireCollection } from '../collections';
import { withPathShown } from '../error-report';
import type { Command } from './command';

export const removeCommand: Command = {
  name: 'remove',
  forms: [{ usage: 'remove <id> [path] [--cas <cas>]', summary: 'remove a document, or the value at a path in it' }],
  details: ['--cas <cas>  only if the document is still at this version; else CAS_MISMATCH'],
  options: ['cas'],
  createsDatabase: false,
  async run(context) {
    checkArity(context.args, 1, 2, 'remove');
    const [idText, path] = context.args.positionals as [string, string | undefined];
    const id = parseIdArgument(idText);
    const cas = stringOption(context.args, 'cas');
    const collection = await requireCollection(context);
    if (path === undefined) {
      await collection.remove(id, cas === undefined ? {} : { cas });
      await context.output.result(`removed ${formatIdArgument(id)}`, { id, removed: true });
      return;
    }
    const result = await withPathShown(path, () => collection.mutateIn(id, [MutateInSpec.remove(path)], cas === undefined ? {} : { cas }));
    await context.output.result(`removed ${path} of ${formatIdArgument(id)} (cas ${result.cas})`, {
      id,
      path,
      cas: result.cas ?? null,
    });
  },
};
