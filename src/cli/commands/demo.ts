import { checkArity } from '../args';
import { runDemo } from '../demo';
import { describeEngine } from '../session';
import type { Command } from './command';

export const demoCommand: Command = {
  name: 'demo',
  forms: [{ usage: 'demo [--reset]', summary: 'a tour on sample orders: reads by path, CAS, a queue and sets shared by workers' }],
  details: ['Prints what each step cost (keys read and written, time). A second run reuses the orders it loaded;', '--reset  load them again'],
  options: ['reset'],
  createsDatabase: true,
  async run(context) {
    checkArity(context.args, 0, 0, 'demo');
    const session = await context.session({ count: true });
    await runDemo(session, context.output, {
      reset: context.args.options.has('reset'),
      where: describeEngine(context.engine.choice, context.cwd),
    });
  },
};
