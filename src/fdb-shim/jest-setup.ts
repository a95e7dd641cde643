/**
 * A jest setup file that runs node-foundationdb on the shim with its defaults (a memory engine per
 * cluster file): `setupFiles: ['doclayer/fdb-shim/jest-setup']`. For other engines, call
 * `installFdbShim({ engine })` in a setup file of your own instead.
 */
import { installFdbShim } from './install';

installFdbShim();
