/**
 * Context keys parse exactly as Node-RED's `normalisePropertyExpression` parses them: the same parts,
 * and the same INVALID_EXPR message for every malformed expression. Checked on examples and on random
 * strings over the characters that matter to the parser, against @node-red/util itself.
 */
import fc from 'fast-check';
import { nodeRedUtil } from './support/node-red-reference';
import { isContextStoreError } from '../../src/node-red/errors';
import { parsePropertyExpression, resolveExpression } from '../../src/node-red/property-expression';
import { testSeed } from '../support/random';

type Outcome = { parts: unknown[] } | { error: string };

function nodeRed(text: string): Outcome {
  try {
    return { parts: nodeRedUtil.normalisePropertyExpression(text) };
  } catch (err) {
    expect((err as { code?: string }).code).toBe('INVALID_EXPR');
    return { error: (err as Error).message };
  }
}

function ours(text: string): Outcome {
  const parsed = parsePropertyExpression(text);
  if (parsed.error) {
    expect(isContextStoreError(parsed.error, 'INVALID_EXPR')).toBe(true);
    return { error: parsed.error.message };
  }
  return { parts: [...parsed.parts] };
}

describe('parsePropertyExpression', () => {
  it.each([
    'a',
    'a.b.c',
    'a.b[0]',
    'a["b c"].d',
    "a['b.c']",
    'a.0.b',
    'a.0',
    '5',
    '5.a',
    '5[0]',
    '"a b"',
    '"a"."b"',
    '$x._y',
    'a[0][1]',
    'a[12345678901234567890]',
    "a['b']c",
  ])('gives the parts Node-RED gives for %j', (text) => {
    expect(ours(text)).toEqual(nodeRed(text));
  });

  it.each(['', '.a', 'a.', 'a..b', 'a.-b', '[0]', 'a[', 'a[b]', 'a[0', 'a]', 'a b', 'a[""]', 'a"b"', '"a"b', 'a["b"x]', 'a[1a]', '"abc', 'a[msg.b'])(
    'rejects %j with the message Node-RED gives',
    (text) => {
      const expected = nodeRed(text);
      expect(expected).toHaveProperty('error');
      expect(ours(text)).toEqual(expected);
    },
  );

  it('agrees with Node-RED on random expressions', () => {
    const piece = fc.constantFrom('a', 'b', 'x1', '$', '_', '0', '12', '.', '[', ']', '"', "'", ' ', '-', 'é');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.join('');
        expect(ours(text)).toEqual(nodeRed(text));
      }),
      { seed: testSeed(5101), numRuns: 3000 },
    );
  });

  it('keeps an embedded [msg...] expression as a reference, resolved by its lookup', async () => {
    const parsed = parsePropertyExpression('a[msg.b].c');
    expect(parsed.parts).toEqual(['a', { kind: 'reference', expression: 'msg.b', position: 2 }, 'c']);
    await expect(resolveExpression(parsed, async (expression) => (expression === 'msg.b' ? 'key' : undefined))).resolves.toEqual(['a', 'key', 'c']);
  });

  it('reports a reference that resolves to undefined as Node-RED does', async () => {
    const scope = { a: {} };
    let message = '';
    try {
      nodeRedUtil.normalisePropertyExpression('a[msg.missing]', scope);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe('Invalid expression started at position 2');
    await expect(resolveExpression(parsePropertyExpression('a[msg.missing]'), async () => undefined)).rejects.toThrow(message);
  });

  it('reports an unresolvable reference before a later syntax error, as Node-RED does', async () => {
    const text = 'a[msg.missing].';
    let message = '';
    try {
      nodeRedUtil.normalisePropertyExpression(text, { a: {} });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe('Invalid expression started at position 2');
    await expect(resolveExpression(parsePropertyExpression(text), async () => undefined)).rejects.toThrow(message);
  });
});
