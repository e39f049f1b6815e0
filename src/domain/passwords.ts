/**
 * Passwords of the settings area (decisions.md §18): the length rule, and scrypt hashes
 * (node:crypto) with a random salt per password. A hash is kept as
 * `scrypt$ln=15,r=8,p=1$<salt>$<key>` (salt and key in unpadded base64), so the parameters it was
 * made with travel with it: raising them later leaves older hashes readable.
 *
 * The cost (N = 2^15, r = 8, p = 1: 32 MiB and about 0.1 s of one core per hash on the
 * development machine, measured by `npm run bench`) is paid on every sign-in, also for an
 * unknown email (`verifyPassword` without a hash), so both take the same time. At most two hashes
 * are computed at once, which bounds their memory to 64 MiB and leaves libuv's other threads to
 * file and DNS work; a burst of sign-ins waits its turn.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** Fewest characters (Unicode code points) of a password (decisions.md §18). */
export const PASSWORD_MIN_LENGTH = 12;
/** Most characters of a password: input from outside is bounded. */
export const PASSWORD_MAX_LENGTH = 1024;

/** The parameters of new hashes: log2 of N, block size r, parallelism p. */
const COST = { ln: 15, r: 8, p: 1 } as const;
const SALT_BYTES = 16;
const KEY_BYTES = 32;
/** Hashes computed at once (see the module's comment). */
const CONCURRENCY = 2;
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

let running = 0;
const waiting: (() => void)[] = [];

/** scrypt of `password` with `salt`, at most `CONCURRENCY` at once. */
async function derive(password: string, salt: Buffer, ln: number, r: number, p: number): Promise<Buffer> {
  if (running >= CONCURRENCY) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    const N = 2 ** ln;
    const options: ScryptOptions = { N, r, p, maxmem: 2 * 128 * N * r * p };
    return await new Promise<Buffer>((resolve, reject) =>
      scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (error, key) =>
        error ? reject(error) : resolve(key),
      ),
    );
  } finally {
    running--;
    waiting.shift()?.();
  }
}

const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '');

/**
 * A new hash of `password`, with a fresh salt. The caller checks `passwordProblem` first.
 * @returns `scrypt$ln=15,r=8,p=1$<salt>$<key>`.
 */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, COST.ln, COST.r, COST.p);
  return `scrypt$ln=${COST.ln},r=${COST.r},p=${COST.p}$${b64(salt)}$${b64(key)}`;
}

const FORMAT = /^scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]{1,88})\$([A-Za-z0-9+/]{1,88})$/;

/** A stand-in hash for an unknown email: the same cost as a real one, matched by no password. */
const NOBODY = `scrypt$ln=${COST.ln},r=${COST.r},p=${COST.p}$${b64(Buffer.alloc(SALT_BYTES))}$${b64(Buffer.alloc(KEY_BYTES))}`;

/**
 * Whether `password` is the one `stored` was made from. Without `stored` (an unknown email, an
 * account without a password) it does the same work against a stand-in and answers false, so
 * the two cases take the same time. A malformed hash answers false.
 */
export async function verifyPassword(password: string, stored: string | undefined): Promise<boolean> {
  const parsed = stored === undefined ? null : FORMAT.exec(stored);
  const parts = parsed ?? FORMAT.exec(NOBODY)!;
  const [ln, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  if (ln < 1 || ln > MAX_LN || r < 1 || p < 1) return false;
  const tooLong = [...password].length > PASSWORD_MAX_LENGTH;
  const key = await derive(tooLong ? '' : password, Buffer.from(parts[4]!, 'base64'), ln, r, p);
  const expected = Buffer.from(parts[5]!, 'base64');
  return parsed !== null && !tooLong && key.length === expected.length && timingSafeEqual(key, expected);
}
