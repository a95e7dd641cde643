import { connect, type Socket } from 'net';

/**
 * A minimal memcached binary-protocol client for the server's tests: it writes requests (or any bytes)
 * and reads responses in order, and tells when the server closed the connection. Written from the
 * protocol's header layout, independent of the server's own codec.
 */

export interface Response {
  magic: number;
  opcode: number;
  status: number;
  datatype: number;
  opaque: number;
  cas: bigint;
  extras: Buffer;
  key: Buffer;
  value: Buffer;
}

export interface RequestFields {
  key?: Buffer | string;
  extras?: Buffer;
  value?: Buffer | string;
  cas?: bigint;
  opaque?: number;
  datatype?: number;
  vbucket?: number;
  /** Frame extras: sends an alternative request (magic 0x08). */
  frameExtras?: Buffer;
}

export function encodeRequest(opcode: number, fields: RequestFields = {}): Buffer {
  const key = typeof fields.key === 'string' ? Buffer.from(fields.key) : (fields.key ?? Buffer.alloc(0));
  const value = typeof fields.value === 'string' ? Buffer.from(fields.value) : (fields.value ?? Buffer.alloc(0));
  const extras = fields.extras ?? Buffer.alloc(0);
  const frame = fields.frameExtras;
  const header = Buffer.alloc(24);
  header[0] = frame === undefined ? 0x80 : 0x08;
  header[1] = opcode;
  if (frame === undefined) header.writeUInt16BE(key.length, 2);
  else {
    header[2] = frame.length;
    header[3] = key.length;
  }
  header[4] = extras.length;
  header[5] = fields.datatype ?? 0;
  header.writeUInt16BE(fields.vbucket ?? 0, 6);
  header.writeUInt32BE((frame?.length ?? 0) + extras.length + key.length + value.length, 8);
  header.writeUInt32BE(fields.opaque ?? 0, 12);
  header.writeBigUInt64BE(fields.cas ?? 0n, 16);
  return Buffer.concat([header, frame ?? Buffer.alloc(0), extras, key, value]);
}

export class McbpClient {
  private buffer = Buffer.alloc(0);
  private readonly responses: Response[] = [];
  private waiting: (() => void) | undefined;
  private nextOpaque = 1;
  /** Resolves when the server closes the connection. */
  readonly closed: Promise<void>;
  private isClosed = false;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.parse();
    });
    socket.on('error', () => undefined);
    this.closed = new Promise((resolve) =>
      socket.once('close', () => {
        this.isClosed = true;
        this.waiting?.();
        resolve();
      }),
    );
  }

  static connect(port: number): Promise<McbpClient> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new McbpClient(socket)));
      socket.once('error', reject);
    });
  }

  /** Writes raw bytes. */
  write(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** Writes a request without waiting; returns its opaque. */
  send(opcode: number, fields: RequestFields = {}): number {
    const opaque = fields.opaque ?? this.nextOpaque++;
    this.write(encodeRequest(opcode, { ...fields, opaque }));
    return opaque;
  }

  /** Sends a request and reads the next response. */
  async request(opcode: number, fields: RequestFields = {}): Promise<Response> {
    this.send(opcode, fields);
    return this.next();
  }

  /** The next response; rejects if the connection closes first. */
  async next(): Promise<Response> {
    while (this.responses.length === 0) {
      if (this.isClosed) throw new Error('the server closed the connection');
      await new Promise<void>((resolve) => (this.waiting = resolve));
      this.waiting = undefined;
    }
    return this.responses.shift() as Response;
  }

  close(): void {
    this.socket.destroy();
  }

  private parse(): void {
    while (this.buffer.length >= 24) {
      const bodyLength = this.buffer.readUInt32BE(8);
      if (this.buffer.length < 24 + bodyLength) return;
      const magic = this.buffer[0];
      const frameLength = magic === 0x18 ? this.buffer[2] : 0;
      const keyLength = magic === 0x18 ? this.buffer[3] : this.buffer.readUInt16BE(2);
      const extrasLength = this.buffer[4];
      const body = this.buffer.subarray(24 + frameLength, 24 + bodyLength);
      this.responses.push({
        magic,
        opcode: this.buffer[1],
        datatype: this.buffer[5],
        status: this.buffer.readUInt16BE(6),
        opaque: this.buffer.readUInt32BE(12),
        cas: this.buffer.readBigUInt64BE(16),
        extras: Buffer.from(body.subarray(0, extrasLength)),
        key: Buffer.from(body.subarray(extrasLength, extrasLength + keyLength)),
        value: Buffer.from(body.subarray(extrasLength + keyLength)),
      });
      this.buffer = this.buffer.subarray(24 + bodyLength);
    }
    this.waiting?.();
  }
}

/** Extras of SET/ADD/REPLACE: flags and expiry. */
export function storeExtras(flags: number, expiry = 0): Buffer {
  const out = Buffer.alloc(8);
  out.writeUInt32BE(flags >>> 0, 0);
  out.writeUInt32BE(expiry >>> 0, 4);
  return out;
}

/** Extras of INCR/DECR: delta, initial value, expiry. */
export function arithmeticExtras(delta: bigint, initial: bigint, expiry = 0): Buffer {
  const out = Buffer.alloc(20);
  out.writeBigUInt64BE(delta, 0);
  out.writeBigUInt64BE(initial, 8);
  out.writeUInt32BE(expiry >>> 0, 16);
  return out;
}
