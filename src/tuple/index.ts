/**
 * FoundationDB's tuple layer: order-preserving keys from tuples of typed values, byte for byte as FDB's
 * official bindings write them (see `design/tuple.md` in the FoundationDB repository).
 */
export { pack, unpack, packWithVersionstamp, range, compare } from './pack';
export { Subspace } from './subspace';
export { strinc } from './strinc';
export { TupleError, type TupleErrorCode } from './error';
export type { Tuple, TupleItem, TupleRange } from './item';
export { Float32, Double } from './float';
export { Uuid } from './uuid';
export { Versionstamp } from './versionstamp';
export { UserType } from './user-type';
