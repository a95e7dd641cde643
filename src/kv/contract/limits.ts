/** FoundationDB's limits, enforced by every engine so that what works on one works on a cluster. */
export const Limits = {
  /** Largest key, in bytes (FDB: 10,000). Exceeding it is `key_too_large` (2102). */
  maxKeyBytes: 10_000,
  /** Largest value, in bytes (FDB: 100,000). Exceeding it is `value_too_large` (2103). */
  maxValueBytes: 100_000,
  /** Largest transaction: mutations plus conflict ranges, in bytes. Exceeding it is 2101. */
  maxTransactionBytes: 10_000_000,
  /** Longest time from read version to commit, in ms. Exceeding it is `transaction_too_old` (1007). */
  maxTransactionAgeMs: 5_000,
  /** Most outstanding watches per database connection (FDB's default). Exceeding it is 1032. */
  maxWatches: 10_000,
} as const;
