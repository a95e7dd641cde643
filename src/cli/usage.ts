import type { OptionSpec } from './args';
import type { Command } from './commands/command';
import { COMMANDS } from './commands';
import { GLOBAL_OPTIONS } from './options';

/** The text of `doclayer help` and `doclayer help <command>`. */

function optionLabel(spec: OptionSpec): string {
  const name = spec.name === 'help' ? '-h, --help' : `--${spec.name}`;
  if (spec.value === 'none') return name;
  return spec.value === 'optional' ? `${name} [${spec.valueName}]` : `${name} <${spec.valueName}>`;
}

export function usage(): string {
  const forms = COMMANDS.flatMap((c) => c.forms).map((f) => ({ usage: f.usage.split(' [--')[0], summary: f.summary }));
  const width = Math.max(...forms.map((f) => f.usage.length));
  const commands = forms.map((f) => `  ${f.usage.padEnd(width)}  ${f.summary}`);
  const options = GLOBAL_OPTIONS.map((o) => `  ${optionLabel(o).padEnd(34)}${o.description}`);
  return [
    'doclayer: JSON documents and data structures on a transactional key-value store',
    '',
    'Usage: doclayer [options] <command> [arguments]',
    '',
    'Commands:',
    ...commands,
    '',
    'Options (before or after the command):',
    ...options,
    '',
    'Ids: an argument that is an integer (42) names an integer id, anything else a string id;',
    '"42" in JSON quotes is the string. Paths use Couchbase\'s syntax: address.city, items[0].sku, items[-1].',
    'Exit status: 0 done, 1 failed (one line on stderr says why), 2 bad usage.',
    "Run `doclayer help <command>` for a command's arguments, `doclayer demo` for a tour.",
  ].join('\n');
}

export function commandUsage(command: Command): string {
  return [
    ...command.forms.map((f, i) => `${i === 0 ? 'Usage:' : '      '} doclayer ${f.usage}`),
    '',
    ...command.forms.map((f) => f.summary),
    ...(command.details === undefined ? [] : ['', ...command.details]),
    '',
    'Global options: --db <folder> | --memory | --fdb [clusterFile], --collection <scope.collection>, --json',
  ].join('\n');
}
