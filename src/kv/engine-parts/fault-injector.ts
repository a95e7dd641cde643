import { kvError } from '../contract/errors';
import { seededRandom } from './seeded-random';

/** Fractions in [0, 1] of write commits to fail, drawn from a seeded generator. */
export interface FaultInjectionOptions {
  /** Seed of the generator: the same seed and the same sequence of commits fail the same way. */
  seed: number;
  /** Commits that fail with not_committed (1020) without being applied. */
  notCommitted?: number;
  /**
   * Commits that are applied and then report commit_unknown_result (1021): the harmful case of 1021,
   * which FDB cannot rule out, made certain so that tests can show it.
   */
  unknownResult?: number;
  /** Commits that fail with transaction_too_old (1007), as if 5 s had passed since the read version. */
  tooOld?: number;
}

export type InjectedFault = 'notCommitted' | 'unknownResult' | 'tooOld';

/**
 * Decides, commit by commit, whether to inject a fault. Each write commit draws exactly one number, so
 * a run is replayable from its seed whatever the outcome of each commit.
 */
export class FaultInjector {
  private readonly random: () => number;
  private readonly notCommitted: number;
  private readonly unknownResult: number;
  private readonly tooOld: number;

  /** @throws KvError invalid_option_value (2006) for a fraction outside [0, 1] or fractions summing over 1. */
  constructor(options: FaultInjectionOptions) {
    this.notCommitted = fraction('notCommitted', options.notCommitted);
    this.unknownResult = fraction('unknownResult', options.unknownResult);
    this.tooOld = fraction('tooOld', options.tooOld);
    if (this.notCommitted + this.unknownResult + this.tooOld > 1) {
      throw kvError('invalid_option_value', 'fault fractions must add up to at most 1');
    }
    if (!Number.isFinite(options.seed)) throw kvError('invalid_option_value', 'faults.seed must be a finite number');
    this.random = seededRandom(options.seed);
  }

  /** The fault to inject into the next write commit, if any. */
  next(): InjectedFault | undefined {
    const draw = this.random();
    if (draw < this.notCommitted) return 'notCommitted';
    if (draw < this.notCommitted + this.unknownResult) return 'unknownResult';
    if (draw < this.notCommitted + this.unknownResult + this.tooOld) return 'tooOld';
    return undefined;
  }
}

function fraction(name: string, value: number | undefined): number {
  if (value === undefined) return 0;
  if (!(value >= 0 && value <= 1)) throw kvError('invalid_option_value', `faults.${name} must be in [0, 1]`);
  return value;
}
