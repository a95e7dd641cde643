import { Buffer } from 'node:buffer';
import type { Socket } from 'node:net';
import { dispatch } from './commands';
import { encodeResponse, FrameDecoder, FrameError, type Request } from './frame';
import { Feature } from './protocol';
import { Session, type ServerContext } from './session';

/** Limits of one connection. */
export interface ConnectionLimits {
  /** Close a connection with no traffic either way for this long. */
  readonly idleTimeoutMs: number;
  /** Close a connection that has held an incomplete packet for this long (a stalled or trickling sender). */
  readonly frameTimeoutMs: number;
}

/** Requests parsed but not yet answered, past which reading pauses until the backlog drains. */
const MAX_QUEUED = 1024;
/** Reply bytes gathered before they are written, and unsent bytes past which the loop waits for a drain. */
const WRITE_BATCH_BYTES = 64 * 1024;
const HIGH_WATER_BYTES = 4 * 1024 * 1024;

/**
 * Serves one client connection: cuts its bytes into requests, answers them one after another in the
 * order received (so pipelined requests are answered in order, each with its opaque), and closes the
 * connection on a packet that cannot be a request (after answering it), on QUIT, on idleness and on a
 * packet that stays incomplete too long. A failure of one command is that command's reply; nothing a
 * client sends reaches another connection.
 */
export function serveConnection(server: ServerContext, socket: Socket, limits: ConnectionLimits): void {
  const session = new Session(server, socket);
  const decoder = new FrameDecoder(() => session.features.has(Feature.AltRequestSupport));
  const queue: (Request | FrameError)[] = [];
  let broken = false;
  let running = false;
  let frameTimer: NodeJS.Timeout | undefined;

  server.stats.currConnections++;
  server.stats.totalConnections++;
  socket.setNoDelay(true);
  socket.setKeepAlive(true, 30_000);
  socket.setTimeout(limits.idleTimeoutMs, () => socket.destroy());
  socket.on('error', () => undefined);
  socket.on('close', () => {
    server.stats.currConnections--;
    clearTimeout(frameTimer);
    queue.length = 0;
  });
  socket.on('data', (chunk: Buffer) => {
    if (broken) return;
    decoder.push(chunk);
    try {
      for (let req = decoder.next(); req !== undefined; req = decoder.next()) queue.push(req);
    } catch (err) {
      if (!(err instanceof FrameError)) throw err;
      broken = true;
      queue.push(err);
    }
    watchFrame();
    if (queue.length >= MAX_QUEUED) socket.pause();
    if (!running) void run();
  });

  /** Starts the incomplete-packet timer when bytes of a packet wait, stops it when none do. */
  function watchFrame(): void {
    if (decoder.pending === 0 || broken) {
      clearTimeout(frameTimer);
      frameTimer = undefined;
    } else if (frameTimer === undefined) {
      frameTimer = setTimeout(() => socket.destroy(), limits.frameTimeoutMs);
      frameTimer.unref();
    }
  }

  async function run(): Promise<void> {
    running = true;
    const out: Buffer[] = [];
    let outBytes = 0;
    const flush = (): void => {
      if (out.length === 0 || socket.destroyed) return;
      socket.write(out.length === 1 ? out[0] : Buffer.concat(out, outBytes));
      out.length = 0;
      outBytes = 0;
    };
    try {
      while (queue.length > 0 && !socket.destroyed) {
        const next = queue.shift() as Request | FrameError;
        if (next instanceof FrameError) {
          flush();
          socket.end(encodeResponse(next.opcode, next.opaque, { status: next.status, value: Buffer.from(next.message) }));
          return;
        }
        const reply = await dispatch(session, next);
        for (const packet of reply === undefined ? [] : Array.isArray(reply) ? reply : [reply]) {
          out.push(packet);
          outBytes += packet.length;
        }
        if (session.quitting) {
          flush();
          socket.end();
          return;
        }
        if (queue.length === 0 || outBytes >= WRITE_BATCH_BYTES) flush();
        if (socket.writableLength > HIGH_WATER_BYTES) await new Promise((resolve) => socket.once('drain', resolve).once('close', resolve));
        if (queue.length < MAX_QUEUED / 2 && socket.isPaused()) socket.resume();
      }
      flush();
    } finally {
      running = false;
    }
  }
}
