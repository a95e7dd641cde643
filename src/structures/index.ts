/**
 * Persistent, concurrent data structures, each a document of a collection (see docs/structures.md):
 * get handles with `collection.list(id)`, `.map(id)`, `.set(id)`, `.queue(id)`, `.counter(id)`,
 * `.text(id)`.
 */
export { Structure, type IterateOptions, type StructureWriteOptions } from './structure';
export type { StructureKind } from '../document/keys/kind';
export { DocList } from './list';
export { DocMap } from './map';
export { DocSet, type SetMember } from './set';
export { DocCounter } from './counter';
export { DocText } from './text';
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
} from './queue/queue';
