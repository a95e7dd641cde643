/**
 * A promise together with the functions that settle it, settled at most once. Its rejection never
 * counts as unhandled: whoever holds the promise sees the error, and nobody is forced to hold it.
 */
export class Deferred<T> {
  readonly promise: Promise<T>;
  private settled = false;
  private resolveFn!: (value: T) => void;
  private rejectFn!: (err: unknown) => void;

  constructor() {
    this.promise = new Promise<T>((resolve, reject) => {
      this.resolveFn = resolve;
      this.rejectFn = reject;
    });
    this.promise.catch(() => undefined);
  }

  get isSettled(): boolean {
    return this.settled;
  }

  resolve(value: T): void {
    if (this.settled) return;
    this.settled = true;
    this.resolveFn(value);
  }

  reject(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.rejectFn(err);
  }
}
