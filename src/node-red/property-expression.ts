import { ContextStoreError } from './errors';

/**
 * Context keys are Node-RED property expressions (`a.b[0]`, `a["b c"].d`), parsed exactly as
 * `RED.util.normalisePropertyExpression` parses them: the same parts and the same INVALID_EXPR
 * messages at the same positions, quirks included (a segment of digits before a `.` becomes a number,
 * the last segment stays a string: `a.0.b` is `['a', 0, 'b']` but `a.0` is `['a', '0']`).
 *
 * An expression can embed another: in `a[msg.b]` the part is the value of the context key `b` of the
 * same scope (Node-RED evaluates it against the scope's data, as it does against a message in a
 * Change node). Such parts come out of the parser as {@link Reference}s; {@link resolveExpression}
 * replaces them with their values, reading the store through a lookup function.
 */

/** An embedded `[msg....]` expression, replaced by its value when the key is resolved. */
export interface Reference {
  readonly kind: 'reference';
  /** The text between the brackets, e.g. `msg.b`. */
  readonly expression: string;
  /** Where the embedded expression starts, for the error when it cannot be resolved. */
  readonly position: number;
}

export type ExpressionPart = string | number | Reference;

/**
 * A parsed expression: its parts up to the first syntax error, and that error. Node-RED resolves an
 * embedded reference as it parses, so a reference that cannot be resolved is reported before a syntax
 * error after it; keeping both lets {@link resolveExpression} report them in that order.
 */
export interface ParsedExpression {
  readonly parts: readonly ExpressionPart[];
  readonly error?: ContextStoreError;
}

/** A part after resolution: a string or number from the text, or any value a reference produced. */
export type ResolvedPart = unknown;

function invalid(message: string): ContextStoreError {
  return new ContextStoreError('INVALID_EXPR', message);
}

const DIGITS = /^\d+$/;
const IDENTIFIER_START = /[a-z0-9$_]/i;

/** Parses `text` into parts; never throws (the error is returned with the parts before it). */
export function parsePropertyExpression(text: string): ParsedExpression {
  const parts: ExpressionPart[] = [];
  const fail = (message: string): ParsedExpression => ({ parts, error: invalid(message) });
  const length = text.length;
  if (length === 0) return fail('Invalid property expression: zero-length');
  let start = 0;
  let inString = false;
  let inBox = false;
  let quote = '';
  for (let i = 0; i < length; i++) {
    const c = text[i];
    if (inString) {
      if (c !== quote) continue;
      if (i === start) return fail(`Invalid property expression: zero-length string at position ${start}`);
      parts.push(text.substring(start, i));
      const next = text[i + 1];
      if (inBox && next !== ']') return fail(`Invalid property expression: unexpected array expression at position ${start}`);
      if (!inBox && i + 1 !== length && next !== '[' && next !== '.') {
        return fail(`Invalid property expression: unexpected ${next} expression at position ${i + 1}`);
      }
      start = i + 1;
      inString = false;
      continue;
    }
    if (c === "'" || c === '"') {
      if (i !== start) return fail(`Invalid property expression: unexpected ${c} at position ${i}`);
      inString = true;
      quote = c;
      start = i + 1;
    } else if (c === '.') {
      if (i === 0) return fail('Invalid property expression: unexpected . at position 0');
      if (start !== i) {
        const segment = text.substring(start, i);
        parts.push(DIGITS.test(segment) ? parseInt(segment, 10) : segment);
      }
      if (i === length - 1) return fail('Invalid property expression: unterminated expression');
      if (!IDENTIFIER_START.test(text[i + 1])) {
        return fail(`Invalid property expression: unexpected ${text[i + 1]} at position ${i + 1}`);
      }
      start = i + 1;
    } else if (c === '[') {
      if (i === 0) return fail(`Invalid property expression: unexpected ${c} at position ${i}`);
      if (start !== i) parts.push(text.substring(start, i));
      if (i === length - 1) return fail('Invalid property expression: unterminated expression');
      if (/^msg[.[]/.test(text.substring(i + 1))) {
        // Node-RED finds the end by counting brackets only: quotes inside do not hide them.
        const end = closingBracket(text, i);
        if (end < 0) return fail(`Invalid property expression: unmatched '[' at position ${i}`);
        parts.push({ kind: 'reference', expression: text.substring(i + 1, end), position: i + 1 });
        inBox = false;
        i = end;
        start = end + 1;
        continue;
      }
      if (!/["'\d]/.test(text[i + 1])) {
        return fail(`Invalid property expression: unexpected ${text[i + 1]} at position ${i + 1}`);
      }
      start = i + 1;
      inBox = true;
    } else if (c === ']') {
      if (!inBox) return fail(`Invalid property expression: unexpected ${c} at position ${i}`);
      if (start !== i) {
        const segment = text.substring(start, i);
        if (!DIGITS.test(segment)) {
          return fail(`Invalid property expression: unexpected array expression at position ${start}`);
        }
        parts.push(parseInt(segment, 10));
      }
      start = i + 1;
      inBox = false;
    } else if (c === ' ') {
      return fail(`Invalid property expression: unexpected ' ' at position ${i}`);
    }
  }
  if (inBox || inString) return fail('Invalid property expression: unterminated expression');
  if (start < length) parts.push(text.substring(start));
  return { parts };
}

/** The index of the `]` that closes the `[` at `open`, or -1. */
function closingBracket(text: string, open: number): number {
  let depth = 1;
  for (let j = open + 1; j < text.length; j++) {
    if (text[j] === '[') depth++;
    else if (text[j] === ']') depth--;
    if (depth === 0) return j;
  }
  return -1;
}

/**
 * Reads the value an embedded expression names (`msg.b` names the context key `b` of the same
 * scope), or `undefined` when it cannot: the expression is invalid, or a parent along it is missing
 * (where `getObjectProperty` throws). Resolving the expression's own references is the lookup's job
 * (it calls {@link resolveExpression} again). Errors it throws (a failed read) propagate unchanged.
 */
export type ReferenceLookup = (expression: string) => Promise<unknown>;

/**
 * The parts of a parsed expression with references replaced by their values, read in order through
 * `lookup`; then the expression's syntax error, if it has one.
 *
 * @throws ContextStoreError INVALID_EXPR: the syntax error, or `Invalid expression started at
 *   position N` for a reference whose lookup fails or finds `undefined`.
 */
export async function resolveExpression(parsed: ParsedExpression, lookup: ReferenceLookup): Promise<ResolvedPart[]> {
  const resolved: ResolvedPart[] = [];
  for (const part of parsed.parts) {
    if (typeof part !== 'object') {
      resolved.push(part);
      continue;
    }
    const value = await lookup(part.expression);
    if (value === undefined) throw invalid(`Invalid expression started at position ${part.position}`);
    resolved.push(value);
  }
  if (parsed.error) throw parsed.error;
  return resolved;
}
