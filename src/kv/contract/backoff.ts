/**
 * FDB's client retry delay: starts at 10 ms, doubles per retry up to 1 s, and is jittered so that
 * transactions that conflicted with each other do not retry in lock step.
 */
export class Backoff {
  private delayMs: number;

  constructor(
    private readonly initialMs = 10,
    private readonly maxMs = 1000,
    private readonly random: () => number = Math.random,
  ) {
    this.delayMs = initialMs;
  }

  /** Waits the next delay (uniformly jittered in [0.5, 1.0] of the current step) and doubles it. */
  async wait(): Promise<void> {
    const ms = this.delayMs * (0.5 + this.random() * 0.5);
    this.delayMs = Math.min(this.delayMs * 2, this.maxMs);
    await new Promise((resolve) => setTimeout(resolve, ms));
  }

  reset(): void {
    this.delayMs = this.initialMs;
  }
}
