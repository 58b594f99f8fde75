// Secrets at rest: key and token formats, sealing, keyed digests, masking, scrypt passwords and the device key file.

import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import {
  API_KEY_RE,
  DeviceSecrets,
  generateApiKey,
  generateSessionToken,
  hashPassword,
  maskApiKey,
  SESSION_TOKEN_RE,
  sameDigest,
  verifyPassword,
  writePrivateFile,
} from '../../daemon/domain/accounts/secrets.js';
import { tempDir } from '../helpers/daemon.js';

const secretsWith = (byte: number) => new DeviceSecrets(Buffer.alloc(32, byte));

t.test('an API key is svc_ followed by 48 lowercase hex characters', async (t) => {
  const bad = Array.from({ length: 200 }, generateApiKey).filter((key) => !/^svc_[0-9a-f]{48}$/.test(key));
  t.same(bad, []);
});

t.test('the API key pattern rejects upper case, wrong lengths and other prefixes', async (t) => {
  const hex = 'a'.repeat(48);
  t.ok(API_KEY_RE.test(`svc_${hex}`));
  t.notOk(API_KEY_RE.test(`svc_${'A'.repeat(48)}`));
  t.notOk(API_KEY_RE.test(`svc_${hex}0`));
  t.notOk(API_KEY_RE.test(`svc_${hex.slice(1)}`));
  t.notOk(API_KEY_RE.test(`sst_${hex}`));
});

t.test('generated API keys are unique', async (t) => {
  const keys = new Set(Array.from({ length: 1000 }, generateApiKey));
  t.equal(keys.size, 1000);
});

t.test('a session token is sst_ followed by 32 random bytes in base64url, and unique', async (t) => {
  const tokens = new Set(Array.from({ length: 200 }, generateSessionToken));
  t.equal(tokens.size, 200);
  const bad = [...tokens].filter(
    (token) => !SESSION_TOKEN_RE.test(token) || Buffer.from(token.slice(4), 'base64url').length !== 32,
  );
  t.same(bad, []);
});

t.test('a sealed key opens to the same key', async (t) => {
  const secrets = secretsWith(1);
  const key = generateApiKey();
  const sealed = secrets.seal(key);
  t.equal(secrets.open(sealed), key);
  t.notOk(sealed.box.toString('latin1').includes(key), 'the box does not hold the key in clear');
});

t.test('what is stored for an API key finds it by digest and opens to it', async (t) => {
  const secrets = secretsWith(1);
  const key = generateApiKey();
  const stored = secrets.sealKey(key);
  t.ok(sameDigest(stored.digest, secrets.digest(key)), 'the lookup digest is the key digest');
  t.equal(secrets.open(stored), key);
});

t.test('sealing the same key twice uses different nonces and boxes', async (t) => {
  const secrets = secretsWith(1);
  const key = generateApiKey();
  const a = secrets.seal(key);
  const b = secrets.seal(key);
  t.notSame(a.nonce, b.nonce);
  t.notSame(a.box, b.box);
});

t.test('a tampered box does not open', async (t) => {
  const secrets = secretsWith(1);
  const sealed = secrets.seal(generateApiKey());
  const box = Buffer.from(sealed.box);
  box[box.length - 1]! ^= 0x01;
  t.equal(secrets.open({ nonce: sealed.nonce, box }), null);
});

t.test('a box with a different nonce does not open', async (t) => {
  const secrets = secretsWith(1);
  const sealed = secrets.seal(generateApiKey());
  t.equal(secrets.open({ nonce: randomBytes(sealed.nonce.length), box: sealed.box }), null);
});

t.test('a box sealed under another device key does not open', async (t) => {
  const sealed = secretsWith(1).seal(generateApiKey());
  t.equal(secretsWith(2).open(sealed), null);
});

t.test('the digest of a secret is stable for one device key', async (t) => {
  const key = generateApiKey();
  const digest = secretsWith(1).digest(key);
  t.equal(digest.length, 32);
  t.ok(sameDigest(digest, secretsWith(1).digest(key)));
  t.notOk(sameDigest(digest, secretsWith(1).digest(generateApiKey())), 'another secret has another digest');
});

t.test('the digest is keyed: another device key gives another digest', async (t) => {
  const key = generateApiKey();
  t.notOk(sameDigest(secretsWith(1).digest(key), secretsWith(2).digest(key)));
});

t.test('digests of different lengths never compare equal', async (t) => {
  const digest = secretsWith(1).digest('x');
  t.notOk(sameDigest(digest, digest.subarray(0, 16)));
});

t.test('a device key of the wrong length is refused', async (t) => {
  t.throws(() => new DeviceSecrets(Buffer.alloc(16)), /32 bytes/);
});

t.test('a masked key is svc_, the first 4 hex, an ellipsis and the last 4 hex', async (t) => {
  const key = `svc_abcd${'0'.repeat(40)}9f8e`;
  t.equal(maskApiKey(key), 'svc_abcd…9f8e');
  t.match(maskApiKey(generateApiKey()), /^svc_[0-9a-f]{4}…[0-9a-f]{4}$/);
});

t.test('a hashed password verifies with the same password', async (t) => {
  const hash = await hashPassword('correct horse battery');
  t.match(hash, /^scrypt\$\d+\$\d+\$\d+\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
  t.match(hash, /^scrypt\$16384\$8\$1\$/, 'the production cost: N=16384, r=8, p=1');
  t.notOk(hash.includes('correct horse battery'));
  t.equal(await verifyPassword('correct horse battery', hash), true);
});

t.test('a hashed password does not verify with a wrong password', async (t) => {
  const hash = await hashPassword('correct horse battery');
  t.equal(await verifyPassword('correct horse batterY', hash), false);
  t.equal(await verifyPassword('', hash), false);
});

t.test('hashing the same password twice uses a fresh salt', async (t) => {
  t.not(await hashPassword('same password'), await hashPassword('same password'));
});

t.test('a stored hash in an unknown format never verifies', async (t) => {
  t.equal(await verifyPassword('anything', 'plain:anything'), false);
  t.equal(await verifyPassword('anything', ''), false);
});

t.test('the device key file is created with mode 0600 and 32 random bytes', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  DeviceSecrets.open(dir);
  const file = path.join(dir, 'device.key');
  t.equal(statSync(file).mode & 0o777, 0o600);
  t.equal(readFileSync(file).length, 32);
});

t.test('the device key file is reused on the next open', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const first = DeviceSecrets.open(dir);
  const before = readFileSync(path.join(dir, 'device.key'));
  const second = DeviceSecrets.open(dir);
  t.same(readFileSync(path.join(dir, 'device.key')), before, 'the file is unchanged');
  const key = generateApiKey();
  t.equal(second.open(first.seal(key)), key, 'a key sealed before a restart opens after it');
  t.ok(sameDigest(first.digest(key), second.digest(key)), 'and digests still match');
});

t.test('a device key file readable by others is tightened to 0600 on open', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'device.key');
  writeFileSync(file, randomBytes(32));
  chmodSync(file, 0o644);
  DeviceSecrets.open(dir);
  t.equal(statSync(file).mode & 0o777, 0o600);
});

t.test('a state folder readable by others is tightened to 0700 when the device key is opened', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  chmodSync(dir, 0o755);
  DeviceSecrets.open(dir);
  t.equal(statSync(dir).mode & 0o777, 0o700);
});

t.test('a private file written over a leftover temp file readable by others is still 0600', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'initial-admin.txt');
  const leftover = `${file}.${process.pid}.tmp`;
  writeFileSync(leftover, 'from a crash');
  chmodSync(leftover, 0o644);
  writePrivateFile(file, 'secret');
  t.equal(statSync(file).mode & 0o777, 0o600);
  t.equal(readFileSync(file, 'utf8'), 'secret');
});
