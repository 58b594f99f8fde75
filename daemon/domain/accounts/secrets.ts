// Secrets at rest: API keys sealed with a device key (secretbox), keyed digests for lookup, scrypt passwords.
import { createHmac, randomBytes, type ScryptOptions, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { closeSync, fchmodSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';
import nacl from 'tweetnacl';
import { ensurePrivateDir, ensurePrivateFile } from '../../paths.js';

export const API_KEY_RE = /^svc_[0-9a-f]{48}$/;
export const SESSION_TOKEN_RE = /^sst_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(): string {
  return `svc_${randomBytes(24).toString('hex')}`;
}

export function generateSessionToken(): string {
  return `sst_${randomBytes(32).toString('base64url')}`;
}

/** `svc_` + first 4 hex + `…` + last 4: enough to tell keys apart, useless to an attacker. */
export function maskApiKey(key: string): string {
  return `${key.slice(0, 8)}…${key.slice(-4)}`;
}

export interface SealedKey {
  nonce: Buffer;
  box: Buffer;
}

/** Holds the device key and everything derived from it. */
export class DeviceSecrets {
  private readonly boxKey: Uint8Array;
  private readonly macKey: Buffer;

  constructor(deviceKey: Buffer) {
    if (deviceKey.length !== 32) throw new Error('the device key must be 32 bytes');
    this.boxKey = new Uint8Array(createHmac('sha256', deviceKey).update('azc:secretbox:v1').digest());
    this.macKey = createHmac('sha256', deviceKey).update('azc:lookup:v1').digest();
  }

  /** Loads `<stateDir>/device.key`, creating it (mode 0600) on first start. */
  static open(stateDir: string): DeviceSecrets {
    ensurePrivateDir(stateDir);
    const file = path.join(stateDir, 'device.key');
    let key: Buffer;
    try {
      key = readFileSync(file);
      ensurePrivateFile(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      key = randomBytes(32);
      writePrivateFile(file, key, { exclusive: true });
    }
    return new DeviceSecrets(key);
  }

  /** Keyed digest used to find a key or session without storing it; equal inputs give equal digests. */
  digest(secret: string): Buffer {
    return createHmac('sha256', this.macKey).update(secret).digest();
  }

  seal(secret: string): SealedKey {
    const nonce = randomBytes(nacl.secretbox.nonceLength);
    const box = nacl.secretbox(new TextEncoder().encode(secret), new Uint8Array(nonce), this.boxKey);
    return { nonce, box: Buffer.from(box) };
  }

  /** Everything stored for an API key: its lookup digest and the sealed key (shown again to admins). */
  sealKey(apiKey: string): SealedKey & { digest: Buffer } {
    return { digest: this.digest(apiKey), ...this.seal(apiKey) };
  }

  open(sealed: SealedKey): string | null {
    const plain = nacl.secretbox.open(new Uint8Array(sealed.box), new Uint8Array(sealed.nonce), this.boxKey);
    return plain ? new TextDecoder().decode(plain) : null;
  }
}

/**
 * Stored in place of a password hash for an account that has no password (created without one, for a hub or the
 * MQTT bridge): it signs in with its API key only, until an admin sets a password. No password matches a hash
 * that starts with "!" (as in /etc/shadow).
 */
export const NO_PASSWORD = '!no-password';
export const hasPassword = (hash: string): boolean => !hash.startsWith('!');

/** Constant-time comparison of two digests. */
export function sameDigest(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && nacl.verify(a, b);
}

/** Password hashing cost: scrypt with N=2^14, r=8, p=1 (~33 ms of CPU per hash here, 16 MiB of memory). */
export interface ScryptCost {
  N: number;
  r: number;
  p: number;
  keylen: number;
}

export const SCRYPT: Readonly<ScryptCost> = { N: 16384, r: 8, p: 1, keylen: 32 };

function scrypt(password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCb(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** `scrypt$N$r$p$salt$hash`, base64url; runs off the event loop. The cost is stored with the hash (verifyPassword reads it). */
export async function hashPassword(password: string, cost: Readonly<ScryptCost> = SCRYPT): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, cost.keylen, { N: cost.N, r: cost.r, p: cost.p, maxmem: 64 * 1024 * 1024 });
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/**
 * The hashes azcd makes and checks: N a power of two from 2^10 (the test suite's cost) to 2^15 (twice the production
 * cost, room to raise it), r = 8, p = 1, a 16-byte salt and a 32-byte hash. Anything else is no password of ours: a
 * cost outside these would make each check of it fail (N too small for node, too much memory) or hold a worker
 * thread for a minute (p = 400).
 */
export const PASSWORD_HASH_BOUNDS = { minN: 2 ** 10, maxN: 2 ** 15, r: 8, p: 1, saltBytes: 16, hashBytes: 32 } as const;

/** Why `stored` is not a password hash azcd would make, in words; undefined when it is one. */
export function passwordHashProblem(stored: string): string | undefined {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return 'must be scrypt$N$r$p$salt$hash';
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  const b = PASSWORD_HASH_BOUNDS;
  if (!Number.isInteger(N) || !Number.isInteger(Math.log2(N)) || N < b.minN || N > b.maxN) {
    return `has a cost N=${parts[1]}; azcd uses powers of two from ${b.minN} to ${b.maxN}`;
  }
  if (r !== b.r || p !== b.p) return `has r=${parts[2]}, p=${parts[3]}; azcd uses r=${b.r}, p=${b.p}`;
  if (
    Buffer.from(parts[4]!, 'base64url').length !== b.saltBytes ||
    Buffer.from(parts[5]!, 'base64url').length !== b.hashBytes
  ) {
    return `must carry a ${b.saltBytes}-byte salt and a ${b.hashBytes}-byte hash`;
  }
  return undefined;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  // A stored hash outside what azcd makes never reaches scrypt (see PASSWORD_HASH_BOUNDS).
  if (passwordHashProblem(stored) !== undefined) return false;
  const parts = stored.split('$');
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  const salt = Buffer.from(parts[4]!, 'base64url');
  const expected = Buffer.from(parts[5]!, 'base64url');
  const actual = await scrypt(password, salt, expected.length, { N, r, p, maxmem: 64 * 1024 * 1024 });
  return timingSafeEqual(actual, expected);
}

/**
 * Writes a secret file with mode 0600 and fsyncs it. `exclusive` fails if the file exists (first creation);
 * otherwise the content goes to a temp file first and is renamed over the target, so it is never half written.
 */
export function writePrivateFile(file: string, content: string | Buffer, options: { exclusive?: boolean } = {}): void {
  const target = options.exclusive ? file : `${file}.${process.pid}.tmp`;
  const fd = openSync(target, options.exclusive ? 'wx' : 'w', 0o600);
  try {
    // The mode of open() applies only to a new file: a leftover temp file keeps its own.
    fchmodSync(fd, 0o600);
    writeSync(fd, typeof content === 'string' ? Buffer.from(content) : content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  if (!options.exclusive) renameSync(target, file);
}
