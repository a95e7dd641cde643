/**
 * Cron expressions (src/structures/queue/cron.ts): hand-computed occurrences, typed errors naming the
 * wrong field, and seeded random expressions checked against a brute-force reference that scans
 * instant by instant and matches each one's wall-clock time in its zone with sets the generator
 * computed itself (not the parser's).
 */
import { parseCron } from '../../src/structures/queue/cron';
import { DocumentError } from '../../src/document/errors';
import { Random, testSeed } from '../support/random';

const iso = (t: number | undefined) => (t === undefined ? 'none' : new Date(t).toISOString());

function occurrences(expression: string, from: string, count: number, tz?: string): string[] {
  const cron = parseCron(expression, tz);
  const out: string[] = [];
  let t = Date.parse(from);
  for (let i = 0; i < count; i++) {
    const next = cron.next(t);
    out.push(iso(next));
    if (next === undefined) break;
    t = next;
  }
  return out;
}

function errorOf(expression: string, tz?: string): DocumentError {
  try {
    parseCron(expression, tz);
  } catch (err) {
    if (err instanceof DocumentError) return err;
    throw err;
  }
  throw new Error(`"${expression}" parsed`);
}

describe('parseCron: occurrences', () => {
  it('steps, lists and ranges in UTC, strictly after the instant given', () => {
    expect(occurrences('*/15 * * * *', '2026-01-01T00:15:00Z', 3)).toEqual([
      '2026-01-01T00:30:00.000Z',
      '2026-01-01T00:45:00.000Z',
      '2026-01-01T01:00:00.000Z',
    ]);
    expect(occurrences('5,10-12 3 * * *', '2026-01-01T00:00:00Z', 5)).toEqual([
      '2026-01-01T03:05:00.000Z',
      '2026-01-01T03:10:00.000Z',
      '2026-01-01T03:11:00.000Z',
      '2026-01-01T03:12:00.000Z',
      '2026-01-02T03:05:00.000Z',
    ]);
    expect(occurrences('10/20 * * * *', '2026-01-01T00:00:00Z', 3)).toEqual([
      '2026-01-01T00:10:00.000Z',
      '2026-01-01T00:30:00.000Z',
      '2026-01-01T00:50:00.000Z',
    ]);
  });

  it('a leading seconds field', () => {
    expect(occurrences('*/20 * * * * *', '2026-01-01T00:00:00Z', 4)).toEqual([
      '2026-01-01T00:00:20.000Z',
      '2026-01-01T00:00:40.000Z',
      '2026-01-01T00:01:00.000Z',
      '2026-01-01T00:01:20.000Z',
    ]);
    expect(occurrences('30 0 12 * * *', '2026-01-01T12:00:30.001Z', 1)).toEqual(['2026-01-02T12:00:30.000Z']);
  });

  it('names, Sunday as 0 or 7, and macros', () => {
    expect(occurrences('0 9 * jan-feb mon', '2026-01-01T00:00:00Z', 2)).toEqual(['2026-01-05T09:00:00.000Z', '2026-01-12T09:00:00.000Z']);
    expect(occurrences('0 0 * * 7', '2026-01-01T00:00:00Z', 1)).toEqual(occurrences('0 0 * * SUN', '2026-01-01T00:00:00Z', 1));
    expect(occurrences('@monthly', '2026-01-15T00:00:00Z', 2)).toEqual(['2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z']);
    expect(occurrences('@hourly', '2026-01-15T00:00:00Z', 1)).toEqual(['2026-01-15T01:00:00.000Z']);
  });

  it('day-of-month OR day-of-week when both are restricted, as Vixie cron', () => {
    // The 13th, and every Friday (Jan 2, 9, 16 2026 are Fridays).
    expect(occurrences('0 0 13 * FRI', '2026-01-01T00:00:00Z', 4)).toEqual([
      '2026-01-02T00:00:00.000Z',
      '2026-01-09T00:00:00.000Z',
      '2026-01-13T00:00:00.000Z',
      '2026-01-16T00:00:00.000Z',
    ]);
    // `*/2` counts as unrestricted: odd days that are also Fridays (Jan 9, 23, Feb 13).
    expect(occurrences('0 0 */2 * FRI', '2026-01-01T00:00:00Z', 3)).toEqual([
      '2026-01-09T00:00:00.000Z',
      '2026-01-23T00:00:00.000Z',
      '2026-02-13T00:00:00.000Z',
    ]);
  });

  it('February 29th, years apart', () => {
    expect(occurrences('0 0 29 2 *', '2026-01-01T00:00:00Z', 2)).toEqual(['2028-02-29T00:00:00.000Z', '2032-02-29T00:00:00.000Z']);
  });

  it('in a time zone: skipped wall times do not occur, repeated ones occur once', () => {
    // New York, 2026: clocks go 02:00 -> 03:00 on March 8 and 02:00 -> 01:00 on November 1.
    expect(occurrences('30 2 * * *', '2026-03-07T00:00:00Z', 3, 'America/New_York')).toEqual([
      '2026-03-07T07:30:00.000Z',
      '2026-03-09T06:30:00.000Z',
      '2026-03-10T06:30:00.000Z',
    ]);
    expect(occurrences('30 1 * * *', '2026-10-31T00:00:00Z', 3, 'America/New_York')).toEqual([
      '2026-10-31T05:30:00.000Z',
      '2026-11-01T05:30:00.000Z',
      '2026-11-02T06:30:00.000Z',
    ]);
    expect(occurrences('0 * * * *', '2026-11-01T03:30:00Z', 4, 'America/New_York')).toEqual([
      '2026-11-01T04:00:00.000Z',
      '2026-11-01T05:00:00.000Z',
      '2026-11-01T07:00:00.000Z',
      '2026-11-01T08:00:00.000Z',
    ]);
    // Half-hour offsets: 09:00 in Kolkata is 03:30 UTC.
    expect(occurrences('0 9 * * *', '2026-06-01T00:00:00Z', 1, 'Asia/Kolkata')).toEqual(['2026-06-01T03:30:00.000Z']);
  });
});

describe('parseCron: errors', () => {
  it.each([
    ['* * * *', /4 fields/],
    ['60 * * * *', /the minute field "60": 60 is out of 0-59/],
    ['* 24 * * *', /the hour field "24"/],
    ['* * 0 * *', /the day-of-month field "0"/],
    ['* * * 13 *', /the month field "13"/],
    ['* * * FOO *', /the month field "FOO": "FOO" is not a number or a name/],
    ['* * * * 8', /the day-of-week field "8"/],
    ['*/0 * * * *', /the minute field "\*\/0": the step "0"/],
    ['5-1 * * * *', /runs backwards/],
    ['1,,2 * * * *', /the minute field "1,,2"/],
    ['61 * * * * *', /the second field "61"/],
    ['0 0 30 2 *', /never matches/],
    ['@sometimes', /unknown macro/],
  ])('%s is INVALID_ARGUMENT', (expression, message) => {
    const err = errorOf(expression);
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toMatch(message);
  });

  it('names the time zone it does not know', () => {
    const err = errorOf('* * * * *', 'Mars/Olympus');
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toMatch(/Mars\/Olympus/);
  });
});

/** A random field: its text and the values it allows (computed here, not by the parser). */
function randomField(random: Random, min: number, max: number, names?: readonly string[]): { text: string; allowed: Set<number>; star: boolean } {
  const allowed = new Set<number>();
  if (random.chance(0.3)) {
    const step = random.chance(0.5) ? 1 : random.between(2, Math.max(2, Math.floor((max - min) / 2)));
    for (let v = min; v <= max; v += step) allowed.add(v);
    return { text: step === 1 ? '*' : `*/${step}`, allowed, star: true };
  }
  const items: string[] = [];
  const name = (v: number) => (names !== undefined && random.chance(0.3) ? names[v - min] : String(v));
  for (let i = random.between(1, 3); i > 0; i--) {
    const a = random.between(min, max);
    if (random.chance(0.4)) {
      items.push(name(a));
      allowed.add(a);
      continue;
    }
    const b = random.between(a, max);
    const step = random.chance(0.5) ? 1 : random.between(1, 5);
    for (let v = a; v <= b; v += step) allowed.add(v);
    items.push(`${name(a)}-${name(b)}${step === 1 ? '' : `/${step}`}`);
  }
  return { text: items.join(','), allowed, star: false };
}

const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

/** Wall-clock fields of an instant in a zone, through Intl (the reference's own reading). */
function wallFields(format: Intl.DateTimeFormat, t: number) {
  const p: Record<string, string> = {};
  for (const part of format.formatToParts(t)) p[part.type] = part.value;
  const fields = { year: +p.year, month: +p.month, day: +p.day, hour: +p.hour, minute: +p.minute, second: +p.second };
  return {
    ...fields,
    weekDay: new Date(Date.UTC(fields.year, fields.month - 1, fields.day)).getUTCDay(),
    wall: Date.UTC(fields.year, fields.month - 1, fields.day, fields.hour, fields.minute, fields.second),
  };
}

describe('parseCron against a brute-force scan', () => {
  // Windows around 2026's daylight-saving changes, and zones with half-hour offsets and shifts.
  const cases = [
    { tz: 'UTC', from: '2026-02-27T00:00:00Z' },
    { tz: 'America/New_York', from: '2026-03-07T12:00:00Z' },
    { tz: 'America/New_York', from: '2026-10-31T12:00:00Z' },
    { tz: 'Europe/Berlin', from: '2026-10-24T12:00:00Z' },
    { tz: 'Australia/Lord_Howe', from: '2026-04-04T00:00:00Z' },
    { tz: 'Asia/Kolkata', from: '2026-01-01T00:00:00Z' },
  ];

  it.each(cases)('random expressions in $tz from $from', ({ tz, from }) => {
    const random = new Random(testSeed(cases.findIndex((c) => c.tz === tz && c.from === from) + 18));
    const format = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    const start = Date.parse(from);
    for (let round = 0; round < 6; round++) {
      const withSeconds = round % 3 === 2;
      // Seconds expressions are scanned second by second over 2 hours, others minute by minute over 2 days.
      const unit = withSeconds ? 1000 : 60_000;
      const span = withSeconds ? 2 * 3_600_000 : 2 * 86_400_000;
      const sec = randomField(random, 0, 59);
      const min = randomField(random, 0, 59);
      const hour = randomField(random, 0, 23);
      const dom = randomField(random, 1, 31);
      const month = random.chance(0.7)
        ? { text: '*', allowed: new Set(Array.from({ length: 12 }, (_, i) => i + 1)), star: true }
        : randomField(random, 1, 12, MONTH_NAMES);
      const dow = randomField(random, 0, 6, DAY_NAMES);
      const text = [withSeconds ? sec.text : undefined, min.text, hour.text, dom.text, month.text, dow.text].filter((f) => f !== undefined).join(' ');
      let cron;
      try {
        cron = parseCron(text, tz);
      } catch (err) {
        // Only an expression that can never match may be refused.
        expect((err as Error).message).toMatch(/never matches/);
        continue;
      }
      const matches = (f: ReturnType<typeof wallFields>, maxWall: number): boolean => {
        if (f.wall <= maxWall) return false;
        if (withSeconds ? !sec.allowed.has(f.second) : f.second !== 0) return false;
        if (!min.allowed.has(f.minute) || !hour.allowed.has(f.hour) || !month.allowed.has(f.month)) return false;
        const dayOk =
          dom.star || dow.star ? dom.allowed.has(f.day) && dow.allowed.has(f.weekDay) : dom.allowed.has(f.day) || dow.allowed.has(f.weekDay);
        return dayOk;
      };
      // The reference: every instant in the window, in order; a wall time already seen (the autumn
      // repeat) does not match again.
      const expected: number[] = [];
      let maxWall = wallFields(format, start).wall;
      for (let t = start + unit; t <= start + span; t += unit) {
        const f = wallFields(format, t);
        if (matches(f, maxWall)) expected.push(t);
        maxWall = Math.max(maxWall, f.wall);
      }
      const got: number[] = [];
      for (let t = cron.next(start); t !== undefined && t <= start + span; t = cron.next(t)) got.push(t);
      expect({ text, got: got.map(iso) }).toEqual({ text, got: expected.map(iso) });
    }
  });
});
