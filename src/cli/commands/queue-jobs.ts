import type { Collection } from '../../collection';
import type { DocId, JsonValue } from '../../document/types';
import { JOB_STATES, jobState } from '../../structures/queue/jobs';
import { integerOption, stringOption, UsageError, type ParsedArgs } from '../args';

/**
 * `queue <id> stats` and `queue <id> jobs --state <state> [--limit n]`: what is queued, running,
 * delayed and dead (docs/queue.md, "Counts and listing"). Both only read.
 */

export const QUEUE_JOB_OPS = {
  stats: {
    args: [],
    writes: false,
    summary: 'jobs per state: {"waiting","delayed","active","dead"}',
    run: async (c: Collection, id: DocId): Promise<JsonValue> => ({ ...(await c.queue(id).counts()) }),
  },
  jobs: {
    args: [],
    options: ['state', 'limit'],
    writes: false,
    summary: `the jobs of --state ${JOB_STATES.join('|')} [--limit n], one JSON object per line`,
    run: async (): Promise<undefined> => undefined,
    lines: (c: Collection, id: DocId, args: ParsedArgs): AsyncIterable<JsonValue> => jobLines(c, id, args),
  },
};

async function* jobLines(c: Collection, id: DocId, args: ParsedArgs): AsyncGenerator<JsonValue> {
  const text = stringOption(args, 'state');
  if (text === undefined) throw new UsageError(`queue jobs needs --state ${JOB_STATES.join('|')}`, 'queue');
  if (!(JOB_STATES as readonly string[]).includes(text)) {
    throw new UsageError(`--state is one of ${JOB_STATES.join(', ')}, got ${JSON.stringify(text)}`, 'queue');
  }
  const limit = integerOption(args, 'limit', 1, 'queue');
  for await (const job of c.queue(id).jobs({ state: jobState(text), limit })) yield { ...job };
}
