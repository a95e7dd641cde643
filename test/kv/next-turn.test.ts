/**
 * Settling on a later turn (src/kv/client/next-turn.ts): the order of what is due, and what a settle
 * makes due going to the next turn, across many turns (the arrays holding what is due are reused).
 */
import { onNextTurn, resolveOnNextTurn, turnsTaken } from '../../src/kv/client/next-turn';

describe('onNextTurn', () => {
  it('settles in the order made, on a later turn; what a settle makes due waits for the turn after', async () => {
    for (let round = 0; round < 50; round++) {
      const seen: string[] = [];
      const turns: number[] = [];
      const done = new Promise<void>((resolve) => {
        const made = turnsTaken();
        for (let i = 0; i < (round % 7) + 1; i++) {
          onNextTurn(() => {
            seen.push(`first ${i}`);
            turns.push(turnsTaken());
            if (i === 0)
              onNextTurn(() => {
                seen.push('second');
                turns.push(turnsTaken());
                resolve();
              });
          });
        }
        expect(turnsTaken()).toBe(made);
      });
      await done;
      const n = (round % 7) + 1;
      expect(seen).toEqual([...Array.from({ length: n }, (_, i) => `first ${i}`), 'second']);
      // Every first one in one turn, the second in a later one.
      expect(new Set(turns.slice(0, n)).size).toBe(1);
      expect(turns[n]).toBeGreaterThan(turns[0]);
    }
  });

  it('hands each promise its own value after a burst larger than the arrays it keeps', async () => {
    const values = Array.from({ length: 10_000 }, (_, i) => i);
    expect(await Promise.all(values.map((v) => resolveOnNextTurn(v)))).toEqual(values);
    expect(await Promise.all([1, 2, 3].map((v) => resolveOnNextTurn(v)))).toEqual([1, 2, 3]);
  });
});
