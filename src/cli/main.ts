#!/usr/bin/env node
/**
 * The `doclayer` executable (package.json `bin`). Runs one command line and exits with its status.
 */
import { runCli } from './cli';

/** How long to wait for stray handles (an engine's timers) after the command has finished and closed its database. */
const EXIT_GRACE_MS = 1000;

// A reader that stops early (`doclayer export | head`) closes the pipe: the rest is not wanted.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  process.exit(0);
});

runCli(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  cwd: process.cwd(),
  debug: process.env.DOCLAYER_DEBUG === '1',
}).then((status) => {
  process.exitCode = status;
  setTimeout(() => process.exit(status), EXIT_GRACE_MS).unref();
});
