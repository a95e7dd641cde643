/**
 * installFdbShim and the jest setup file: how an app's tests get node-foundationdb on the shim. This
 * file starts as a test file whose jest config lists `doclayer/fdb-shim/jest-setup` does: the setup
 * file runs first, in the same module registry.
 */
import '../../src/fdb-shim/jest-setup';
import { execFile } from 'child_process';
import * as os from 'os';
import * as path from 'path';
import { FdbShimModule, type JestModuleMocker } from '../../src/fdb-shim';

type FoundationDB = typeof import('foundationdb');

const repoRoot = path.resolve(__dirname, '../..');

function run(script: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['-e', script], { cwd: repoRoot, timeout: 20_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
    );
  });
}

describe('the jest setup file (doclayer/fdb-shim/jest-setup)', () => {
  it("lets an app's test use require('foundationdb') as it would against a cluster", async () => {
    const fdb = require('foundationdb') as FoundationDB;
    fdb.setAPIVersion(720);
    const db = fdb.open();
    await db.doTn(async (tn) => tn.set('greeting', 'hello'));
    // Every open of the default cluster file reaches the same memory engine.
    expect(await fdb.open().get('greeting')).toEqual(Buffer.from('hello'));
  });

  it('takes the jest object where jest does not inject it (compile-time check)', () => {
    const mocker: JestModuleMocker = jest;
    expect(typeof mocker.mock).toBe('function');
  });

  it("replaces node-gyp-build's answer for the foundationdb package only", () => {
    const foundationdbRoot = path.dirname(require.resolve('foundationdb/package.json'));
    const nodeGypBuild = require(require.resolve('node-gyp-build', { paths: [foundationdbRoot] })) as (dir: string) => unknown;
    expect(nodeGypBuild(foundationdbRoot)).toBeInstanceOf(FdbShimModule);
    expect(() => nodeGypBuild(os.tmpdir())).toThrow(/No native build was found/);
  });
});

describe('installFdbShim outside jest', () => {
  it("hooks Node's loader before the first require('foundationdb'), and refuses once it has loaded", async () => {
    const output = await run(`
      require('ts-node').register({ transpileOnly: true });
      const { installFdbShim } = require('./src/fdb-shim');
      installFdbShim();
      const fdb = require('foundationdb');
      fdb.setAPIVersion(720);
      const db = fdb.open();
      (async () => {
        await db.set('k', 'from node');
        console.log(String(await db.get('k')));
        try {
          installFdbShim();
        } catch (err) {
          console.log(err.code, err.reason);
        }
      })();
    `);
    expect(output.trim().split('\n')).toEqual(['from node', 'FDB_SHIM_INSTALL already-loaded']);
  });
});
