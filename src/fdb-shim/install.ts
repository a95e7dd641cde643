import Module from 'module';
import * as path from 'path';
import { FdbShim, type FdbShimOptions } from './fdb-shim';
import { FdbShimInstallError } from './install-error';

/** jest's module mocker (the `jest` object), as far as the installer uses it. */
export interface JestModuleMocker {
  mock(moduleName: string, factory: () => unknown): unknown;
  requireActual(moduleName: string): unknown;
}

export interface InstallFdbShimOptions extends FdbShimOptions {
  /**
   * The `jest` object, to install through jest's module registry. Found by itself where jest injects
   * it (its default, `injectGlobals: true`); pass it with `injectGlobals: false`.
   */
  jest?: JestModuleMocker;
}

/** node-gyp-build's entry point: loads the native addon of the package at `dir`. */
type NodeGypBuild = (dir: string) => unknown;

/** The file of node-foundationdb that loads its native module with `require('node-gyp-build')(root)`. */
const FOUNDATIONDB_NATIVE_JS = /[\\/]foundationdb[\\/]dist[\\/]lib[\\/]native\.js$/;

/** Node's module loader, whose `_load` every `require` goes through. */
interface ModuleLoader {
  _load: (this: unknown, request: string, parent: NodeJS.Module | null | undefined, isMain: boolean) => unknown;
}

// jest passes `jest` to every module it loads, as it passes `require`; plain Node defines no such name.
declare const jest: JestModuleMocker | undefined;

/** The shim `require` hands to node-foundationdb, once the Node hook is in place. */
let nodeHook: { shim: FdbShim } | undefined;

/**
 * Makes node-foundationdb (the `foundationdb` npm package) run on doclayer's engines: from now on, when
 * the package loads its native module, it gets an {@link FdbShim} module instead of the compiled addon,
 * which needs FoundationDB's client library. The package's own JavaScript (Database, Transaction, the
 * `doTn` retry loop, subspaces, encoders, the directory layer) runs unchanged on top.
 *
 * Call it before the first `require('foundationdb')`. Under jest it registers a module mock in the test
 * file's registry (list `doclayer/fdb-shim/jest-setup` in `setupFiles` for the default, or call this in
 * a setup file of your own); elsewhere it hooks Node's module loader for the rest of the process, and a
 * later call replaces the options of an earlier one as long as the package has not been loaded.
 *
 * It intercepts only `require('node-gyp-build')` from the package's `dist/lib/native.js`, and under jest
 * only node-gyp-build's call for the package's own directory: other native packages load as before.
 *
 * @throws FdbShimInstallError `package-not-installed` when `foundationdb` cannot be resolved;
 *   `already-loaded` when its native module is already loaded in this process (outside jest).
 */
export function installFdbShim(options: InstallFdbShimOptions = {}): FdbShim {
  const { jest: explicitJest, ...shimOptions } = options;
  const root = foundationdbRoot();
  const shim = new FdbShim(shimOptions);
  const mocker = explicitJest ?? (typeof jest === 'undefined' ? undefined : jest);
  if (mocker) installForJest(mocker, root, shim);
  else installForNode(shim);
  return shim;
}

function foundationdbRoot(): string {
  try {
    return path.dirname(require.resolve('foundationdb/package.json'));
  } catch (err) {
    throw new FdbShimInstallError(
      'package-not-installed',
      'The fdb shim runs node-foundationdb, but the `foundationdb` npm package is not installed. ' +
        'Install it without its native build, which needs the FoundationDB client library: ' +
        '`npm install --ignore-scripts foundationdb` (or `ignore-scripts=true` in .npmrc).',
      { cause: err },
    );
  }
}

function installForJest(mocker: JestModuleMocker, root: string, shim: FdbShim): void {
  // The node-gyp-build that the package itself resolves: jest keys mocks by resolved path.
  const nodeGypBuildPath = require.resolve('node-gyp-build', { paths: [root] });
  mocker.mock(nodeGypBuildPath, () => {
    const actual = mocker.requireActual(nodeGypBuildPath) as NodeGypBuild;
    const load = (dir: string): unknown => (path.resolve(dir) === root ? shim.createNativeModule() : actual(dir));
    return Object.assign(load, actual);
  });
}

function installForNode(shim: FdbShim): void {
  const loaded = Object.keys(require.cache).find((file) => FOUNDATIONDB_NATIVE_JS.test(file));
  if (loaded) {
    throw new FdbShimInstallError(
      'already-loaded',
      `installFdbShim must run before the first require('foundationdb'): its native module is already loaded (${loaded})`,
    );
  }
  if (nodeHook) {
    nodeHook.shim = shim;
    return;
  }
  const hook = { shim };
  const loader = Module as unknown as ModuleLoader;
  const load = loader._load;
  loader._load = function loadWithFdbShim(this: unknown, request, parent, isMain) {
    if (request === 'node-gyp-build' && parent && FOUNDATIONDB_NATIVE_JS.test(parent.filename)) {
      return (): unknown => hook.shim.createNativeModule();
    }
    return load.call(this, request, parent, isMain);
  };
  nodeHook = hook;
}
