import { Buffer } from 'node:buffer';
import { HEADER_BYTES, Magic, MAX_BODY_BYTES, Status, type StatusCode } from './protocol';

/**
 * Packets of the binary protocol: the 24-byte header, then frame extras (alternative requests only),
 * extras, key and value. {@link FrameDecoder} cuts a byte stream into requests and says when the
 * stream cannot be a stream of requests; {@link encodeResponse} writes responses.
 */

/** One request, its parts as views into the bytes received. */
export interface Request {
  readonly magic: number;
  readonly opcode: number;
  readonly datatype: number;
  /** The vbucket (classic requests name it so; responses put the status there). */
  readonly vbucket: number;
  readonly opaque: number;
  /** The CAS as an unsigned 64-bit integer. */
  readonly cas: bigint;
  readonly frameExtras: Buffer;
  readonly extras: Buffer;
  readonly key: Buffer;
  readonly value: Buffer;
}

/** Why a byte stream stopped being a request stream: the status to answer with before closing. */
export class FrameError extends Error {
  override readonly name = 'FrameError';
  constructor(
    readonly status: StatusCode,
    message: string,
    /** The opcode and opaque of the bad header, to answer it. */
    readonly opcode: number,
    readonly opaque: number,
  ) {
    super(message);
  }
}

/**
 * Cuts received bytes into requests. Keeps at most one partial packet; a header that cannot start a
 * request (wrong magic, lengths that disagree, a body over {@link MAX_BODY_BYTES}) throws a
 * {@link FrameError}, after which the stream is unusable (the connection closes).
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;

  constructor(
    /** Whether alternative requests (magic 0x08) are allowed: after HELLO negotiated them. */
    private readonly altAllowed: () => boolean,
  ) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
  }

  /** Bytes received and not yet handed out as requests. */
  get pending(): number {
    return this.buffered;
  }

  /**
   * The next complete request, or `undefined` until more bytes arrive.
   *
   * @throws FrameError when the buffered header is not a valid request header.
   */
  next(): Request | undefined {
    if (this.buffered < HEADER_BYTES) return undefined;
    const head = this.peek(HEADER_BYTES);
    const magic = head[0];
    const opcode = head[1];
    const opaque = head.readUInt32BE(12);
    let frameExtrasLength = 0;
    let keyLength: number;
    if (magic === Magic.Request) {
      keyLength = head.readUInt16BE(2);
    } else if (magic === Magic.AltRequest && this.altAllowed()) {
      frameExtrasLength = head[2];
      keyLength = head[3];
    } else {
      throw new FrameError(
        Status.InvalidArguments,
        `a request starts with magic 0x80 (or 0x08 once negotiated), got 0x${hex(magic)}`,
        opcode,
        opaque,
      );
    }
    const extrasLength = head[4];
    const bodyLength = head.readUInt32BE(8);
    if (frameExtrasLength + extrasLength + keyLength > bodyLength) {
      throw new FrameError(
        Status.InvalidArguments,
        `the header's lengths disagree: frame extras ${frameExtrasLength} + extras ${extrasLength} + key ${keyLength} > body ${bodyLength}`,
        opcode,
        opaque,
      );
    }
    if (bodyLength > MAX_BODY_BYTES) {
      throw new FrameError(Status.TooBig, `a body of ${bodyLength} bytes is over the limit of ${MAX_BODY_BYTES}`, opcode, opaque);
    }
    const total = HEADER_BYTES + bodyLength;
    if (this.buffered < total) return undefined;
    const packet = this.take(total);
    const framePart = HEADER_BYTES + frameExtrasLength;
    const extrasEnd = framePart + extrasLength;
    const keyEnd = extrasEnd + keyLength;
    return {
      magic,
      opcode,
      datatype: packet[5],
      vbucket: packet.readUInt16BE(6),
      opaque,
      cas: packet.readBigUInt64BE(16),
      frameExtras: packet.subarray(HEADER_BYTES, framePart),
      extras: packet.subarray(framePart, extrasEnd),
      key: packet.subarray(extrasEnd, keyEnd),
      value: packet.subarray(keyEnd, total),
    };
  }

  /** The first `n` buffered bytes, joining chunks only when they straddle. */
  private peek(n: number): Buffer {
    if (this.chunks[0].length < n) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0];
  }

  private take(n: number): Buffer {
    const first = this.peek(n);
    const out = first.subarray(0, n);
    if (first.length === n) this.chunks.shift();
    else this.chunks[0] = first.subarray(n);
    this.buffered -= n;
    return out;
  }
}

/** What a response carries besides the request's opcode and opaque. */
export interface ResponseParts {
  status?: number;
  cas?: bigint;
  datatype?: number;
  extras?: Uint8Array;
  key?: Uint8Array;
  value?: Uint8Array;
}

const EMPTY = Buffer.alloc(0);

/** A classic response (magic 0x81) to `opcode`/`opaque`. */
export function encodeResponse(opcode: number, opaque: number, parts: ResponseParts): Buffer {
  const extras = parts.extras ?? EMPTY;
  const key = parts.key ?? EMPTY;
  const value = parts.value ?? EMPTY;
  const out = Buffer.allocUnsafe(HEADER_BYTES + extras.length + key.length + value.length);
  out[0] = Magic.Response;
  out[1] = opcode;
  out.writeUInt16BE(key.length, 2);
  out[4] = extras.length;
  out[5] = parts.datatype ?? 0;
  out.writeUInt16BE(parts.status ?? Status.Success, 6);
  out.writeUInt32BE(extras.length + key.length + value.length, 8);
  out.writeUInt32BE(opaque, 12);
  out.writeBigUInt64BE(parts.cas ?? 0n, 16);
  let at = HEADER_BYTES;
  out.set(extras, at);
  at += extras.length;
  out.set(key, at);
  at += key.length;
  out.set(value, at);
  return out;
}

function hex(byte: number): string {
  return byte.toString(16).padStart(2, '0');
}
