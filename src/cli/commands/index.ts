import { backupCommand } from './backup';
import { changesCommand } from './changes';
import { checkCommand } from './check';
import type { Command } from './command';
import { countCommand } from './count';
import { demoCommand } from './demo';
import { exportCommand } from './export';
import { findCommand } from './find';
import { getCommand } from './get';
import { importCommand } from './import';
import { indexCommand } from './index-command';
import { manifestCommand } from './manifest';
import { removeCommand } from './remove';
import { scanCommand } from './scan';
import { serveCommand } from './serve';
import { setCommand } from './set';
import { statsCommand } from './stats';
import { counterCommand, listCommand, queueCommand, sortedSetCommand } from './structures';

/** Every command, in the order `doclayer help` lists them. */
export const COMMANDS: readonly Command[] = [
  demoCommand,
  importCommand,
  exportCommand,
  getCommand,
  setCommand,
  removeCommand,
  scanCommand,
  findCommand,
  countCommand,
  indexCommand,
  changesCommand,
  listCommand,
  queueCommand,
  counterCommand,
  sortedSetCommand,
  manifestCommand,
  statsCommand,
  checkCommand,
  backupCommand,
  serveCommand,
];

export const COMMANDS_BY_NAME: ReadonlyMap<string, Command> = new Map(COMMANDS.map((c) => [c.name, c]));

export type { Command, CommandContext } from './command';
