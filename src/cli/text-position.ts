/** A place in a text, as editors number it: lines and columns from 1. */
export interface TextPosition {
  line: number;
  column: number;
}

/**
 * The line and column of a 0-based `offset` into `text`. Lines end at `\n` (a `\r` before it counts
 * as part of the line); columns count UTF-16 code units, as `offset` does.
 */
export function positionOf(text: string, offset: number): TextPosition {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

/** `position` moved by the place its text starts at in a larger text. */
export function offsetBy(position: TextPosition, start: TextPosition): TextPosition {
  return position.line === 1
    ? { line: start.line, column: start.column + position.column - 1 }
    : { line: start.line + position.line - 1, column: position.column };
}
