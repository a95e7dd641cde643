/** The change feed: every document change of a collection in commit order (see docs/changes.md). */
export {
  ChangeFeed,
  ChangeConsumer,
  DEFAULT_CHANGE_RETENTION_MS,
  type ChangesOptions,
  type ProcessOptions,
  type CompactChangesOptions,
  type ChangeHandler,
} from './change-feed';
export type { ChangeEvent, DocumentChangeEvent, CollectionDropEvent } from './change';
export type { CompactionReport } from './compaction';
export { ChangeFeedError, isChangeFeedError, type ChangeFeedErrorCode } from './errors';
