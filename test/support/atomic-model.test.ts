import type { AtomicOp } from '../../src/kv/contract/types';
import { atomicCases } from './atomic-cases';
import { applyAtomicOp } from './atomic-model';

// The conformance suite trusts this model as its oracle for random read-your-writes checks, so it must
// agree with the hand-worked cases first.
describe('the atomic-operation model of the conformance suite', () => {
  for (const op of Object.keys(atomicCases) as AtomicOp[]) {
    describe(op, () => {
      for (const c of atomicCases[op]) {
        it(c.title, () => {
          expect(applyAtomicOp(op, c.existing, c.param)).toEqual(c.expected);
        });
      }
    });
  }
});
