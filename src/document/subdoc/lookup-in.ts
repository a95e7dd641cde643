import type { Transaction } from '../../kv/contract/types';
import { DocumentError, isDocumentError } from '../errors';
import { countChildren, unflatten } from '../values/flatten';
import type { DocumentKeys } from '../keys/layout';
import { formatPath, parsePath } from '../values/path';
import { arrayBounds, failWithDiagnosis, nodeKind, readSubtreeEntries, resolvePath } from '../values/tree';
import type { JsonValue, LookupInEntry, LookupInSpec, PathElement } from '../types';
import { checkSpecList, describePath, forSpec, specOp } from './spec-list';

/**
 * lookupIn: Couchbase's sub-document lookups (statuses as subjson and kv_engine give them) over the
 * tree of keys; each spec reads only the keys below its path.
 */

type LookupOp = LookupInSpec['op'];

const LOOKUP_OPS: ReadonlySet<string> = new Set<LookupOp>(['get', 'exists', 'count']);

/**
 * Runs lookup specs against one document, all reads issued together. Each entry has the spec's value
 * or its own error; the call fails only for document-level problems.
 *
 * @throws DocumentError INVALID_ARGUMENT (bad spec list or op, `exists` with the empty path),
 *   DOCUMENT_NOT_FOUND.
 */
export async function lookupIn(tr: Transaction, keys: DocumentKeys, specs: readonly LookupInSpec[]): Promise<LookupInEntry[]> {
  const list = checkSpecList(specs, 'lookupIn');
  const parsed: (PathElement[] | DocumentError)[] = list.map((spec, i) => {
    const op = specOp(spec, LOOKUP_OPS, i);
    let elements: PathElement[];
    try {
      elements = parsePath((spec as LookupInSpec).path);
    } catch (err) {
      if (isDocumentError(err)) return forSpec(err, i) as DocumentError;
      throw err;
    }
    if (op === 'exists' && elements.length === 0) {
      throw new DocumentError('INVALID_ARGUMENT', 'exists needs a path: the document itself is exists(id)', { specIndex: i });
    }
    return elements;
  });
  let missingDocument = false;
  const entries = await Promise.all(
    list.map(async (spec, i): Promise<LookupInEntry> => {
      const elements = parsed[i];
      if (elements instanceof DocumentError) return { error: elements };
      try {
        return { value: await lookUp(tr, keys, (spec as LookupInSpec).op, elements) };
      } catch (err) {
        if (isDocumentError(err, 'DOCUMENT_NOT_FOUND')) missingDocument = true;
        if ((spec as LookupInSpec).op === 'exists' && isDocumentError(err, 'PATH_NOT_FOUND')) return { value: false };
        // Corrupt stored data is the document's failure, not a spec's result.
        if (!isDocumentError(err) || err.code === 'CORRUPT_DATA') throw err;
        return { error: forSpec(err, i) as DocumentError };
      }
    }),
  );
  if (missingDocument) throw new DocumentError('DOCUMENT_NOT_FOUND', 'the document does not exist');
  return entries;
}

async function lookUp(tr: Transaction, keys: DocumentKeys, op: LookupOp, elements: PathElement[]): Promise<JsonValue> {
  const path = await resolvePath(tr, keys.root, elements);
  if (path.length <= elements.length) return failWithDiagnosis(tr, elements, path);
  const key = path[elements.length];
  switch (op) {
    case 'get': {
      const entries = await readSubtreeEntries(tr, key);
      if (entries.length === 0) return failWithDiagnosis(tr, elements, path);
      return unflatten(entries, 0, entries.length, key.length);
    }
    case 'exists': {
      if ((await tr.get(key)) === undefined) return failWithDiagnosis(tr, elements, path);
      return true;
    }
    case 'count': {
      const kind = await nodeKind(tr, key);
      if (kind === undefined) return failWithDiagnosis(tr, elements, path);
      if (kind === 'scalar') throw notContainer(elements, 'count');
      if (kind === 'array') {
        const bounds = await arrayBounds(tr, key);
        return typeof bounds === 'object' ? bounds.last - bounds.first + 1 : 0;
      }
      const entries = await readSubtreeEntries(tr, key);
      return entries.length === 0 ? 0 : countChildren(entries, 0, entries.length, key.length);
    }
  }
}

function notContainer(elements: readonly PathElement[], what: string): DocumentError {
  return new DocumentError('PATH_MISMATCH', `${describePath(elements)} is not an object or array, so it has no ${what}`, {
    path: formatPath(elements),
  });
}
