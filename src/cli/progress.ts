/**
 * Progress of a long job on stderr. On a terminal: one line redrawn in place (a bar, the count, the
 * rate and the time left), erased when the job ends. Elsewhere (a pipe, a log file, CI): a plain line
 * every few seconds, which a log keeps readable.
 *
 * Hand-written rather than `cli-progress`, which does not do what the tests ask (run on the same
 * inputs): it reads its own clock (`Date.now` and a redraw timer), so a test cannot drive it; on a
 * pipe it prints a line as soon as it starts, so a job of a few milliseconds leaves one in the log;
 * its ETA is written `6s` and averaged over its last updates; and the rate of records while the bar
 * counts bytes would still be computed here and passed in. It would also bring four more packages.
 */

/** Where progress is written: a stream, and whether it is a terminal (and how wide). */
export interface ProgressStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export interface ProgressOptions {
  /** What is counted, plural: `'documents'`. */
  noun: string;
  /** What the job does, shown first: `'importing'`. */
  verb: string;
  /** The total amount of work, in the unit of `work` (bytes of a file, documents); absent when unknown. */
  total?: number;
  /** Time between plain lines when not on a terminal. Default 2,000 ms. */
  plainIntervalMs?: number;
  /** Clock in ms; default `Date.now`. */
  now?: () => number;
}

/** How often the terminal line is redrawn at most. */
const REDRAW_MS = 100;
const BAR_WIDTH = 24;

export class ProgressBar {
  private readonly started: number;
  private lastDraw = -Infinity;
  private drawn = false;
  private items = 0;
  private work = 0;
  private readonly now: () => number;

  constructor(
    private readonly stream: ProgressStream,
    private readonly options: ProgressOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.started = this.now();
    // A plain line only once the job has run for an interval: a short job prints none.
    if (!stream.isTTY) this.lastDraw = this.started;
  }

  /**
   * Reports `items` done (what the rate counts) and `work` done (what the fraction and ETA are of;
   * the same as `items` when absent).
   */
  update(items: number, work = items): void {
    this.items = items;
    this.work = work;
    const now = this.now();
    const interval = this.stream.isTTY ? REDRAW_MS : (this.options.plainIntervalMs ?? 2000);
    if (now - this.lastDraw < interval) return;
    this.lastDraw = now;
    if (this.stream.isTTY) {
      this.stream.write(`\r${fit(this.describe(now, true), this.stream.columns)}\x1b[K`);
      this.drawn = true;
    } else {
      this.stream.write(`${this.describe(now, false)}\n`);
    }
  }

  /** Ends the report: erases the terminal line (the caller prints its summary instead). */
  finish(): void {
    if (this.drawn) this.stream.write('\r\x1b[K');
    this.drawn = false;
  }

  /** The progress line: `importing [#####-----] 42% 12,345 documents 4,321/s ETA 0:12`. */
  describe(now: number, bar: boolean): string {
    const elapsed = Math.max(now - this.started, 1) / 1000;
    const rate = this.items / elapsed;
    const parts = [this.options.verb];
    const total = this.options.total;
    const fraction = total === undefined || total <= 0 ? undefined : Math.min(this.work / total, 1);
    if (fraction !== undefined) {
      const filled = Math.round(fraction * BAR_WIDTH);
      if (bar) parts.push(`[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}]`);
      parts.push(`${Math.floor(fraction * 100)}%`);
    }
    parts.push(`${formatCount(this.items)} ${this.options.noun}`, `${formatCount(Math.round(rate))}/s`);
    if (fraction !== undefined && fraction > 0) parts.push(`ETA ${formatDuration((elapsed * (1 - fraction)) / fraction)}`);
    return parts.join('  ');
  }
}

function fit(line: string, columns: number | undefined): string {
  return columns !== undefined && columns > 1 && line.length >= columns ? line.slice(0, columns - 1) : line;
}

/** `12,345` */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/** `0:07`, `12:05`, `1:02:03` */
export function formatDuration(seconds: number): string {
  const s = Math.ceil(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${m}:${rest}`;
}
