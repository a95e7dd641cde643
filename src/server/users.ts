import { Buffer } from 'node:buffer';
import { createHash, createHmac, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

/**
 * The server's users and their SASL mechanisms: PLAIN and SCRAM-SHA512/256/SHA1 (RFC 5802). A password
 * is never kept: each user has, per hash, a random salt, the iteration count and SCRAM's StoredKey and
 * ServerKey, from which a PLAIN password is checked too (by deriving its StoredKey).
 */

const pbkdf2Async = promisify(pbkdf2);

/** A user as the server options give it. */
export interface KvUser {
  name: string;
  password: string;
  /** The buckets the user may select; default every bucket. */
  buckets?: string[];
  /** Whether the user may flush a bucket and set its collections manifest (default false). */
  admin?: boolean;
}

export type ScramHash = 'sha1' | 'sha256' | 'sha512';

/** The mechanisms offered, strongest first (Couchbase's order). */
export const MECHANISMS = ['SCRAM-SHA512', 'SCRAM-SHA256', 'SCRAM-SHA1', 'PLAIN'] as const;

const HASH_OF: Record<string, ScramHash> = { 'SCRAM-SHA512': 'sha512', 'SCRAM-SHA256': 'sha256', 'SCRAM-SHA1': 'sha1' };
const HASH_BYTES: Record<ScramHash, number> = { sha1: 20, sha256: 32, sha512: 64 };
const ITERATIONS = 4096;

interface ScramSecret {
  readonly salt: Buffer;
  readonly iterations: number;
  readonly storedKey: Buffer;
  readonly serverKey: Buffer;
}

/** A user as the server keeps it. */
export interface StoredUser {
  readonly name: string;
  readonly buckets: readonly string[] | undefined;
  readonly admin: boolean;
  readonly secrets: Readonly<Record<ScramHash, ScramSecret>>;
}

async function secretOf(password: string, hash: ScramHash): Promise<ScramSecret> {
  const salt = randomBytes(16);
  const salted = await pbkdf2Async(password, salt, ITERATIONS, HASH_BYTES[hash], hash);
  return {
    salt,
    iterations: ITERATIONS,
    storedKey: createHash(hash)
      .update(hmac(hash, salted, 'Client Key'))
      .digest(),
    serverKey: hmac(hash, salted, 'Server Key'),
  };
}

function hmac(hash: ScramHash, key: Buffer, data: string | Buffer): Buffer {
  return createHmac(hash, key).update(data).digest();
}

/** The users of a server, salted and hashed. */
export class UserStore {
  private constructor(private readonly users: ReadonlyMap<string, StoredUser>) {}

  static async create(users: readonly KvUser[]): Promise<UserStore> {
    const stored = new Map<string, StoredUser>();
    for (const user of users) {
      if (typeof user.name !== 'string' || user.name === '' || typeof user.password !== 'string') {
        throw new TypeError('a user has a non-empty name and a password');
      }
      const [sha1, sha256, sha512] = await Promise.all((['sha1', 'sha256', 'sha512'] as const).map((hash) => secretOf(user.password, hash)));
      stored.set(user.name, { name: user.name, buckets: user.buckets, admin: user.admin === true, secrets: { sha1, sha256, sha512 } });
    }
    return new UserStore(stored);
  }

  get empty(): boolean {
    return this.users.size === 0;
  }

  get(name: string): StoredUser | undefined {
    return this.users.get(name);
  }

  /** PLAIN: `[authzid] NUL authcid NUL password`. The user, or `undefined` when it does not authenticate. */
  async plain(message: Buffer): Promise<StoredUser | undefined> {
    const parts = message.toString('utf8').split('\0');
    if (parts.length !== 3) return undefined;
    const [, name, password] = parts;
    const user = this.users.get(name);
    if (user === undefined) return undefined;
    const secret = user.secrets.sha512;
    const salted = await pbkdf2Async(password, secret.salt, secret.iterations, HASH_BYTES.sha512, 'sha512');
    const storedKey = createHash('sha512')
      .update(hmac('sha512', salted, 'Client Key'))
      .digest();
    return timingSafeEqual(storedKey, secret.storedKey) ? user : undefined;
  }

  /** The SCRAM exchange for a mechanism, or `undefined` when it is not a SCRAM mechanism. */
  scram(mechanism: string): ScramExchange | undefined {
    const hash = HASH_OF[mechanism];
    return hash === undefined ? undefined : new ScramExchange(this, hash);
  }
}

/** One SCRAM exchange, server side: the client's first message, then its final one. */
export class ScramExchange {
  private user: StoredUser | undefined;
  private clientFirstBare = '';
  private serverFirst = '';
  private nonce = '';

  constructor(
    private readonly users: UserStore,
    private readonly hash: ScramHash,
  ) {}

  /** The server's first message, answering the client's; `undefined` for a malformed one. */
  first(message: Buffer): string | undefined {
    const text = message.toString('utf8');
    // gs2 header: no channel binding ('n' or 'y'), no authzid.
    const match = /^[ny],,(n=([^,]*),r=([^,]+)(?:,.*)?)$/.exec(text);
    if (match === null) return undefined;
    const name = match[2].replace(/=2C/g, ',').replace(/=3D/g, '=');
    this.user = this.users.get(name);
    this.clientFirstBare = match[1];
    this.nonce = match[3] + randomBytes(18).toString('base64');
    // An unknown user gets a made-up salt, so the answer does not tell who exists.
    const secret = this.user?.secrets[this.hash];
    const salt = secret?.salt ?? createHash('sha256').update(name).digest().subarray(0, 16);
    this.serverFirst = `r=${this.nonce},s=${salt.toString('base64')},i=${secret?.iterations ?? ITERATIONS}`;
    return this.serverFirst;
  }

  /** The client's final message checked: the user and the server's final message, or `undefined`. */
  final(message: Buffer): { user: StoredUser; reply: string } | undefined {
    const text = message.toString('utf8');
    const match = /^(c=[^,]*,r=([^,]+)(?:,[^p][^,]*)*),p=([A-Za-z0-9+/=]+)$/.exec(text);
    if (match === null || this.user === undefined || match[2] !== this.nonce) return undefined;
    const secret = this.user.secrets[this.hash];
    const authMessage = `${this.clientFirstBare},${this.serverFirst},${match[1]}`;
    const proof = Buffer.from(match[3], 'base64');
    const signature = hmac(this.hash, secret.storedKey, authMessage);
    if (proof.length !== signature.length) return undefined;
    const clientKey = Buffer.alloc(proof.length);
    for (let i = 0; i < proof.length; i++) clientKey[i] = proof[i] ^ signature[i];
    const storedKey = createHash(this.hash).update(clientKey).digest();
    if (!timingSafeEqual(storedKey, secret.storedKey)) return undefined;
    return { user: this.user, reply: `v=${hmac(this.hash, secret.serverKey, authMessage).toString('base64')}` };
  }
}
