import { Readable } from 'stream';
import {
  InputStructureError,
  readRecords,
  RecordSplitter,
  UnclearFormatError,
  type InputFormat,
  type InputRecord,
} from '../../src/cli/record-reader';

/** The records of `text`, fed to the splitter in pieces of `size` characters. */
function split(text: string, size = text.length, format?: InputFormat): { index: number; line: number; column: number; text: string }[] {
  const splitter = new RecordSplitter(format);
  const records: InputRecord[] = [];
  for (let i = 0; i < text.length; i += size) records.push(...splitter.push(text.slice(i, i + size)));
  records.push(...splitter.end());
  // As readRecords: a failure found at the end after records is thrown by the next call.
  records.push(...splitter.end());
  return records.map((r) => ({ index: r.index, line: r.start.line, column: r.start.column, text: r.text }));
}

function structureError(text: string, format?: InputFormat): InputStructureError {
  try {
    split(text, text.length, format);
  } catch (err) {
    if (err instanceof InputStructureError) return err;
    throw err;
  }
  throw new Error('no error');
}

describe('RecordSplitter', () => {
  it('takes each non-blank line of newline-delimited JSON as a record, with its line', () => {
    expect(split('{"a":1}\r\n\n  \n{"b":\n2}')).toEqual([
      { index: 1, line: 1, column: 1, text: '{"a":1}' },
      { index: 2, line: 4, column: 1, text: '{"b":' },
      { index: 3, line: 5, column: 1, text: '2}' },
    ]);
  });

  it('takes each element of a JSON array as a record, with where it starts', () => {
    const text = '\ufeff [\n  {"a": [1, "]"]},\n  {"b":\n   {"c": "\\"}"}},  7 ,"s", [] ]\n';
    const expected = [
      { index: 1, line: 2, column: 3, text: '{"a": [1, "]"]}' },
      { index: 2, line: 3, column: 3, text: '{"b":\n   {"c": "\\"}"}}' },
      { index: 3, line: 4, column: 20, text: '7' },
      { index: 4, line: 4, column: 23, text: '"s"' },
      { index: 5, line: 4, column: 28, text: '[]' },
    ];
    expect(split(text)).toEqual(expected);
  });

  it('splits the same way whatever the chunks the input arrives in', () => {
    const ndjson = '{"a":"x\\ny"}\n{"b":[1,2]}\n\n{"c":{}}';
    const array = '[{"a":"x,]"},\n 12 , {"b":[{"c":1}]},"d"]';
    for (const text of [ndjson, array]) {
      const whole = split(text);
      for (const size of [1, 2, 3, 7]) expect(split(text, size)).toEqual(whole);
    }
  });

  it('reads an empty input as no records', () => {
    expect(split('')).toEqual([]);
    expect(split(' \n ')).toEqual([]);
    expect(split('[ ]', 3, 'json')).toEqual([]);
  });

  it('refuses an array it cannot split, at the place it cannot', () => {
    expect(structureError('[{"a":1} {"b":2}]')).toMatchObject({
      position: { line: 1, column: 10 },
      reason: "expected ',' or ']' after an array element, found '{'",
    });
    expect(structureError('[\n {"a": [1}]')).toMatchObject({ position: { line: 2, column: 10 } });
    expect(structureError('[1,,2]')).toMatchObject({ position: { line: 1, column: 4 } });
    expect(structureError('[1]\nx', 'json')).toMatchObject({ position: { line: 2, column: 1 } });
    expect(structureError('[{"a":1},\n')).toMatchObject({ reason: "the input ends inside the array (a ']' is missing)" });
  });
});

describe('RecordSplitter, told the format', () => {
  it('reads an input as the format it is told, whatever its first character', () => {
    expect(split('[1, 2]\n[3]\n', 4, 'ndjson').map((r) => r.text)).toEqual(['[1, 2]', '[3]']);
    expect(split('[[1, 2], [3]]', 4, 'json').map((r) => r.text)).toEqual(['[1, 2]', '[3]']);
    expect(split('[{"a":1}]', 3, 'ndjson').map((r) => r.text)).toEqual(['[{"a":1}]']);
  });

  it('refuses an input told to be a JSON array that does not start with [', () => {
    expect(structureError('{"a":1}\n{"b":2}\n', 'json')).toMatchObject({
      position: { line: 1, column: 1 },
      reason: "a JSON array of documents starts with '[', not '{' (for one document per line, use --format ndjson or a .ndjson file)",
    });
  });
});

describe('RecordSplitter, not told the format', () => {
  it('reads lines when the first line is a whole JSON value and more lines follow, whatever it starts with', () => {
    // What an export of a set structure as a plain array began with: one document per line, not an array.
    const text = '["AU","CA","CH"]\n{"id":"order-00001"}\n';
    for (const size of [1, 5, text.length]) expect(split(text, size).map((r) => r.text)).toEqual(['["AU","CA","CH"]', '{"id":"order-00001"}']);
    expect(split('  [1]\n\n\n[2]').map((r) => r.line)).toEqual([1, 4]);
  });

  it('reads an array when its first line is not a whole JSON value', () => {
    expect(split('[\n{"a":1},\n{"b":2}\n]', 2).map((r) => r.text)).toEqual(['{"a":1}', '{"b":2}']);
    expect(split('[{"a":1},\n {"b":2}]').map((r) => r.text)).toEqual(['{"a":1}', '{"b":2}']);
    // Not JSON on one line: split as the array it starts, so each bad element is reported on its own.
    expect(split('[{"a":1}, {"b":}]').map((r) => r.text)).toEqual(['{"a":1}', '{"b":}']);
  });

  it('cannot tell one line holding a whole JSON array: documents, or one document that is an array', () => {
    for (const text of ['[1, 2]', ' [{"a":1},{"b":2}] \n\n', '[]']) {
      expect(() => split(text, 2)).toThrow(UnclearFormatError);
    }
  });
});

describe('RecordSplitter.push', () => {
  it('returns the records before a place it cannot split, and throws on the next call', () => {
    const splitter = new RecordSplitter('json');
    expect(splitter.push('[{"a":1}, 2 {"b":2}]').map((r) => r.text)).toEqual(['{"a":1}', '2']);
    expect(() => splitter.end()).toThrow(InputStructureError);
  });
});

describe('readRecords', () => {
  it('reads records from a stream of bytes, multi-byte characters split across chunks', async () => {
    const bytes = Buffer.from('{"city":"Zürich"}\n{"city":"京都"}\n');
    const chunks = Array.from(bytes, (b) => Buffer.of(b));
    const records: InputRecord[] = [];
    for await (const record of readRecords(Readable.from(chunks))) records.push(record);
    expect(records.map((r) => r.text)).toEqual(['{"city":"Zürich"}', '{"city":"京都"}']);
    expect(records[1].bytesRead).toBe(bytes.length);
  });
});
