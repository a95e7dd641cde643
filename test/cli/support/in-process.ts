import { Readable } from 'stream';
import { runCli } from '../../../src/cli/cli';
import type { OutputStream } from '../../../src/cli/output';

export interface InProcessRun {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `doclayer <args>` in this process (`runCli`, what the binary runs) in the folder `cwd`, with
 * `input` on stdin; resolves to its status and output. `onStdout` sees the output so far each time
 * the command writes some (a long-running command's, such as `serve`'s address).
 */
export async function runInProcess(
  args: string[],
  options: { cwd: string; input?: string; onStdout?: (stdout: string) => void },
): Promise<InProcessRun> {
  let stdout = '';
  let stderr = '';
  const stream = (append: (text: string) => void): OutputStream => ({
    write: (text: string, callback?: (err?: Error | null) => void) => {
      append(text);
      callback?.();
      return true;
    },
    once: () => undefined,
  });
  const status = await runCli(args, {
    stdin: Readable.from([Buffer.from(options.input ?? '')]),
    stdout: stream((text) => {
      stdout += text;
      options.onStdout?.(stdout);
    }),
    stderr: stream((text) => (stderr += text)),
    cwd: options.cwd,
    debug: true,
  });
  return { status, stdout, stderr };
}
