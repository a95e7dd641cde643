import { Buffer } from 'node:buffer';
import { closeSync, fstatSync, openSync, readSync } from 'fs';

/**
 * LMDB's data file (`data.mdb`) as the `lmdb` package writes it, read with plain file reads and never
 * mapped: LMDB itself trusts its file and maps it, so a truncated or overwritten file kills the process
 * with SIGBUS or SIGSEGV; read this way, damage becomes a list of problems.
 *
 * The layout (`mdb.c` of the package's LMDB, 64-bit, little-endian): pages of `pageSize` bytes; pages 0
 * and 1 are meta pages, the newer of which (by transaction id) is the store's state. Every page starts
 * with a 24-byte header (its own page number, a transaction id, flags, and the bounds of its free space);
 * the meta holds the free-page tree and the main tree, whose leaves name the named databases (the
 * engine's `data`, `meta` and `log`) with the root of each. Branch nodes point at child pages; leaf nodes
 * hold a key and a value, or the first of a run of overflow pages holding a large value.
 */

const HEADER = 24;
const META_MAGIC = 0xbeefc0de;
const DATA_VERSION = 2;
const P_BRANCH = 0x01;
const P_LEAF = 0x02;
const P_OVERFLOW = 0x04;
const P_META = 0x08;
const F_BIGDATA = 0x01;
const F_SUBDATA = 0x02;
const F_DUPDATA = 0x04;
/** A tree without pages. */
const P_INVALID = 0xffffffffffffffffn;
/** Size of a tree's record (`MDB_db`) in a meta page or a named database's node. */
const TREE_RECORD = 48;
/** Size of the pointer to a large value's overflow pages (`MDB_ovpage`). */
const OVERFLOW_POINTER = 24;
const MIN_PAGE = 512;
const MAX_PAGE = 65536;

/** One tree (LMDB's `MDB_db`) as a meta page or the main tree records it. */
export interface TreeRecord {
  readonly depth: number;
  readonly branchPages: bigint;
  readonly leafPages: bigint;
  readonly overflowPages: bigint;
  readonly entries: bigint;
  readonly root: bigint;
}

/** A meta page's contents. */
export interface MetaPage {
  readonly page: 0 | 1;
  readonly pageSize: number;
  readonly lastPage: bigint;
  readonly txnId: bigint;
  readonly free: TreeRecord;
  readonly main: TreeRecord;
}

/** What {@link inspectDataFile} found. */
export interface DataFileReport {
  readonly fileBytes: number;
  /** The meta page the store opens at, when one is readable. */
  readonly meta: MetaPage | undefined;
  /** How many entries each named database holds, by its name (as reached by the walk). */
  readonly entries: ReadonlyMap<string, bigint>;
  /** Pages reached by the walk. */
  readonly pagesVisited: number;
  /** Each problem found, one line each; empty when the file is sound. */
  readonly problems: readonly string[];
}

/** Problems with the header: the size of the file and its two meta pages; the meta the store opens at. */
export function inspectHeader(path: string): { meta: MetaPage | undefined; fileBytes: number; problems: string[] } {
  const file = new PageFile(path);
  try {
    return { ...file.header(), fileBytes: file.bytes };
  } finally {
    file.close();
  }
}

/**
 * Checks the data file at `path`: its header, then every page reachable from the current meta page
 * (each tree's pages: page numbers, page types, bounds, key order, node sizes, overflow runs, counts
 * against the tree's record), reading each page once.
 */
export function inspectDataFile(path: string): DataFileReport {
  const file = new PageFile(path);
  try {
    const { meta, problems } = file.header();
    if (!meta) return { fileBytes: file.bytes, meta, entries: new Map(), pagesVisited: 0, problems };
    const walk = new TreeWalk(file, meta, problems);
    walk.tree('the free-page tree', meta.free, false);
    walk.tree('the main tree', meta.main, true);
    return { fileBytes: file.bytes, meta, entries: walk.entries, pagesVisited: walk.visited.size, problems };
  } finally {
    file.close();
  }
}

class PageFile {
  /** The size of the file, as of the last meta pages read: another process may be making it longer. */
  bytes: number;
  private readonly fd: number;

  constructor(path: string) {
    this.fd = openSync(path, 'r');
    this.bytes = fstatSync(this.fd).size;
  }

  close(): void {
    closeSync(this.fd);
  }

  /** `length` bytes at `offset`, or fewer where the file ends. */
  read(offset: number, length: number): Buffer {
    const out = Buffer.alloc(Math.max(0, Math.min(length, this.bytes - offset)));
    let done = 0;
    while (done < out.length) {
      const n = readSync(this.fd, out, done, out.length - done, offset + done);
      if (n === 0) break;
      done += n;
    }
    return out.subarray(0, done);
  }

  header(): { meta: MetaPage | undefined; problems: string[] } {
    const problems: string[] = [];
    if (this.bytes === 0) return { meta: undefined, problems: ['the data file is empty'] };
    const first = parseMeta(this.read(0, HEADER + 160), 0);
    const pageSize = typeof first === 'string' ? undefined : first.pageSize;
    const second =
      pageSize === undefined ? 'its page size is unknown, as the first meta page is unreadable' : parseMeta(this.read(pageSize, HEADER + 160), 1);
    const metas: MetaPage[] = [];
    for (const [page, meta] of [first, second].entries()) {
      if (typeof meta === 'string') problems.push(`meta page ${page}: ${meta}`);
      else metas.push(meta);
    }
    if (metas.length === 0) return { meta: undefined, problems };
    // LMDB writes a commit's pages before its meta page: the file is long enough for the metas read
    // once they are read, not necessarily before.
    this.bytes = fstatSync(this.fd).size;
    const meta = metas.reduce((newest, next) => (next.txnId > newest.txnId ? next : newest));
    if (this.bytes < 2 * meta.pageSize) problems.push(`the data file has ${this.bytes} bytes, less than its two meta pages`);
    for (const checked of metas) {
      for (const [name, tree] of [
        ['free-page', checked.free],
        ['main', checked.main],
      ] as const) {
        if (tree.root === P_INVALID) continue;
        const where = `meta page ${checked.page}: the ${name} tree's root page ${tree.root}`;
        if (tree.root < 2n || tree.root > checked.lastPage) problems.push(`${where} is outside the pages in use (2 to ${checked.lastPage})`);
        else if ((tree.root + 1n) * BigInt(checked.pageSize) > BigInt(this.bytes))
          problems.push(`${where} is past the end of the data file (${this.bytes} bytes; truncated?)`);
      }
    }
    return { meta, problems };
  }
}

function parseMeta(bytes: Buffer, page: 0 | 1): MetaPage | string {
  if (bytes.length < HEADER + 160) return 'the file ends inside it';
  if (bytes.readBigUInt64LE(0) !== BigInt(page) || !(bytes.readUInt16LE(18) & P_META)) return 'it is not a meta page';
  const magic = bytes.readUInt32LE(HEADER);
  if (magic !== META_MAGIC) return `its magic number is ${magic.toString(16)}, not LMDB's ${META_MAGIC.toString(16)}`;
  const version = bytes.readUInt32LE(HEADER + 4);
  if (version !== DATA_VERSION) return `its format version is ${version}, not ${DATA_VERSION}`;
  const free = treeRecord(bytes, HEADER + 24);
  const pageSize = bytes.readUInt32LE(HEADER + 24);
  if (pageSize < MIN_PAGE || pageSize > MAX_PAGE || (pageSize & (pageSize - 1)) !== 0)
    return `its page size ${pageSize} is not a power of two from ${MIN_PAGE} to ${MAX_PAGE}`;
  return {
    page,
    pageSize,
    free,
    main: treeRecord(bytes, HEADER + 24 + TREE_RECORD),
    lastPage: bytes.readBigUInt64LE(HEADER + 24 + 2 * TREE_RECORD),
    txnId: bytes.readBigUInt64LE(HEADER + 24 + 2 * TREE_RECORD + 8),
  };
}

function treeRecord(bytes: Buffer, at: number): TreeRecord {
  return {
    depth: bytes.readUInt16LE(at + 6),
    branchPages: bytes.readBigUInt64LE(at + 8),
    leafPages: bytes.readBigUInt64LE(at + 16),
    overflowPages: bytes.readBigUInt64LE(at + 24),
    entries: bytes.readBigUInt64LE(at + 32),
    root: bytes.readBigUInt64LE(at + 40),
  };
}

interface TreeCounts {
  branchPages: bigint;
  leafPages: bigint;
  overflowPages: bigint;
  entries: bigint;
}

/** Walks the trees of one meta page, appending what it finds wrong to `problems`. */
class TreeWalk {
  readonly visited = new Set<bigint>();
  readonly entries = new Map<string, bigint>();
  /** Past this many problems the walk stops: the file is damaged anyway, and the report stays short. */
  private static readonly MAX_PROBLEMS = 100;

  constructor(
    private readonly file: PageFile,
    private readonly meta: MetaPage,
    private readonly problems: string[],
  ) {}

  /** Walks one tree; `ordered` checks key order (the free-page tree orders its keys as integers). */
  tree(name: string, record: TreeRecord, ordered: boolean): void {
    if (record.root === P_INVALID) {
      if (record.entries !== 0n) this.problem(`${name} has no root page but ${record.entries} entries`);
      return;
    }
    const counts: TreeCounts = { branchPages: 0n, leafPages: 0n, overflowPages: 0n, entries: 0n };
    const previous: { key: Buffer | undefined } = { key: undefined };
    const problemsBefore = this.problems.length;
    this.page(name, record.root, 1, record.depth, counts, ordered ? previous : undefined);
    // Counts of a tree with damaged pages say nothing more.
    if (this.problems.length > problemsBefore) return;
    for (const field of ['entries', 'branchPages', 'leafPages', 'overflowPages'] as const) {
      if (counts[field] !== record[field]) this.problem(`${name} records ${record[field]} ${field}, its pages hold ${counts[field]}`);
    }
  }

  private problem(what: string): void {
    this.problems.push(what);
  }

  private get stopped(): boolean {
    return this.problems.length >= TreeWalk.MAX_PROBLEMS;
  }

  /** Reads page `pgno`, checking its place in the file and its header; undefined when unusable. */
  private load(name: string, pgno: bigint, pages = 1): Buffer | undefined {
    const { pageSize, lastPage } = this.meta;
    if (pgno < 2n || pgno + BigInt(pages) - 1n > lastPage) {
      this.problem(`${name}: page ${pgno} is outside the pages in use (2 to ${lastPage})`);
      return undefined;
    }
    if (this.visited.has(pgno)) {
      this.problem(`${name}: page ${pgno} is reached twice`);
      return undefined;
    }
    this.visited.add(pgno);
    const offset = Number(pgno) * pageSize;
    const length = pages * pageSize;
    if (offset + length > this.file.bytes) {
      this.problem(`${name}: page ${pgno} is past the end of the data file (${this.file.bytes} bytes; truncated?)`);
      return undefined;
    }
    const bytes = this.file.read(offset, pages === 1 ? pageSize : HEADER);
    if (bytes.readBigUInt64LE(0) !== pgno) {
      this.problem(`${name}: page ${pgno} says it is page ${bytes.readBigUInt64LE(0)} (overwritten?)`);
      return undefined;
    }
    return bytes;
  }

  private page(
    name: string,
    pgno: bigint,
    level: number,
    depth: number,
    counts: TreeCounts,
    previous: { key: Buffer | undefined } | undefined,
  ): void {
    if (this.stopped) return;
    const page = this.load(name, pgno);
    if (!page) return;
    const flags = page.readUInt16LE(18);
    const kind = flags & (P_BRANCH | P_LEAF | P_OVERFLOW | P_META);
    const leafExpected = level === depth;
    if (kind !== (leafExpected ? P_LEAF : P_BRANCH)) {
      this.problem(
        `${name}: page ${pgno} at level ${level} of ${depth} has flags ${flags.toString(16)}, not a ${leafExpected ? 'leaf' : 'branch'} page`,
      );
      return;
    }
    const lower = page.readUInt16LE(20);
    const upper = page.readUInt16LE(22);
    const space = page.length - HEADER;
    if (lower > upper || upper > space || lower % 2 !== 0) {
      this.problem(`${name}: page ${pgno} has free space bounds ${lower}..${upper} outside its ${space} bytes`);
      return;
    }
    const keys = lower / 2;
    if (keys === 0 && (level > 1 || !leafExpected)) this.problem(`${name}: page ${pgno} has no nodes`);
    if (leafExpected) counts.leafPages++;
    else counts.branchPages++;
    for (let i = 0; i < keys && !this.stopped; i++) {
      const at = HEADER + page.readUInt16LE(HEADER + 2 * i);
      if (at < HEADER + upper || at + 8 > page.length) {
        this.problem(`${name}: page ${pgno} node ${i} is at ${at}, outside the page's nodes`);
        return;
      }
      const lo = page.readUInt16LE(at);
      const hi = page.readUInt16LE(at + 2);
      const nodeFlags = page.readUInt16LE(at + 4);
      const keySize = page.readUInt16LE(at + 6);
      const keyEnd = at + 8 + keySize;
      if (keyEnd > page.length) {
        this.problem(`${name}: page ${pgno} node ${i} has a ${keySize}-byte key that runs past the page`);
        return;
      }
      const key = page.subarray(at + 8, keyEnd);
      // A branch page's first key is empty: it stands for everything before the second.
      if (previous && (leafExpected || i > 0)) {
        if (previous.key && Buffer.compare(previous.key, key) >= 0) this.problem(`${name}: page ${pgno} node ${i} is out of key order`);
        if (leafExpected) previous.key = Buffer.from(key);
      }
      if (!leafExpected) {
        const child = BigInt(lo) | (BigInt(hi) << 16n) | (BigInt(nodeFlags) << 32n);
        this.page(name, child, level + 1, depth, counts, previous);
        continue;
      }
      counts.entries++;
      this.leafNode(name, pgno, i, { size: lo | (hi << 16), flags: nodeFlags, key, dataAt: keyEnd }, page, counts);
    }
  }

  private leafNode(
    name: string,
    pgno: bigint,
    index: number,
    node: { size: number; flags: number; key: Buffer; dataAt: number },
    page: Buffer,
    counts: TreeCounts,
  ): void {
    const where = `${name}: page ${pgno} node ${index}`;
    if (node.flags & F_DUPDATA) {
      this.problem(`${where} has duplicate values, which no database of the store uses`);
      return;
    }
    const inline = node.flags & F_BIGDATA ? OVERFLOW_POINTER : node.size;
    if (node.dataAt + inline > page.length) {
      this.problem(`${where} has a ${node.size}-byte value that runs past the page`);
      return;
    }
    if (node.flags & F_BIGDATA) {
      const first = page.readBigUInt64LE(node.dataAt);
      const pages = Math.floor((HEADER - 1 + node.size) / this.meta.pageSize) + 1;
      const overflow = this.load(`${where}'s value`, first, pages);
      if (!overflow) return;
      if (!(overflow.readUInt16LE(18) & P_OVERFLOW) || overflow.readUInt32LE(20) < pages) {
        this.problem(`${where}'s value: page ${first} is not a run of ${pages} overflow pages`);
        return;
      }
      for (let p = 1n; p < BigInt(pages); p++) this.visited.add(first + p);
      counts.overflowPages += BigInt(overflow.readUInt32LE(20));
    }
    if (node.flags & F_SUBDATA) {
      if (node.size !== TREE_RECORD || node.flags & F_BIGDATA) {
        this.problem(`${where} names a database with a ${node.size}-byte record`);
        return;
      }
      const dbName = node.key.toString('latin1').replace(/\0$/, '');
      const record = treeRecord(page, node.dataAt);
      this.entries.set(dbName, record.entries);
      this.tree(`database '${dbName}'`, record, true);
    }
  }
}
