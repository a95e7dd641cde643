import type { DocId, JsonValue } from '../document/types';
import { CliError, caretLines } from './error-report';
import { JsonSyntaxError, parseJson } from './json-text';
import { positionOf } from './text-position';

/**
 * Values given as command-line arguments: document ids and JSON.
 *
 * Ids: documents may have string or integer ids, and an argument is text, so an argument that is an
 * integer in canonical form (`42`, `-7`, not `042`) names the integer id; any other text names the
 * string id; an argument in JSON double quotes (`'"42"'`) always names the string id. Ids are printed
 * back the same way, so what `scan` prints can be passed to `get`.
 */

const CANONICAL_INTEGER = /^-?(0|[1-9]\d*)$/;

export function parseIdArgument(text: string): DocId {
  if (CANONICAL_INTEGER.test(text)) {
    const n = Number(text);
    return Number.isSafeInteger(n) ? n : BigInt(text);
  }
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) {
    try {
      const value = JSON.parse(text) as unknown;
      if (typeof value === 'string') return value;
    } catch {
      // Not JSON: the text itself is the id.
    }
  }
  return text;
}

/** An id as an argument that {@link parseIdArgument} reads back as the same id. */
export function formatIdArgument(id: DocId): string {
  if (typeof id !== 'string') return String(id);
  return CANONICAL_INTEGER.test(id) || (id.startsWith('"') && id.endsWith('"')) ? JSON.stringify(id) : id;
}

/**
 * A JSON argument (`set`'s value, a structure's element). Strings need their double quotes, which the
 * shell needs quoting around: `'"Paris"'`.
 *
 * @throws CliError naming `what`, with the column and a caret under the offending character.
 */
export function parseJsonArgument(text: string, what: string): JsonValue {
  try {
    return parseJson(text);
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    const { line, column } = positionOf(text, err.offset);
    const where = line === 1 ? `column ${column}` : `line ${line}, column ${column}`;
    const hint = /^[A-Za-z_]/.test(text.trim()) ? ` (a string is written in double quotes: '"${text.trim()}"')` : '';
    const shown = text.split('\n')[line - 1];
    throw new CliError(`bad JSON in ${what} at ${where}: ${err.reason}${hint}`, caretLines(shown, column - 1));
  }
}
