/**
 * Settling an operation's promise on a later turn of the event loop, as FoundationDB's client settles
 * its futures: from its network thread, so that code awaiting them always resumes in a new macrotask.
 * Without this, a loop that awaits one in-process operation after another (`while (!stop) await
 * tr.get(k)`) runs in one unending chain of microtasks and timers and I/O never run.
 *
 * Every promise due in one turn shares one `setImmediate`, so that many concurrent operations cost one
 * macrotask, not one each.
 */

/**
 * What is due on the next turn, in order: each callback followed by the value it is called with (a
 * settled operation's resolve and its result, so that settling one costs no closure).
 */
let due: unknown[] = [];
/** How many entries of {@link due} are due (the array is reused: its length may be larger). */
let dueLength = 0;
/**
 * The array the turn before last settled, emptied, for the next turn to fill: two arrays take turns,
 * so that a turn allocates none (one per turn cost a few hundred bytes of garbage per operation).
 */
let spare: unknown[] = [];
let scheduled = false;
/** How many turns have settled operations so far (see {@link turnsTaken}). */
let turns = 0;

/** An array that settled more entries than this is dropped rather than kept for reuse. */
const REUSED_ENTRIES = 4096;

function settleDue(): void {
  scheduled = false;
  turns++;
  const settling = due;
  const n = dueLength;
  // What the callbacks make due now goes into the other array, for the next turn.
  due = spare;
  dueLength = 0;
  try {
    for (let i = 0; i < n; i += 2) (settling[i] as (value: unknown) => void)(settling[i + 1]);
  } finally {
    // Let go of the settled callbacks and values; a thrown callback leaves the array clean too.
    if (n > REUSED_ENTRIES) spare = [];
    else {
      // A loop: Array.prototype.fill is a runtime call costing more than the few entries it clears.
      for (let i = 0; i < n; i++) settling[i] = undefined;
      spare = settling;
    }
  }
}

function callOnNextTurn(callback: (value: unknown) => void, value: unknown): void {
  due[dueLength++] = callback;
  due[dueLength++] = value;
  if (!scheduled) {
    scheduled = true;
    setImmediate(settleDue);
  }
}

/**
 * How many turns of the event loop have settled operations in this process so far. Two different
 * answers mean the event loop has turned (and run timers and I/O) between the two calls.
 */
export function turnsTaken(): number {
  return turns;
}

/** Calls `settle` on the next turn of the event loop, with everything else due then. */
export function onNextTurn(settle: () => void): void {
  callOnNextTurn(settle, undefined);
}

/** Resolves on the next turn of the event loop. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => onNextTurn(resolve));
}

/**
 * Runs `operation` now and settles with its result, or rejects with what it threw, on the next turn:
 * an operation takes effect (reads its data, records its conflicts) when it is called, and its caller
 * hears of it later, as from FDB's network thread.
 */
export function settleOnNextTurn<T>(operation: () => T): Promise<T> {
  let value: T;
  try {
    value = operation();
  } catch (error) {
    return rejectOnNextTurn(error);
  }
  return resolveOnNextTurn(value);
}

/** The resolve function of the promise {@link resolveOnNextTurn} just made. */
let captured: ((value: unknown) => void) | undefined;

/** A promise executor that keeps its resolve function, so that a promise costs no closure. */
function captureResolve(resolve: (value: unknown) => void): void {
  captured = resolve;
}

/** A promise that resolves with `value` on the next turn. */
export function resolveOnNextTurn<T>(value: T): Promise<T> {
  const promise = new Promise<T>(captureResolve as (resolve: (value: T) => void) => void);
  callOnNextTurn(captured!, value);
  captured = undefined;
  return promise;
}

/** A promise that rejects with `error` on the next turn. */
export function rejectOnNextTurn<T>(error: unknown): Promise<T> {
  return new Promise<T>((_, reject) => onNextTurn(() => reject(error)));
}
