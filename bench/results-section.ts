/**
 * bench/results.md holds the combined bench's table (`npm run bench`) and, after it, sections that
 * other benches write (`npm run bench:redis`, `bench:bullmq`), each between its own markers, so that
 * each bench rewrites only its part.
 */
import { existsSync, readFileSync, writeFileSync } from 'fs';
import { join } from 'path';

export const RESULTS = join(__dirname, 'results.md');

const begin = (name: string) => `<!-- ${name}: begin -->`;
const end = (name: string) => `<!-- ${name}: end -->`;

/** Replaces (or appends) section `name` of bench/results.md with `lines` under a heading; returns the file. */
export function writeResultsSection(name: string, lines: readonly string[]): string {
  const text = existsSync(RESULTS) ? readFileSync(RESULTS, 'utf8') : '# Benchmark results\n';
  const section = [begin(name), `## \`npm run ${name}\``, '', ...lines, end(name)].join('\n');
  const from = text.indexOf(begin(name));
  const to = text.indexOf(end(name));
  const next = from >= 0 && to > from ? text.slice(0, from) + section + text.slice(to + end(name).length) : `${text.trimEnd()}\n\n${section}\n`;
  writeFileSync(RESULTS, next);
  return RESULTS;
}

/** The sections of bench/results.md that other benches wrote (from the first marker on), or ''. */
export function otherSections(): string {
  if (!existsSync(RESULTS)) return '';
  const text = readFileSync(RESULTS, 'utf8');
  const at = text.indexOf('<!-- bench:');
  return at < 0 ? '' : text.slice(at);
}
