import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { builtCli, doclayer } from './support/built-cli';

/**
 * How `doclayer` fails, end to end: one line on stderr that says what is wrong (plus a caret under
 * the offending character where there is one), nothing on stdout, and a status that is not 0: 1 for a
 * failure, 2 for bad usage. Bad records of an import stop it with what came before committed.
 */

jest.setTimeout(120_000);

let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'doclayer-cli-errors-'));
  await builtCli();
  const setup = await doclayer(['--collection', 'app.users', 'set', 'ada', '', '{"name":"Ada"}'], { cwd: dir });
  expect(setup.status).toBe(0);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (args: string[], input?: string) => doclayer(args, { cwd: dir, input });

describe('doclayer errors', () => {
  it('names an unknown collection and the ones that exist', async () => {
    const failed = await run(['--collection', 'app.userz', 'get', 'ada']);
    expect(failed).toEqual({
      status: 1,
      stdout: '',
      stderr: 'doclayer: unknown collection app.userz (the collections are: _default._default, app.users)\n',
    });
  });

  it('shows a bad path with a caret under the offending position', async () => {
    const failed = await run(['--collection', 'app.users', 'get', 'ada', 'address..city']);
    expect(failed.status).toBe(1);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toBe(
      ["doclayer: bad path at position 8: empty component: expected a key, found '.' (INVALID_PATH)", '  address..city', '          ^', ''].join(
        '\n',
      ),
    );
  });

  it('shows bad JSON in an argument with its column and a caret', async () => {
    const failed = await run(['--collection', 'app.users', 'set', 'ada', 'address', '{"city": Paris}']);
    expect(failed.status).toBe(1);
    expect(failed.stderr).toBe(
      ['doclayer: bad JSON in the value at column 10: expected a JSON value, found "P"', '  {"city": Paris}', '           ^', ''].join('\n'),
    );
    const bare = await run(['--collection', 'app.users', 'set', 'ada', 'name', 'Grace']);
    expect(bare.stderr.split('\n')[0]).toBe(
      `doclayer: bad JSON in the value at column 1: expected a JSON value, found "G" (a string is written in double quotes: '"Grace"')`,
    );
  });

  it('stops an import at a bad line, with everything before it committed and the resume point printed', async () => {
    const lines = ['{"id": 1, "v": "a"}', '{"id": 2, "v": "b"}', '{"id": 3, "v": "c",}', '{"id": 4, "v": "d"}'];
    writeFileSync(join(dir, 'bad.ndjson'), `${lines.join('\n')}\n`);
    const failed = await run(['--collection', 'app.lines', 'import', 'bad.ndjson', '--id-field', 'id']);
    expect(failed.status).toBe(1);
    expect(failed.stderr).toBe(`bad.ndjson:3:20: bad JSON: expected a property name in double quotes, found "}" (record 3)\n`);
    expect(failed.stdout).toMatch(
      new RegExp(
        [
          '^imported 2 documents into app\\.lines in [\\d.]+ s \\(1 transaction\\)',
          'stopped at line 3: every document before it is committed, nothing after it was imported',
          'to resume once it is fixed: doclayer import bad\\.ndjson --collection app\\.lines --id-field id --from-line 3',
          '\\(or pass --skip-bad to skip bad records\\)\\n$',
        ].join('\\n'),
      ),
    );
    expect((await run(['--collection', 'app.lines', 'count'])).stdout).toBe('2 documents in app.lines\n');

    lines[2] = '{"id": 3, "v": "c"}';
    writeFileSync(join(dir, 'bad.ndjson'), `${lines.join('\n')}\n`);
    const resumed = await run(['import', 'bad.ndjson', '--collection', 'app.lines', '--id-field', 'id', '--from-line', '3']);
    expect(resumed.status).toBe(0);
    expect(resumed.stdout).toMatch(/^imported 2 documents into app\.lines .*\npassed over 2 records before line 3\n$/);
    expect((await run(['--collection', 'app.lines', 'export', '--documents'])).stdout).toBe(
      `${lines.map((l) => JSON.stringify(JSON.parse(l))).join('\n')}\n`,
    );
  });

  it('skips bad records with --skip-bad and lists them', async () => {
    const input = '{"id": "a"}\n{"id": "b"\n{"name": "no id"}\n[1, 2]\n{"id": "c"}\n';
    const skipped = await run(['--collection', 'app.skips', 'import', '-', '--id-field', 'id', '--skip-bad'], input);
    expect(skipped.status).toBe(0);
    expect(skipped.stderr).toBe(
      [
        "stdin:2:11: bad JSON: expected ',' or '}' after a property value, found the end of the text (record 2)",
        'stdin:3:1: no "id" field (the --id-field) (record 3)',
        'stdin:4:1: no "id" field (the --id-field) (record 4)',
        '',
      ].join('\n'),
    );
    expect(skipped.stdout).toMatch(/^imported 2 documents into app\.skips .*\nskipped 3 bad records \(listed above\)\n$/);
  });

  it('gives the line and column of a bad element of a JSON array', async () => {
    writeFileSync(join(dir, 'bad.json'), '[\n  {"id": "a"},\n  {"id": "b",\n   "v": tru}\n]\n');
    const failed = await run(['--collection', 'app.arrays', 'import', 'bad.json', '--id-field', 'id']);
    expect(failed.status).toBe(1);
    expect(failed.stderr).toBe('bad.json:4:9: bad JSON: expected a JSON value, found "t" (record 2)\n');
    expect(failed.stdout).toMatch(/^imported 1 document into app\.arrays .*\nstopped at line 3: /);
  });

  it('stops at an array it cannot split into documents, whatever --skip-bad says', async () => {
    const failed = await run(['--collection', 'app.arrays', 'import', '-', '--id-field', 'id', '--skip-bad'], '[{"id": "x"} {"id": "y"}]');
    expect(failed.status).toBe(1);
    expect(failed.stderr).toBe("stdin:1:14: expected ',' or ']' after an array element, found '{'\n");
    expect(failed.stdout).toMatch(
      /^imported 1 document into app\.arrays .*\nstopped at line 1: .*\nto resume once it is fixed: doclayer import - --collection app\.arrays --id-field id --skip-bad --from-line 1\n$/,
    );
  });

  it('asks for --format when a one-line JSON array on stdin could be documents or one document', async () => {
    const unclear = await run(['--collection', 'app.unclear', 'import', '-'], '[{"n": 1}, {"n": 2}]\n');
    expect(unclear).toEqual({
      status: 1,
      stdout: '',
      stderr:
        'doclayer: cannot tell the format of stdin: one line holding a JSON array is either an array of documents ' +
        'or one document that is an array (say which: --format json or --format ndjson)\n',
    });
    expect((await run(['--collection', 'app.unclear', 'import', '-', '--format', 'json'], '[{"n": 1}, {"n": 2}]\n')).stdout).toMatch(
      /^imported 2 documents /,
    );
    expect((await run(['--collection', 'app.unclear', 'import', '-', '--format', 'ndjson'], '[{"n": 1}, {"n": 2}]\n')).stdout).toMatch(
      /^imported 1 document /,
    );
    writeFileSync(join(dir, 'lines.json'), '{"n": 1}\n{"n": 2}\n');
    const misnamed = await run(['--collection', 'app.unclear', 'import', 'lines.json']);
    expect(misnamed.stderr).toBe(
      "lines.json:1:1: a JSON array of documents starts with '[', not '{' (for one document per line, use --format ndjson or a .ndjson file)\n",
    );
    expect((await run(['--collection', 'app.unclear', 'import', 'lines.json', '--format', 'ndjson'])).stdout).toMatch(/^imported 2 documents /);
  });

  it('says that libfdb_c is missing for --fdb, in one line', async () => {
    let loadable = true;
    const error = console.error;
    console.error = () => undefined; // the package prints its own notice when libfdb_c is missing
    try {
      require('foundationdb');
    } catch {
      loadable = false;
    } finally {
      console.error = error;
    }
    if (loadable) return; // This machine has the FoundationDB client: nothing to report.
    const failed = await run(['--fdb', 'get', 'ada']);
    expect(failed.status).toBe(1);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toMatch(/^doclayer: FoundationDB is not available: .*libfdb_c.*\n$/);
  });

  it('refuses to read a database folder that does not exist', async () => {
    const failed = await run(['--db', 'no-such-folder', 'count']);
    expect(failed).toEqual({
      status: 1,
      stdout: '',
      stderr: 'doclayer: no database in no-such-folder: the folder does not exist (a write, such as import or set, creates it)\n',
    });
  });

  it('exits with 2 and points to the usage for bad usage', async () => {
    expect(await run(['frobnicate'])).toEqual({
      status: 2,
      stdout: '',
      stderr: 'doclayer: unknown command "frobnicate"\nRun `doclayer help` for usage.\n',
    });
    expect(await run(['get'])).toEqual({
      status: 2,
      stdout: '',
      stderr: 'doclayer: get needs at least 1 argument\nRun `doclayer help get` for usage.\n',
    });
    expect((await run(['scan', '--limit', 'ten'])).stderr).toBe(
      'doclayer: --limit is an integer of at least 0, got "ten"\nRun `doclayer help scan` for usage.\n',
    );
    expect((await run(['--memory', '--db', 'x', 'count'])).stderr).toBe(
      'doclayer: choose one engine: --db and --memory were given\nRun `doclayer help` for usage.\n',
    );
  });
});
