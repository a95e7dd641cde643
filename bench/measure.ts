/**
 * Calls `call` until `budgetMs` has passed; returns the operations done and their rate. The clock is
 * read only every `callsPerClockRead` calls, so that reading it does not dominate fast operations.
 */
export async function measure(
  call: () => unknown,
  opsPerCall: number,
  budgetMs: number,
  callsPerClockRead = 16,
): Promise<{ operations: number; perSecond: number }> {
  let operations = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(Math.round(budgetMs * 1e6));
  let now = start;
  while (now < deadline) {
    for (let i = 0; i < callsPerClockRead; i++) {
      const result = call();
      if (result instanceof Promise) await result;
      operations += opsPerCall;
    }
    now = process.hrtime.bigint();
  }
  return { operations, perSecond: operations / (Number(now - start) / 1e9) };
}
