/**
 * A one-shot barrier: `arrive()` resolves once `parties` callers have arrived. Concurrency tests use it
 * to force an interleaving, e.g. "both transactions have read before either commits", instead of
 * hoping the scheduler produces it.
 */
export class Barrier {
  private arrived = 0;
  private release!: () => void;
  private readonly open: Promise<void>;

  constructor(readonly parties: number) {
    if (!Number.isInteger(parties) || parties < 1) throw new RangeError(`Barrier: parties must be >= 1, got ${parties}`);
    this.open = new Promise<void>((resolve) => {
      this.release = resolve;
    });
  }

  arrive(): Promise<void> {
    this.arrived++;
    if (this.arrived > this.parties) throw new Error(`Barrier: ${this.arrived} arrivals for ${this.parties} parties`);
    if (this.arrived === this.parties) this.release();
    return this.open;
  }
}
