import { parseArgs, UsageError } from '../../src/cli/args';
import { OPTION_SPECS } from '../../src/cli/options';

const COMMANDS = new Set(['get', 'set', 'import', 'help']);
const parse = (...argv: string[]) => {
  const { command, positionals, options } = parseArgs(argv, OPTION_SPECS, COMMANDS);
  return { command, positionals, options: Object.fromEntries(options) };
};

describe('parseArgs', () => {
  it('takes options before and after the command, as --name value or --name=value', () => {
    expect(parse('--db', 'data', 'get', 'ada', 'address.city', '--json', '--collection=app.users')).toEqual({
      command: 'get',
      positionals: ['ada', 'address.city'],
      options: { db: 'data', json: true, collection: 'app.users' },
    });
  });

  it('gives --fdb the next argument unless it is a command name or an option', () => {
    expect(parse('--fdb', 'get', 'k').options).toEqual({ fdb: true });
    expect(parse('--fdb', '/etc/fdb.cluster', 'get', 'k')).toEqual({ command: 'get', positionals: ['k'], options: { fdb: '/etc/fdb.cluster' } });
    expect(parse('--fdb', '--json', 'get', 'k').options).toEqual({ fdb: true, json: true });
    expect(parse('--fdb=get', 'get', 'k').options).toEqual({ fdb: 'get' });
  });

  it('reads negative numbers and - as arguments, and everything after -- as arguments', () => {
    expect(parse('set', 'k', 'n', '-5').positionals).toEqual(['k', 'n', '-5']);
    expect(parse('import', '-').positionals).toEqual(['-']);
    expect(parse('get', '--', '--json').positionals).toEqual(['--json']);
  });

  it('refuses unknown options, missing values and repeated options', () => {
    expect(() => parse('get', 'k', '--nope')).toThrow(new UsageError('unknown option --nope'));
    expect(() => parse('get', 'k', '-x')).toThrow(new UsageError('unknown option -x'));
    expect(() => parse('import', 'f', '--id-field')).toThrow(new UsageError('--id-field needs a value (field)'));
    expect(() => parse('--json', 'get', '--json')).toThrow(new UsageError('--json is given more than once'));
    expect(() => parse('--json=yes', 'get')).toThrow(new UsageError('--json takes no value'));
  });
});
