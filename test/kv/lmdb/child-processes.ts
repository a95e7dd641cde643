import { spawn, type ChildProcess } from 'child_process';
import { join, relative, resolve } from 'path';
import { transpileTree } from '../../support/transpile';

/**
 * Child processes for the lmdb engine's multi-process and crash tests. The worker script and the
 * sources it imports are transpiled to JavaScript once per test file (into a temporary folder, without
 * type checking), so that each child starts in a fraction of a second instead of loading a TypeScript
 * compiler; they find their packages through NODE_PATH.
 */

const REPO = resolve(__dirname, '../../..');

/** Transpiles `worker.ts` and everything it imports relatively into `outDir`; returns the worker's path. */
export function compileWorker(outDir: string): string {
  return compileScript(outDir, 'worker.ts');
}

/** Transpiles the script `name` of this folder and everything it imports relatively into `outDir`; returns its path. */
export function compileScript(outDir: string, name: string): string {
  const script = join(__dirname, name);
  transpileTree([script], REPO, outDir);
  return join(outDir, relative(REPO, script)).replace(/\.ts$/, '.js');
}

/** A running worker: its output lines as they arrive, and its exit. */
export class Worker {
  readonly lines: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private stderr = '';
  private waiters: Array<() => void> = [];

  constructor(readonly child: ChildProcess) {
    let partial = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop()!;
      this.lines.push(...parts);
      for (const wake of this.waiters.splice(0)) wake();
    });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolveExit) => {
      child.on('exit', (code, signal) => {
        for (const wake of this.waiters.splice(0)) wake();
        resolveExit({ code, signal });
      });
    });
  }

  /** What the worker wrote to stderr so far, for failure messages. */
  get errors(): string {
    return this.stderr;
  }

  /** Resolves once a line satisfies `predicate` (or all lines do, for `count`); rejects on exit or timeout. */
  async waitFor(predicate: (lines: readonly string[]) => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let exited = false;
    void this.exited.then(() => {
      exited = true;
    });
    while (!predicate(this.lines)) {
      if (exited) throw new Error(`worker exited before ${what}; stderr:\n${this.stderr}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; lines: ${this.lines.slice(-5).join(' | ')}; stderr:\n${this.stderr}`);
      await new Promise<void>((wake) => {
        const timer = setTimeout(wake, Math.min(left, 250));
        this.waiters.push(() => {
          clearTimeout(timer);
          wake();
        });
      });
    }
  }

  /** Waits for a clean exit. @throws Error with the worker's stderr otherwise */
  async succeeded(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`worker still running after ${timeoutMs} ms; stderr:\n${this.stderr}`)), timeoutMs);
    });
    try {
      const { code, signal } = await Promise.race([this.exited, timeout]);
      if (code !== 0) throw new Error(`worker exited with ${code ?? signal}; stderr:\n${this.stderr}`);
    } finally {
      clearTimeout(timer);
    }
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    this.child.kill(signal);
  }
}

/** Starts `node <compiled worker> ...args`. */
export function startWorker(script: string, args: readonly string[]): Worker {
  const child = spawn(process.execPath, [script, ...args], {
    env: { ...process.env, NODE_PATH: join(REPO, 'node_modules') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Worker(child);
}
