// The secrets of a backup sealed under a passphrase: scrypt derives the key, NaCl secretbox seals and authenticates.
import { randomBytes, type ScryptOptions, scrypt as scryptCb } from 'node:crypto';
import nacl from 'tweetnacl';

/** How the key was derived; stored in the document so a later version can raise the cost and still read old ones. */
export interface KdfParams {
  name: 'scrypt';
  /** CPU/memory cost (a power of two), block size and parallelism. */
  N: number;
  r: number;
  p: number;
  /** Random per backup, base64. */
  salt: string;
}

export interface SealedSecrets {
  kdf: KdfParams;
  /** NaCl secretbox: XSalsa20 encryption with a Poly1305 tag (a wrong passphrase fails the tag). */
  cipher: 'nacl-secretbox';
  nonce: string;
  box: string;
}

/**
 * The cost used for new backups: N=2^15, r=8 takes about a second and 32 MiB on a Pi 4, enough to make guessing
 * passphrases slow without holding a small appliance up.
 */
export const KDF_COST = { N: 2 ** 15, r: 8, p: 1 };
/** What a document may ask for: within this, deriving the key stays bounded in time and memory. */
export const KDF_BOUNDS = { minN: 2 ** 14, maxN: 2 ** 17, maxR: 16, maxP: 4, maxMemoryBytes: 256 * 1024 * 1024 };
const SALT_BYTES = 16;

/** 128·N·r bytes is what scrypt allocates; node refuses anything above maxmem. */
const memoryOf = (kdf: Pick<KdfParams, 'N' | 'r' | 'p'>): number => 128 * kdf.N * kdf.r + 128 * kdf.r * kdf.p;

/** Runs on libuv's thread pool: the event loop keeps serving while the key is derived. */
function deriveKey(passphrase: string, kdf: KdfParams): Promise<Uint8Array> {
  const options: ScryptOptions = { N: kdf.N, r: kdf.r, p: kdf.p, maxmem: memoryOf(kdf) + 1024 * 1024 };
  return new Promise((resolve, reject) =>
    scryptCb(
      passphrase.normalize('NFC'),
      Buffer.from(kdf.salt, 'base64'),
      nacl.secretbox.keyLength,
      options,
      (err, key) => (err ? reject(err) : resolve(new Uint8Array(key))),
    ),
  );
}

/** Seals `plaintext` (the JSON of the secrets) under a key derived from the passphrase with a fresh salt. */
export async function sealSecrets(passphrase: string, plaintext: string, cost = KDF_COST): Promise<SealedSecrets> {
  const kdf: KdfParams = { name: 'scrypt', ...cost, salt: randomBytes(SALT_BYTES).toString('base64') };
  const key = await deriveKey(passphrase, kdf);
  const nonce = randomBytes(nacl.secretbox.nonceLength);
  const box = nacl.secretbox(new TextEncoder().encode(plaintext), new Uint8Array(nonce), key);
  return { kdf, cipher: 'nacl-secretbox', nonce: nonce.toString('base64'), box: Buffer.from(box).toString('base64') };
}

/** Why sealed secrets cannot even be tried: a cost outside the bounds or malformed fields; undefined when fine. */
export function sealedSecretsProblem(sealed: SealedSecrets): string | undefined {
  const { N, r, p } = sealed.kdf;
  if (!Number.isInteger(Math.log2(N)) || N < KDF_BOUNDS.minN || N > KDF_BOUNDS.maxN) {
    return `"secrets.kdf.N" must be a power of two from ${KDF_BOUNDS.minN} to ${KDF_BOUNDS.maxN}, got ${N}`;
  }
  if (r > KDF_BOUNDS.maxR || p > KDF_BOUNDS.maxP || memoryOf(sealed.kdf) > KDF_BOUNDS.maxMemoryBytes) {
    return `"secrets.kdf" asks for more work than a restore allows (r at most ${KDF_BOUNDS.maxR}, p at most ${KDF_BOUNDS.maxP})`;
  }
  if (Buffer.from(sealed.kdf.salt, 'base64').length < SALT_BYTES)
    return `"secrets.kdf.salt" must be at least ${SALT_BYTES} bytes of base64`;
  if (Buffer.from(sealed.nonce, 'base64').length !== nacl.secretbox.nonceLength) {
    return `"secrets.nonce" must be ${nacl.secretbox.nonceLength} bytes of base64`;
  }
  return undefined;
}

/** The plaintext, or null when the passphrase is wrong or the box was changed (the tag does not match). */
export async function openSecrets(passphrase: string, sealed: SealedSecrets): Promise<string | null> {
  const key = await deriveKey(passphrase, sealed.kdf);
  const plain = nacl.secretbox.open(
    new Uint8Array(Buffer.from(sealed.box, 'base64')),
    new Uint8Array(Buffer.from(sealed.nonce, 'base64')),
    key,
  );
  if (!plain) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(plain);
  } catch {
    return null;
  }
}
