/**
 * The document layer: JSON documents in collections, one key per leaf on an ordered transactional KV
 * store (see docs/documents.md).
 */
export { open, DocLayer, type OpenOptions } from './doc-layer';
export { Collection } from './collection';
export { LookupInSpec, MutateInSpec, type CreatePathOption } from './specs';
export { DocumentError, isDocumentError, type DocumentErrorCode, type DocumentErrorDetails } from './errors';
export { readRecipeDocument } from './recipe';
export type {
  JsonValue,
  JsonObject,
  DocId,
  PathElement,
  Path,
  Cas,
  TransactionOption,
  GetResult,
  MutationResult,
  InsertResult,
  InsertOptions,
  CasOptions,
  ScanOptions,
  ScanItem,
  LookupInEntry,
  LookupInResult,
  MutateInSpecOptions,
  MutateInOptions,
  MutateInResult,
} from './types';
