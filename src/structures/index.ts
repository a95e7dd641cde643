/**
 * Persistent, concurrent data structures, each a document of a collection (see docs/structures.md):
 * get handles with `collection.list(id)`, `.map(id)`, `.set(id)`, `.queue(id)`, `.counter(id)`,
 * `.text(id)`, `.sortedSet(id)`.
 */
export { Structure, type IterateOptions, type StructureWriteOptions } from './structure';
export type { StructureKind } from '../document/keys/kind';
export { DocList } from './list';
export { DocMap } from './map';
export { DocSet, type SetMember } from './set';
export { DocCounter } from './counter';
export { DocText } from './text';
export {
  DocSortedSet,
  type ScoredMember,
  type SortedSetAddOptions,
  type ScoreBounds,
  type ScoreRangeOptions,
  type RankRangeOptions,
  type RankOptions,
  type PrefixRangeOptions,
  type SortedSetIterateOptions,
} from './sorted-set';
export {
  Queue,
  type QueueOptions,
  type PushOptions,
  type PopOptions,
  type LeaseOptions,
  type NackOptions,
  type IterateOptions as QueueIterateOptions,
  type Lease,
  type ConsumeOptions,
  type Consumer,
  type ConsumerStats,
  type QueueHandler,
  type BackoffPolicy,
  type RepeatEvery,
  type RepeatInfo,
  type RepeatOptions,
  type RunSchedulesOptions,
  type RunSchedulesResult,
  type Scheduler,
  type SchedulerOptions,
} from './queue/queue';
export { MAX_PRIORITY } from './queue/priority';
