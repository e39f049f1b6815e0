/**
 * Passwords of the settings area (decisions.md §18): the length rule, and scrypt hashes
 * (node:crypto) with a random salt per password. A hash is kept as
 * `scrypt$ln=15,r=8,p=1$<salt>$<key>` (salt and key in unpadded base64), so the parameters it was
 * made with travel with it: raising them later leaves older hashes readable.
 *
 * The cost (N = 2^15, r = 8, p = 1: 32 MiB and about 0.1 s of one core per hash on the
 * development machine, measured by `npm run bench`) is paid on every sign-in, also for an
 * unknown email (`verifyPassword` without a hash), so both take the same time. Hashes wait in a
 * `ScryptQueue`: at most two are computed at once, which bounds their memory to 64 MiB and leaves
 * libuv's other threads to file and DNS work, and at most 16 wait for a turn (about 0.8 s of
 * work); one more is refused at once (`ScryptBusyError`: the sign-in answers 429 with
 * `Retry-After`), so a flood of sign-ins cannot pile up memory and latency without bound.
 */
import { randomBytes, scrypt as nodeScrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** Fewest characters (Unicode code points) of a password (decisions.md §18). */
export const PASSWORD_MIN_LENGTH = 12;
/** Most characters of a password: input from outside is bounded. */
export const PASSWORD_MAX_LENGTH = 1024;

/** The parameters of new hashes: log2 of N, block size r, parallelism p. */
const COST = { ln: 15, r: 8, p: 1 } as const;
const SALT_BYTES = 16;
const KEY_BYTES = 32;
/** Hashes computed at once by one process (see the module's comment). */
export const SCRYPT_CONCURRENCY = 2;
/** Hashes that may wait for a turn in one process; one more is refused (`ScryptBusyError`). */
export const SCRYPT_MAX_WAITING = 16;
/** What a refused hash tells its caller to wait before trying again, s: about the queue's work (16 hashes, 2 at a time). */
export const SCRYPT_RETRY_AFTER_S = 1;
/** Largest N a stored hash may name (2^20: 1 GiB at r = 8), so a damaged row cannot exhaust memory. */
const MAX_LN = 20;

/**
 * What is wrong with `password` as a new password, in words that name the rule; undefined when
 * nothing is.
 */
export function passwordProblem(password: string): string | undefined {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH)
    return `A password needs at least ${PASSWORD_MIN_LENGTH} characters (this one has ${length}).`;
  if (length > PASSWORD_MAX_LENGTH) return `A password has at most ${PASSWORD_MAX_LENGTH} characters.`;
  return undefined;
}

/** node:crypto's `scrypt` as a promise: the key of `keyLength` bytes. */
export type ScryptFunction = (
  password: string,
  salt: Buffer,
  keyLength: number,
  options: ScryptOptions,
) => Promise<Buffer>;

const scryptOfNode: ScryptFunction = (password, salt, keyLength, options) =>
  new Promise<Buffer>((resolve, reject) =>
    nodeScrypt(password, salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key))),
  );

/** A hash refused because `maxWaiting` hashes already wait for a turn: try again after `retryAfterS`. */
export class ScryptBusyError extends Error {
  readonly retryAfterS = SCRYPT_RETRY_AFTER_S;
  constructor() {
    super('too many password hashes are waiting; try again shortly');
  }
}

/**
 * Where hashes wait for their turn: at most `concurrency` computed at once, at most `maxWaiting`
 * waiting (first come, first served); beyond that `run` throws `ScryptBusyError` at once. A slot
 * that frees up passes straight to the next in line, so no newcomer can slip in between.
 */
export class ScryptQueue {
  readonly concurrency: number;
  readonly maxWaiting: number;
  readonly #scrypt: ScryptFunction;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  /**
   * @param options.concurrency default `SCRYPT_CONCURRENCY`.
   * @param options.maxWaiting default `SCRYPT_MAX_WAITING`.
   * @param options.scrypt default node:crypto's (a test may hold it to watch the queue).
   */
  constructor(options: { concurrency?: number; maxWaiting?: number; scrypt?: ScryptFunction } = {}) {
    this.concurrency = options.concurrency ?? SCRYPT_CONCURRENCY;
    this.maxWaiting = options.maxWaiting ?? SCRYPT_MAX_WAITING;
    this.#scrypt = options.scrypt ?? scryptOfNode;
  }

  /** Hashes being computed now. */
  get running(): number {
    return this.#running;
  }

  /** Hashes waiting for a turn. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * scrypt of `password` (NFC) with `salt`, when its turn comes.
   * @throws ScryptBusyError when `maxWaiting` hashes already wait.
   */
  async run(password: string, salt: Buffer, ln: number, r: number, p: number): Promise<Buffer> {
    if (this.#running < this.concurrency) this.#running++;
    else {
      if (this.#waiting.length >= this.maxWaiting) throw new ScryptBusyError();
      // The slot is handed over by the hash that ends (`#running` stays as it is).
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
    try {
      const N = 2 ** ln;
      const options: ScryptOptions = { N, r, p, maxmem: 2 * 128 * N * r * p };
      return await this.#scrypt(password.normalize('NFC'), salt, KEY_BYTES, options);
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }
}

/** The process's queue: every hash goes through it unless its caller gives another. */
const processQueue = new ScryptQueue();

const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '');

/**
 * A new hash of `password`, with a fresh salt, in the process's queue. The caller checks
 * `passwordProblem` first.
 * @returns `scrypt$ln=15,r=8,p=1$<salt>$<key>`.
 * @throws ScryptBusyError when 16 hashes already wait (a command hashes one).
 */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await processQueue.run(password, salt, COST.ln, COST.r, COST.p);
  return `scrypt$ln=${COST.ln},r=${COST.r},p=${COST.p}$${b64(salt)}$${b64(key)}`;
}

const FORMAT = /^scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]{1,88})\$([A-Za-z0-9+/]{1,88})$/;

/** A stand-in hash for an unknown email: the same cost as a real one, matched by no password. */
const NOBODY = `scrypt$ln=${COST.ln},r=${COST.r},p=${COST.p}$${b64(Buffer.alloc(SALT_BYTES))}$${b64(Buffer.alloc(KEY_BYTES))}`;

/**
 * Whether `password` is the one `stored` was made from. Without `stored` (an unknown email, an
 * account without a password) it does the same work against a stand-in and answers false, so
 * the two cases take the same time. A malformed hash answers false.
 * @param queue where the hash waits its turn (default: the process's).
 * @throws ScryptBusyError when the queue is full (nothing was verified).
 */
export async function verifyPassword(
  password: string,
  stored: string | undefined,
  queue: ScryptQueue = processQueue,
): Promise<boolean> {
  const parsed = stored === undefined ? null : FORMAT.exec(stored);
  const parts = parsed ?? FORMAT.exec(NOBODY)!;
  const [ln, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  if (ln < 1 || ln > MAX_LN || r < 1 || p < 1) return false;
  const tooLong = [...password].length > PASSWORD_MAX_LENGTH;
  const key = await queue.run(tooLong ? '' : password, Buffer.from(parts[4]!, 'base64'), ln, r, p);
  const expected = Buffer.from(parts[5]!, 'base64');
  return parsed !== null && !tooLong && key.length === expected.length && timingSafeEqual(key, expected);
}
