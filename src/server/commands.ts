import { CLASSIC_COMMANDS, type Handler } from './classic-commands';
import { COUCHBASE_COMMANDS } from './couchbase-commands';
import type { Request } from './frame';
import { Opcode, QUIET_ON_SUCCESS, Status } from './protocol';
import { CommandError, statusOf } from './server-error';
import type { Reply, Session } from './session';
import { SUBDOC_COMMANDS } from './subdoc-commands';

/** Every command the server answers, by opcode. */
const COMMANDS: ReadonlyMap<number, Handler> = new Map([...CLASSIC_COMMANDS, ...COUCHBASE_COMMANDS, ...SUBDOC_COMMANDS]);

/** Commands a client may send before it authenticates. */
const BEFORE_AUTH: ReadonlySet<number> = new Set([
  Opcode.Hello,
  Opcode.SaslListMechs,
  Opcode.SaslAuth,
  Opcode.SaslStep,
  Opcode.Noop,
  Opcode.Version,
  Opcode.Quit,
  Opcode.QuitQ,
  Opcode.GetErrorMap,
]);

/** Quiet reads: silent when the key is missing. */
const QUIET_ON_MISS: ReadonlySet<number> = new Set([Opcode.GetQ, Opcode.GetKQ, Opcode.GetAndTouchQ, Opcode.GetMetaQ]);

/**
 * Answers one request: unknown opcodes are Unknown Command, commands before authentication (when the
 * server has users) are Auth Error, a command's error is its status; quiet commands say nothing on
 * success (quiet reads: on a miss).
 */
export async function dispatch(session: Session, req: Request): Promise<Reply> {
  const handler = COMMANDS.get(req.opcode);
  if (handler === undefined) return session.failure(req, Status.UnknownCommand, `unknown command 0x${req.opcode.toString(16).padStart(2, '0')}`);
  if (!session.authenticated && !BEFORE_AUTH.has(req.opcode)) return session.failure(req, Status.AuthError, 'authenticate first');
  try {
    const reply = await handler(session, req);
    return QUIET_ON_SUCCESS.has(req.opcode) ? undefined : reply;
  } catch (err) {
    const status = statusOf(err, session.xerror);
    if (status === Status.KeyNotFound && QUIET_ON_MISS.has(req.opcode)) return undefined;
    const message = err instanceof Error ? err.message : String(err);
    return session.failure(req, status, message, err instanceof CommandError ? err.body : undefined);
  }
}
