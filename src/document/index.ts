/**
 * The document layer: JSON documents in collections, one key per leaf on an ordered transactional KV
 * store (see docs/documents.md).
 */
export { open, DocLayer, Scope, type OpenOptions, type CollectionOptions, type ExpirySweeperOptions } from './doc-layer';
export {
  ManifestLookupError,
  type Manifest,
  type ManifestScope,
  type ManifestCollection,
  type ResolvedCollection,
  type ResolvedScope,
} from './manifest/manifest';
export type { PurgeExpiredOptions } from './collection/expiry';
export { Collection } from './collection/collection';
export { LookupInSpec, MutateInSpec, type CreatePathOption } from './subdoc/specs';
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
  UpsertOptions,
  CasOptions,
  ReplaceOptions,
  Expiry,
  ExpiryOptions,
  ScanOptions,
  ScanItem,
  LookupInEntry,
  LookupInResult,
  MutateInSpecOptions,
  MutateInOptions,
  MutateInResult,
} from './types';
