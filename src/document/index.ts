/**
 * The document layer: JSON documents in collections, one key per leaf on an ordered transactional KV
 * store (see docs/documents.md).
 */
export {
  openDocumentLayer,
  DocumentLayer,
  Scope,
  type OpenOptions,
  type CollectionOptions,
  type ExpirySweeperOptions,
  type DocumentLayerParts,
  type LayerSettings,
} from './doc-layer';
export { DocTransaction, ContextSlot, type DocumentChange, type ChangeObserver, type CollectionEvent } from './doc-transaction';
export {
  ManifestLookupError,
  type Manifest,
  type ManifestScope,
  type ManifestCollection,
  type ResolvedCollection,
  type ResolvedScope,
} from './manifest/manifest';
export type { PurgeExpiredOptions } from './collection/expiry';
export { DocumentCollection, type CollectionContext } from './collection/collection';
export { LOCKED_CAS, DEFAULT_LOCK_SECONDS, MAX_LOCK_SECONDS } from './collection/lock';
export type { StructureAccess } from './structure-port';
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
