import { formatDuration, ProgressBar } from '../../src/cli/progress';

function stream(isTTY: boolean) {
  const written: string[] = [];
  return { written, isTTY, columns: 120, write: (text: string) => written.push(text) };
}

describe('ProgressBar', () => {
  it('redraws one line on a terminal, with the bar, count, rate and time left, and erases it at the end', () => {
    let now = 0;
    const out = stream(true);
    const bar = new ProgressBar(out, { verb: 'importing', noun: 'documents', total: 1000, now: () => now });
    now = 2000;
    bar.update(500, 250);
    expect(out.written).toEqual([`\rimporting  [${'#'.repeat(6)}${'.'.repeat(18)}]  25%  500 documents  250/s  ETA 0:06\x1b[K`]);
    now = 2050;
    bar.update(600, 300);
    expect(out.written).toHaveLength(1);
    bar.finish();
    expect(out.written[1]).toBe('\r\x1b[K');
  });

  it('writes a plain line per interval elsewhere, none for a short job', () => {
    let now = 0;
    const out = stream(false);
    const bar = new ProgressBar(out, { verb: 'importing', noun: 'documents', plainIntervalMs: 1000, now: () => now });
    now = 500;
    bar.update(10);
    expect(out.written).toEqual([]);
    now = 1500;
    bar.update(3000);
    now = 1600;
    bar.update(3100);
    expect(out.written).toEqual(['importing  3,000 documents  2,000/s\n']);
    bar.finish();
    expect(out.written).toHaveLength(1);
  });
});

describe('formatDuration', () => {
  it('writes minutes and seconds, and hours when there are any', () => {
    expect([formatDuration(0), formatDuration(6.2), formatDuration(75), formatDuration(3723)]).toEqual(['0:00', '0:07', '1:15', '1:02:03']);
  });
});
