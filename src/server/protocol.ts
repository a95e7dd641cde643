/**
 * The memcached binary protocol's numbers, with Couchbase's extensions (kv_engine's
 * docs/BinaryProtocol.md): magic bytes, opcodes, status codes, datatype bits and HELLO features. One
 * table each, named as the protocol documents name them.
 */

export const Magic = {
  /** A classic request: 24-byte header, key length in two bytes. */
  Request: 0x80,
  /** A classic response. */
  Response: 0x81,
  /** Couchbase's alternative request: frame extras length and a one-byte key length. */
  AltRequest: 0x08,
  /** Couchbase's alternative response: frame extras (server duration) before the extras. */
  AltResponse: 0x18,
} as const;

export const Opcode = {
  Get: 0x00,
  Set: 0x01,
  Add: 0x02,
  Replace: 0x03,
  Delete: 0x04,
  Increment: 0x05,
  Decrement: 0x06,
  Quit: 0x07,
  Flush: 0x08,
  GetQ: 0x09,
  Noop: 0x0a,
  Version: 0x0b,
  GetK: 0x0c,
  GetKQ: 0x0d,
  Append: 0x0e,
  Prepend: 0x0f,
  Stat: 0x10,
  SetQ: 0x11,
  AddQ: 0x12,
  ReplaceQ: 0x13,
  DeleteQ: 0x14,
  IncrementQ: 0x15,
  DecrementQ: 0x16,
  QuitQ: 0x17,
  FlushQ: 0x18,
  AppendQ: 0x19,
  PrependQ: 0x1a,
  Verbosity: 0x1b,
  Touch: 0x1c,
  GetAndTouch: 0x1d,
  GetAndTouchQ: 0x1e,
  Hello: 0x1f,
  SaslListMechs: 0x20,
  SaslAuth: 0x21,
  SaslStep: 0x22,
  GetAllVbSeqnos: 0x48,
  SelectBucket: 0x89,
  GetLocked: 0x94,
  UnlockKey: 0x95,
  GetMeta: 0xa0,
  GetMetaQ: 0xa1,
  GetClusterConfig: 0xb5,
  SetCollectionsManifest: 0xb9,
  GetCollectionsManifest: 0xba,
  GetCollectionId: 0xbb,
  GetScopeId: 0xbc,
  SubdocMultiLookup: 0xd0,
  SubdocMultiMutation: 0xd1,
  GetErrorMap: 0xfe,
} as const;

export const Status = {
  Success: 0x00,
  KeyNotFound: 0x01,
  KeyExists: 0x02,
  TooBig: 0x03,
  InvalidArguments: 0x04,
  NotStored: 0x05,
  DeltaBadValue: 0x06,
  NotMyVbucket: 0x07,
  NoBucket: 0x08,
  Locked: 0x09,
  NotLocked: 0x0e,
  OutOfRange: 0x22,
  AuthError: 0x20,
  AuthContinue: 0x21,
  Eaccess: 0x24,
  UnknownCommand: 0x81,
  OutOfMemory: 0x82,
  NotSupported: 0x83,
  InternalError: 0x84,
  Busy: 0x85,
  TemporaryFailure: 0x86,
  UnknownCollection: 0x88,
  CannotApplyManifest: 0x8a,
  UnknownScope: 0x8c,
  SubdocPathNotFound: 0xc0,
  SubdocPathMismatch: 0xc1,
  SubdocPathInvalid: 0xc2,
  SubdocPathTooBig: 0xc3,
  SubdocDocTooDeep: 0xc4,
  SubdocValueCannotInsert: 0xc5,
  SubdocDocNotJson: 0xc6,
  SubdocNumRange: 0xc7,
  SubdocDeltaRange: 0xc8,
  SubdocPathExists: 0xc9,
  SubdocValueTooDeep: 0xca,
  SubdocInvalidCombo: 0xcb,
  SubdocMultiPathFailure: 0xcc,
  SubdocSuccessDeleted: 0xcd,
  SubdocXattrInvalidFlagCombo: 0xce,
  SubdocInvalidXattrOrder: 0xd2,
  SubdocMultiPathFailureDeleted: 0xd3,
} as const;

export type StatusCode = (typeof Status)[keyof typeof Status];

/** Datatype bits of a value. */
export const Datatype = {
  Raw: 0x00,
  Json: 0x01,
  Snappy: 0x02,
  Xattr: 0x04,
} as const;

/** HELLO features this server knows (kv_engine's `cb::mcbp::Feature`). */
export const Feature = {
  Datatype: 0x01,
  Tls: 0x02,
  TcpNodelay: 0x03,
  MutationSeqno: 0x04,
  TcpDelay: 0x05,
  Xattr: 0x06,
  Xerror: 0x07,
  SelectBucket: 0x08,
  Snappy: 0x0a,
  Json: 0x0b,
  Duplex: 0x0c,
  ClustermapChangeNotification: 0x0d,
  UnorderedExecution: 0x0e,
  Tracing: 0x0f,
  AltRequestSupport: 0x10,
  SyncReplication: 0x11,
  Collections: 0x12,
  PreserveTtl: 0x14,
  VAttr: 0x15,
  SubdocCreateAsDeleted: 0x17,
  SubdocDocumentMacroSupport: 0x18,
  SubdocReplaceBodyWithXattr: 0x19,
  ReportUnitUsage: 0x1a,
  SubdocReplicaRead: 0x1c,
  GetClusterConfigWithKnownVersion: 0x1d,
  DedupeNotMyVbucketClustermap: 0x1e,
  ClustermapChangeNotificationBrief: 0x1f,
  SubdocAllowsAccessOnMultipleXattrKeys: 0x20,
} as const;

/** The length of every packet header. */
export const HEADER_BYTES = 24;

/** The largest value an item may have: Couchbase's 20 MiB. */
export const MAX_ITEM_BYTES = 20 * 1024 * 1024;

/** The largest body a request may have: an item and room for its key and extras. */
export const MAX_BODY_BYTES = MAX_ITEM_BYTES + 64 * 1024;

/** Opcodes whose success is silent (memcached's quiet commands); GETQ/GETKQ are silent on a miss instead. */
export const QUIET_ON_SUCCESS: ReadonlySet<number> = new Set([
  Opcode.SetQ,
  Opcode.AddQ,
  Opcode.ReplaceQ,
  Opcode.DeleteQ,
  Opcode.IncrementQ,
  Opcode.DecrementQ,
  Opcode.QuitQ,
  Opcode.FlushQ,
  Opcode.AppendQ,
  Opcode.PrependQ,
]);
