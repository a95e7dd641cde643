#!/usr/bin/env node
/**
 * The `doclayer` executable (package.json `bin`). Runs one command line and exits with its status.
 */
import { runCli } from './cli';
import { reportError } from './error-report';

/** How long to wait for stray handles (an engine's timers) after the command has finished and closed its database. */
const EXIT_GRACE_MS = 1000;

/** Exits with `status` when nothing is left to run, or after EXIT_GRACE_MS if something still is. */
function exit(status: number): void {
  process.exitCode = status;
  setTimeout(() => process.exit(status), EXIT_GRACE_MS).unref();
}

// A reader that stops early (`doclayer export | head`) closes the pipe: the rest is not wanted.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  process.exit(0);
});

const debug = process.env.DOCLAYER_DEBUG === '1';
runCli(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  cwd: process.cwd(),
  debug,
}).then(exit, (err: unknown) => {
  // runCli reports a command's own failure; what still rejects is closing the database after it.
  const report = reportError(err, debug);
  process.stderr.write(`${report.lines.join('\n')}\n`);
  exit(report.exitCode);
});
