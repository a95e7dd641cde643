import { DocumentError } from '../../document/errors';

/**
 * Cron expressions for repeatable jobs (docs/queue.md, "Repeatable jobs"): parsing, and the next
 * occurrence after an instant.
 *
 * Syntax: five fields, `minute hour day-of-month month day-of-week`, or six with a leading `second`.
 * A field is a comma-separated list of `*`, `n`, `a-b`, each optionally followed by `/step` (`a/step`
 * means `a-max/step`); months and days of the week also take names (`JAN`..`DEC`, `SUN`..`SAT`, any
 * case), and day-of-week 7 is Sunday as 0 is. The macros `@yearly` (`@annually`), `@monthly`,
 * `@weekly`, `@daily` (`@midnight`) and `@hourly` stand for their usual expressions.
 *
 * Day-of-month and day-of-week follow Vixie cron: when both fields are restricted (neither starts with
 * `*`), a day matches if either does; otherwise the one restricted decides (so `*` and `*\/2` count as
 * unrestricted, as in Vixie cron).
 *
 * Time zone: an occurrence is an instant whose wall-clock time in the zone (UTC by default, or an IANA
 * name read through `Intl.DateTimeFormat`) matches the fields. Across daylight-saving changes: a wall
 * time that does not exist (the hour skipped in spring) has no occurrence, and a wall time that happens
 * twice (the hour repeated in autumn) occurs once, at its first instant. Fields that step through every
 * hour (`*` in the hour field) therefore have an hour less on the spring day and none extra in autumn.
 */

/** A parsed cron expression. */
export interface CronSchedule {
  /** The expression as given. */
  readonly source: string;
  readonly timeZone: string;
  /** The first occurrence strictly after `after` (ms since the epoch), or `undefined` if none within 30 years. */
  next(after: number): number | undefined;
}

interface FieldSpec {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
}

const SECOND: FieldSpec = { name: 'second', min: 0, max: 59 };
const MINUTE: FieldSpec = { name: 'minute', min: 0, max: 59 };
const HOUR: FieldSpec = { name: 'hour', min: 0, max: 23 };
const DAY_OF_MONTH: FieldSpec = { name: 'day-of-month', min: 1, max: 31 };
// Index i of `names` stands for value min + i.
const MONTH: FieldSpec = {
  name: 'month',
  min: 1,
  max: 12,
  names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'],
};
// 7 is Sunday too; it is folded onto 0 after parsing.
const DAY_OF_WEEK: FieldSpec = { name: 'day-of-week', min: 0, max: 7, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] };

const MACROS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** The longest expression accepted, in characters. */
export const MAX_CRON_LENGTH = 256;
/** How far `next` searches before it concludes there is no further occurrence. */
const HORIZON_YEARS = 30;
const DAY_MS = 86_400_000;

/**
 * Parses a cron expression for `timeZone` (default `'UTC'`).
 *
 * @throws DocumentError INVALID_ARGUMENT naming the field that is wrong (or the time zone), and for an
 *   expression that can never match (`0 0 30 2 *`).
 */
export function parseCron(expression: string, timeZone = 'UTC'): CronSchedule {
  if (typeof expression !== 'string') throw invalid(String(expression), 'a cron expression is a string');
  if (expression.length > MAX_CRON_LENGTH) throw invalid(expression.slice(0, 40) + '...', `it is longer than ${MAX_CRON_LENGTH} characters`);
  const trimmed = expression.trim();
  const expanded = MACROS[trimmed.toLowerCase()] ?? trimmed;
  if (expanded.startsWith('@')) throw invalid(expression, `unknown macro ${expanded}`);
  const fields = expanded.split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) {
    throw invalid(expression, `it has ${fields.length} fields; expected 5 (minute hour day-of-month month day-of-week) or 6 (with a leading second)`);
  }
  const withSeconds = fields.length === 6;
  const [sec, min, hour, dom, month, dow] = withSeconds ? fields : ['0', ...fields];
  const weekDays = parseField(expression, dow, DAY_OF_WEEK);
  if (weekDays[7]) weekDays[0] = true;
  const matcher: Matcher = {
    seconds: parseField(expression, sec, SECOND),
    minutes: parseField(expression, min, MINUTE),
    hours: parseField(expression, hour, HOUR),
    days: parseField(expression, dom, DAY_OF_MONTH),
    months: parseField(expression, month, MONTH),
    weekDays,
    daysStar: dom.startsWith('*'),
    weekDaysStar: dow.startsWith('*'),
  };
  if (matcher.weekDaysStar) assertSomeDay(expression, matcher);
  const zone = zoneOf(timeZone);
  const unit = withSeconds ? 1000 : 60_000;
  return {
    source: expression,
    timeZone: zone.name,
    next: (after) => nextOccurrence(matcher, zone, unit, after),
  };
}

interface Matcher {
  readonly seconds: boolean[];
  readonly minutes: boolean[];
  readonly hours: boolean[];
  readonly days: boolean[];
  readonly months: boolean[];
  /** 0 (Sunday) to 6; index 7 is folded onto 0. */
  readonly weekDays: boolean[];
  readonly daysStar: boolean;
  readonly weekDaysStar: boolean;
}

function parseField(expression: string, text: string, spec: FieldSpec): boolean[] {
  const allowed = new Array<boolean>(spec.max + 1).fill(false);
  const fail = (why: string) => invalid(expression, `the ${spec.name} field "${text}": ${why}`);
  if (text === '') throw fail('it is empty');
  for (const item of text.split(',')) {
    const slash = item.indexOf('/');
    const range = slash < 0 ? item : item.slice(0, slash);
    let step = 1;
    if (slash >= 0) {
      const stepText = item.slice(slash + 1);
      if (!/^\d+$/.test(stepText) || Number(stepText) < 1) throw fail(`the step "${stepText}" is not a positive integer`);
      step = Number(stepText);
    }
    let from: number;
    let to: number;
    if (range === '*') {
      from = spec.min;
      to = spec.max === 7 ? 6 : spec.max;
    } else {
      const dash = range.indexOf('-');
      from = valueOf(range.slice(0, dash < 0 ? undefined : dash), spec, fail);
      // `a/step` runs from a to the field's maximum.
      to = dash >= 0 ? valueOf(range.slice(dash + 1), spec, fail) : slash >= 0 ? spec.max : from;
      if (to < from) throw fail(`the range ${from}-${to} runs backwards`);
    }
    for (let v = from; v <= to; v += step) allowed[v] = true;
  }
  return allowed;
}

function valueOf(text: string, spec: FieldSpec, fail: (why: string) => DocumentError): number {
  const named = spec.names?.indexOf(text.toUpperCase()) ?? -1;
  if (named >= 0) return spec.min + named;
  if (!/^\d+$/.test(text)) throw fail(`"${text}" is not a number${spec.names === undefined ? '' : ' or a name'}`);
  const value = Number(text);
  if (value < spec.min || value > spec.max) throw fail(`${value} is out of ${spec.min}-${spec.max}`);
  return value;
}

/** Rejects a day-of-month restriction that no allowed month has (`30 2`), when day-of-week cannot save it. */
function assertSomeDay(expression: string, m: Matcher): void {
  const longest = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  for (let month = 1; month <= 12; month++) {
    if (!m.months[month]) continue;
    for (let day = 1; day <= longest[month - 1]; day++) if (m.days[day]) return;
  }
  throw invalid(expression, 'the day-of-month field allows no day of the months allowed: it never matches');
}

function dayMatches(m: Matcher, day: number, weekDay: number): boolean {
  if (m.daysStar || m.weekDaysStar) return m.days[day] && m.weekDays[weekDay];
  return m.days[day] || m.weekDays[weekDay];
}

/**
 * The first wall-clock time (ms, as if UTC) at or after `wall` that matches, on whole units; `undefined`
 * past `limitWall`. Walks down the fields, jumping to the start of the next month, day, hour or minute
 * whenever a coarser field does not match.
 */
function nextWall(m: Matcher, wall: number, limitWall: number): number | undefined {
  let w = wall;
  while (w <= limitWall) {
    const d = new Date(w);
    const year = d.getUTCFullYear();
    const month = d.getUTCMonth();
    const day = d.getUTCDate();
    const hour = d.getUTCHours();
    const minute = d.getUTCMinutes();
    if (!m.months[month + 1]) w = Date.UTC(year, month + 1, 1);
    else if (!dayMatches(m, day, d.getUTCDay())) w = Date.UTC(year, month, day + 1);
    else if (!m.hours[hour]) w = Date.UTC(year, month, day, hour + 1);
    else if (!m.minutes[minute]) w = Date.UTC(year, month, day, hour, minute + 1);
    else if (!m.seconds[d.getUTCSeconds()]) w = Date.UTC(year, month, day, hour, minute, d.getUTCSeconds() + 1);
    else return w;
  }
  return undefined;
}

function nextOccurrence(m: Matcher, zone: Zone, unit: number, after: number): number | undefined {
  if (!Number.isFinite(after)) return undefined;
  // Walls before the wall time of `after` have their first instant before it (see `firstInstant`), so
  // the search starts at the first whole unit after it.
  const afterWall = zone.wallOf(after);
  const limitWall = afterWall + HORIZON_YEARS * 366 * DAY_MS;
  let from = Math.floor(afterWall / unit) * unit + unit;
  for (;;) {
    const wall = nextWall(m, from, limitWall);
    if (wall === undefined) return undefined;
    const instant = zone.firstInstant(wall);
    // Walls that do not exist are skipped; walls repeated in autumn, met again on their second pass,
    // have occurred already.
    if (instant !== undefined && instant > after) return instant;
    from = wall + unit;
  }
}

/** A time zone: instants to wall-clock times and back. */
interface Zone {
  readonly name: string;
  /** The wall-clock time (ms, as if UTC) at `instant`. */
  wallOf(instant: number): number;
  /** The first instant whose wall-clock time is `wall`, or `undefined` if the zone skips it. */
  firstInstant(wall: number): number | undefined;
}

const UTC_ZONE: Zone = { name: 'UTC', wallOf: (t) => t, firstInstant: (w) => w };
const zones = new Map<string, Zone>();

function zoneOf(timeZone: string): Zone {
  if (typeof timeZone !== 'string') throw new DocumentError('INVALID_ARGUMENT', `tz is an IANA time zone name, got ${String(timeZone)}`);
  if (timeZone === 'UTC') return UTC_ZONE;
  const known = zones.get(timeZone);
  if (known !== undefined) return known;
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch {
    throw new DocumentError('INVALID_ARGUMENT', `tz "${timeZone}" is not a time zone this runtime knows (an IANA name such as "Europe/Paris")`);
  }
  const offsetAt = (instant: number): number => {
    const second = Math.floor(instant / 1000) * 1000;
    const parts: Record<string, string> = {};
    for (const part of format.formatToParts(second)) parts[part.type] = part.value;
    const year = parts.era === 'BC' ? 1 - Number(parts.year) : Number(parts.year);
    const wall = Date.UTC(year, Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
    // Date.UTC maps years 0-99 to 1900-1999.
    const fixed = year >= 0 && year < 100 ? new Date(wall).setUTCFullYear(year) : wall;
    return fixed - second;
  };
  const zone: Zone = {
    name: timeZone,
    wallOf: (instant) => instant + offsetAt(instant),
    firstInstant: (wall) => {
      // Offsets change at most once within a day or so of any instant (true of every zone in the
      // database), so the instants of `wall` are among wall - offset for the offsets around it.
      let first: number | undefined;
      for (const around of [wall - DAY_MS, wall, wall + DAY_MS]) {
        const offset = offsetAt(around);
        const instant = wall - offset;
        if (offsetAt(instant) === offset && (first === undefined || instant < first)) first = instant;
      }
      return first;
    },
  };
  zones.set(timeZone, zone);
  return zone;
}

function invalid(expression: string, why: string): DocumentError {
  return new DocumentError('INVALID_ARGUMENT', `cron "${expression}": ${why}`);
}
