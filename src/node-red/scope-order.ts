/**
 * Program order for the operations one process issues on a scope. Node-RED's built-in stores answer
 * synchronously, so flows take for granted that `flow.set('a', 1)` followed by `flow.get('a', cb)` sees
 * 1, and that keys set one after another are listed in that order; a Redis store keeps the same
 * promise by pipelining one connection. Here each operation is its own transaction, so this class
 * orders them: a write starts once every operation issued before it on the scope has settled, and a
 * read once every write issued before it has. Reads between two writes run together.
 *
 * Other processes are not ordered with this one (their operations interleave at transaction
 * boundaries, serializably).
 */
export class ScopeOrder {
  private readonly scopes = new Map<string, ScopeQueue>();

  /** Runs `run` after the writes issued before it on `scope`. */
  read<T>(scope: string, run: () => Promise<T>): Promise<T> {
    const queue = this.queue(scope);
    const result = queue.lastWrite.then(run);
    queue.readsSinceWrite.push(settled(result));
    return this.track(scope, queue, result);
  }

  /** Runs `run` after every operation issued before it on `scope`. */
  write<T>(scope: string, run: () => Promise<T>): Promise<T> {
    const queue = this.queue(scope);
    const before = Promise.all([queue.lastWrite, ...queue.readsSinceWrite]);
    const result = before.then(run);
    queue.lastWrite = settled(result);
    queue.readsSinceWrite = [];
    return this.track(scope, queue, result);
  }

  private queue(scope: string): ScopeQueue {
    let queue = this.scopes.get(scope);
    if (queue === undefined) {
      queue = { lastWrite: Promise.resolve(), readsSinceWrite: [], pending: 0 };
      this.scopes.set(scope, queue);
    }
    return queue;
  }

  /** Forgets an idle scope, so that scopes seen once do not accumulate. */
  private track<T>(scope: string, queue: ScopeQueue, result: Promise<T>): Promise<T> {
    queue.pending++;
    void settled(result).then(() => {
      if (--queue.pending === 0 && this.scopes.get(scope) === queue) this.scopes.delete(scope);
    });
    return result;
  }
}

interface ScopeQueue {
  /** Settles when the last write issued so far has. */
  lastWrite: Promise<void>;
  /** The reads issued since that write, settled or not. */
  readsSinceWrite: Promise<void>[];
  /** Operations issued and not yet settled. */
  pending: number;
}

function settled(promise: Promise<unknown>): Promise<void> {
  return promise.then(
    () => undefined,
    () => undefined,
  );
}
