/**
 * The operations of one transaction still in flight (reads, commit, onError's backoff, the
 * versionstamp, watches), so that a timeout or a cancel can fail all of them at once, as FDB fails
 * every future of a transaction that times out or is cancelled.
 */
export class PendingOperations {
  private readonly rejecters = new Set<(err: unknown) => void>();

  /** `promise`, unless {@link failAll} fails it first. */
  track<T>(promise: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.rejecters.add(reject);
      promise.then(
        (value) => {
          this.rejecters.delete(reject);
          resolve(value);
        },
        (err: unknown) => {
          this.rejecters.delete(reject);
          reject(err);
        },
      );
    });
  }

  /** Rejects every tracked operation with `err`; later settlements of their promises are ignored. */
  failAll(err: unknown): void {
    const rejecters = [...this.rejecters];
    this.rejecters.clear();
    for (const reject of rejecters) reject(err);
  }

  /** Stops tracking what is in flight, leaving it to settle on its own (a reset hands it to the engine). */
  forgetAll(): void {
    this.rejecters.clear();
  }
}
