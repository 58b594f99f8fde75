// The backup document on its own: what a restore accepts, what it refuses and how it says so, and the sealed secrets.
import t, { type Test } from 'tap';
import { openSecrets, sealedSecretsProblem, sealSecrets } from '../../daemon/domain/backup/backup-crypto.js';
import {
  BACKUP_VERSION,
  type BackupDocument,
  parseBackup,
  parseSecrets,
  UPGRADES,
} from '../../daemon/domain/backup/backup-format.js';
import { DomainError } from '../../daemon/domain/shared/errors.js';

const LIMITS = { playlists: 500, tracksPerPlaylist: 5000, scenes: 100 };
const AT = '2026-01-01T00:00:00.000Z';
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const simulated = (channel: number) => ({ amplifier: 'simulated', driver: 'simulated', channel });
/** Cheapest cost the bounds allow: these tests check the sealing, not the cost. */
const CHEAP = { N: 2 ** 14, r: 8, p: 1 };

function documentWithEverything(): BackupDocument {
  return {
    format: 'azcd-backup',
    version: BACKUP_VERSION,
    createdAt: AT,
    schemaVersion: 4,
    device: { udn: `uuid:${id(99)}`, friendlyName: 'Audio Zone Controller', azcdVersion: '1.0.0' },
    users: [
      {
        id: id(1),
        username: 'admin',
        role: 'Admin',
        isEnabled: true,
        passwordChangeRequired: false,
        createdAt: AT,
        assignments: { playerIds: [], zoneIds: [] },
      },
      {
        id: id(2),
        username: 'kitchen',
        role: 'Operator',
        isEnabled: true,
        passwordChangeRequired: false,
        createdAt: AT,
        assignments: { playerIds: [id(10)], zoneIds: [id(20)] },
      },
    ],
    players: [
      { id: id(10), name: 'Streamer', volume: 0.3, input: simulated(2), output: null, createdAt: AT },
      {
        id: id(11),
        name: 'Pi DAC',
        volume: 0.3,
        input: simulated(4),
        output: { kind: 'alsa', device: 'hw:CARD=sndrpihifiberry,DEV=0' },
        createdAt: AT,
      },
      {
        id: id(12),
        name: 'Snapcast',
        volume: 0.3,
        input: simulated(5),
        output: { kind: 'fifo', path: '/run/snapserver/azcd.pcm' },
        createdAt: AT,
      },
    ],
    zones: [
      {
        id: id(20),
        name: 'Kitchen',
        output: simulated(1),
        maxVolume: 0.6,
        turnOnVolume: 0.2,
        volume: 0.4,
        muted: false,
        power: true,
        source: 2,
        playerId: id(10),
        createdAt: AT,
      },
      {
        id: id(21),
        name: 'Bedroom',
        output: simulated(2),
        maxVolume: 1,
        turnOnVolume: null,
        volume: 0.1,
        muted: true,
        power: false,
        source: 1,
        playerId: null,
        createdAt: AT,
      },
    ],
    inputDevices: [
      { id: id(30), name: 'Turntable', kind: 'line-in', input: simulated(3), isFavorite: true, createdAt: AT },
    ],
    playlists: [
      {
        id: id(40),
        name: 'Dinner',
        isFavorite: false,
        createdAt: AT,
        tracks: [{ id: id(41), title: 'One', uri: 'http://example.invalid/1', durationMs: null }],
      },
    ],
    scenes: [
      {
        id: id(50),
        name: 'Dinner',
        createdAt: AT,
        updatedAt: AT,
        zones: [{ zoneId: id(20), power: true, volume: 0.3, muted: false, playerId: id(10) }],
      },
    ],
    settings: { deletedChannels: [{ kind: 'zone', amplifier: 'simulated', driver: 'simulated', channel: 6 }] },
  };
}

/** A hash of azcd's form at cost N: a 16-byte salt and a 32-byte hash. */
const goodHash = (N: number, r = 8, p = 1) =>
  `scrypt$${N}$${r}$${p}$${Buffer.alloc(16, 1).toString('base64url')}$${Buffer.alloc(32, 2).toString('base64url')}`;

/** The problem `check` refuses with (fails the test when it accepts). */
function refusedBy(t: Test, check: () => unknown): DomainError {
  try {
    check();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  t.fail('accepted');
  return new DomainError('invalid', '');
}

/** The problem a document is refused with (fails the test when it is accepted). */
const refusal = (t: Test, value: unknown, limits = LIMITS): DomainError =>
  refusedBy(t, () => parseBackup(value, limits));

t.test('a complete document is accepted as it is', async (t) => {
  const doc = documentWithEverything();
  t.same(parseBackup(JSON.parse(JSON.stringify(doc)), LIMITS), doc);
});

t.test('a foreign, newer or shapeless document is named as such', async (t) => {
  t.match(refusal(t, 'a string').detail, /"backup" must be the JSON object of an azcd backup/);
  t.match(refusal(t, null).detail, /must be the JSON object/);
  t.match(
    refusal(t, { format: 'amplipi', version: 1 }).detail,
    /this is not an azcd backup: "format" must be "azcd-backup", got "amplipi"/,
  );
  t.match(
    refusal(t, { ...documentWithEverything(), version: '1' }).detail,
    /"backup.version" must be a whole number from 1, got "1"/,
  );
  const newer = refusal(t, { ...documentWithEverything(), version: BACKUP_VERSION + 1 });
  t.equal(newer.kind, 'invalid');
  t.match(
    newer.detail,
    new RegExp(
      `format version ${BACKUP_VERSION + 1}, newer than this azcd reads \\(up to ${BACKUP_VERSION}\\); update azcd`,
    ),
  );
});

t.test('every older format version has an upgrade step to the next one', async (t) => {
  for (let version = 1; version < BACKUP_VERSION; version++)
    t.type(UPGRADES[version], 'function', `from version ${version}`);
  t.same(
    Object.keys(UPGRADES)
      .map(Number)
      .filter((v) => v >= BACKUP_VERSION),
    [],
    'no step starts at or after the current version',
  );
});

t.test('a version 1 document is upgraded: its players are devices wired to their inputs', async (t) => {
  const doc = documentWithEverything() as any;
  doc.version = 1;
  doc.players = doc.players.map(({ output: _o, ...player }: Record<string, unknown>) => player);
  const parsed = parseBackup(JSON.parse(JSON.stringify(doc)), LIMITS);
  t.equal(parsed.version, BACKUP_VERSION);
  t.same(
    parsed.players.map((p) => p.output),
    [null, null, null],
  );
});

t.test(
  "a stream player's output is refused when another player has it or a FIFO is not an absolute path",
  async (t) => {
    const shared = documentWithEverything();
    shared.players[2]!.output = { kind: 'alsa', device: 'hw:CARD=sndrpihifiberry,DEV=0' };
    t.match(refusal(t, shared).options.errors, { 'backup.players.2.output': ['the same output as entry 1'] });
    const relative = documentWithEverything();
    relative.players[2]!.output = { kind: 'fifo', path: 'run/azcd.pcm' };
    t.match(refusal(t, relative).options.errors, { 'backup.players.2.output.path': [/absolute path/] });
    const quoted = documentWithEverything() as any;
    quoted.players[1].output.device = 'hw:"0"';
    t.match(refusal(t, quoted).options.errors, { 'backup.players.1.output': [/must be null or a stream output/] });
  },
);

t.test('a field of the wrong shape is named by its path', async (t) => {
  const doc = documentWithEverything() as any;
  doc.zones[1].maxVolume = 1.5;
  doc.users[1].role = 'operator';
  doc.playlists[0].tracks[0].id = 'not-a-uuid';
  delete doc.scenes;
  const err = refusal(t, doc);
  t.equal(err.kind, 'invalid');
  t.match(err.detail, /^the backup was not restored: "backup\.[a-z.0-9]+" .*; nothing was changed$/);
  t.match(err.options.errors, {
    'backup.zones.1.maxVolume': ['must be a number from 0 to 1'],
    'backup.users.1.role': ['must be Admin, Operator or Viewer'],
    'backup.playlists.0.tracks.0.id': ['must be a UUID'],
    'backup.scenes': ['is required'],
  });
});

t.test('references must resolve inside the document', async (t) => {
  const missing = id(777);
  const doc = documentWithEverything();
  doc.users[1]!.assignments.zoneIds.push(missing);
  doc.zones[1]!.playerId = missing;
  doc.scenes[0]!.zones.push({ zoneId: missing, power: false, volume: 0, muted: true, playerId: null });
  const err = refusal(t, doc);
  t.match(err.options.errors, {
    'backup.users.1.assignments.zoneIds.1': [`names no zone of the backup (${missing})`],
    'backup.zones.1.playerId': [`names no player of the backup (${missing})`],
    'backup.scenes.0.zones.1.zoneId': [`names no zone of the backup (${missing})`],
  });
});

t.test('a player feeds only zones of its own amplifier, in the zones and in scenes', async (t) => {
  const doc = documentWithEverything();
  doc.players[0]!.input = { amplifier: 'garage', driver: 'simulated', channel: 2 };
  const err = refusal(t, doc);
  t.match(err.options.errors, {
    'backup.zones.0.playerId': ['names a player of another amplifier than the zone'],
    'backup.scenes.0.zones.0.playerId': ['names a player of another amplifier than the zone'],
  });
});

t.test('ids, usernames, outputs, inputs and scene names are unique', async (t) => {
  const doc = documentWithEverything();
  doc.users.push({ ...doc.users[1]!, id: id(3), username: 'KITCHEN' });
  doc.zones[1]!.id = doc.zones[0]!.id;
  doc.zones[1]!.output = simulated(1);
  doc.inputDevices.push({ ...doc.inputDevices[0]!, id: id(31) });
  doc.scenes.push({ ...doc.scenes[0]!, id: id(51), name: 'DINNER' });
  const err = refusal(t, doc);
  t.match(err.options.errors, {
    'backup.users.2.username': ['the same username (letter case aside) as entry 1'],
    'backup.zones.1.id': [`the id ${id(20)} is used twice`],
    'backup.zones.1.output': ['the same output as entry 0'],
    'backup.inputDevices.1.input': ['the same input as entry 0'],
    'backup.scenes.1.name': [
      'the same name as people read it (letter case, width and invisible characters aside) as entry 0',
    ],
  });
});

t.test('the limits of this appliance hold for a restored document too', async (t) => {
  const err = refusal(t, documentWithEverything(), { playlists: 0, tracksPerPlaylist: 0, scenes: 0 });
  t.match(err.options.errors, {
    'backup.playlists': ['holds 1 playlists; this appliance keeps at most 0'],
    'backup.playlists.0.tracks': ['holds 1 tracks; a playlist here holds at most 0'],
    'backup.scenes': ['holds 1 scenes; this appliance keeps at most 0'],
  });
});

t.test('a document with very many problems lists twenty and counts the rest', async (t) => {
  const doc = documentWithEverything();
  doc.users[1]!.assignments.zoneIds = Array.from({ length: 50 }, (_, i) => id(1000 + i));
  const err = refusal(t, doc);
  t.equal(Object.keys(err.options.errors!).length, 21, 'twenty fields and the summary');
  t.match(err.options.errors!.backup, ['30 more problems not listed']);
});

t.test('secrets sealed under a passphrase open only with it, and not once altered', async (t) => {
  const sealed = await sealSecrets('a long passphrase', '{"users":[]}', CHEAP);
  t.match(sealed, { kdf: { name: 'scrypt', N: CHEAP.N, r: 8, p: 1 }, cipher: 'nacl-secretbox' });
  t.equal(sealedSecretsProblem(sealed), undefined);
  t.equal(await openSecrets('a long passphrase', sealed), '{"users":[]}');
  t.equal(await openSecrets('another passphrase', sealed), null, 'a wrong passphrase');
  const box = Buffer.from(sealed.box, 'base64');
  box[0]! ^= 1;
  t.equal(await openSecrets('a long passphrase', { ...sealed, box: box.toString('base64') }), null, 'an altered box');
  const again = await sealSecrets('a long passphrase', '{"users":[]}', CHEAP);
  t.not(again.kdf.salt, sealed.kdf.salt, 'a fresh salt each time');
});

t.test('a document cannot make a restore derive a key at any cost', async (t) => {
  const sealed = await sealSecrets('a long passphrase', '{}', CHEAP);
  t.match(
    sealedSecretsProblem({ ...sealed, kdf: { ...sealed.kdf, N: 2 ** 24 } }),
    /"secrets.kdf.N" must be a power of two from 16384 to 131072, got 16777216/,
  );
  t.match(sealedSecretsProblem({ ...sealed, kdf: { ...sealed.kdf, N: 20000 } }), /power of two/);
  t.match(sealedSecretsProblem({ ...sealed, kdf: { ...sealed.kdf, p: 64 } }), /more work than a restore allows/);
  t.match(sealedSecretsProblem({ ...sealed, nonce: 'AAAA' }), /"secrets.nonce" must be 24 bytes/);
});

t.test('opened secrets must be in form and name users of the document', async (t) => {
  const doc = documentWithEverything();
  const hash = goodHash(16384);
  t.same(
    parseSecrets(JSON.stringify({ users: [{ id: id(1), passwordHash: hash, apiKey: null }] }), doc).users.length,
    1,
  );
  t.throws(() => parseSecrets('not json', doc), /not in the expected form; the backup is damaged/);
  t.throws(
    () => parseSecrets(JSON.stringify({ users: [{ id: id(1), passwordHash: 'plain', apiKey: null }] }), doc),
    /not in the expected form/,
  );
  t.throws(
    () => parseSecrets(JSON.stringify({ users: [{ id: id(5), passwordHash: hash, apiKey: null }] }), doc),
    new RegExp(`name users it does not hold: ${id(5)}`),
  );
});

t.test('opened secrets carry only password hashes at the costs azcd uses, and one user per API key', async (t) => {
  const doc = documentWithEverything();
  const key = `svc_${'ab'.repeat(24)}`;
  const secrets = (users: Array<{ id: string; passwordHash: string | null; apiKey: string | null }>) =>
    JSON.stringify({ users });
  const refused = (plain: string): DomainError => refusedBy(t, () => parseSecrets(plain, doc));
  t.equal(
    parseSecrets(secrets([{ id: id(1), passwordHash: goodHash(1024), apiKey: key }]), doc).users.length,
    1,
    'the test cost is one azcd uses',
  );
  for (const [hash, why] of [
    [goodHash(3), /cost N=3; azcd uses powers of two from 1024 to 32768/],
    [goodHash(2 ** 30), /cost N=1073741824/],
    [goodHash(20000), /cost N=20000/],
    [goodHash(16384, 8, 400), /p=400; azcd uses r=8, p=1/],
    [goodHash(16384, 1024, 1), /r=1024/],
    [
      `scrypt$16384$8$1$${Buffer.alloc(4).toString('base64url')}$${Buffer.alloc(32).toString('base64url')}`,
      /16-byte salt and a 32-byte hash/,
    ],
  ] as const) {
    const err = refused(secrets([{ id: id(1), passwordHash: hash, apiKey: null }]));
    t.match(err.options.errors, { 'backup.secrets.users.0.passwordHash': [why] }, hash);
  }
  const twice = refused(
    secrets([
      { id: id(1), passwordHash: null, apiKey: key },
      { id: id(2), passwordHash: null, apiKey: key },
    ]),
  );
  t.match(twice.detail, /"backup\.secrets\.users\.1\.apiKey" the same API key as entry 0/);
  t.equal(twice.kind, 'invalid');
});

t.test(
  'names in a document follow the rules of the API: no control characters or overrides, scene names unique as read',
  async (t) => {
    const bad = documentWithEverything();
    bad.zones[0]!.name = 'Kitchen\u202Etxt';
    bad.playlists[0]!.tracks[0]!.title = 'One\nTwo';
    const err = refusal(t, bad);
    t.match(err.options.errors, {
      'backup.zones.0.name': [/bidirectional overrides/],
      'backup.playlists.0.tracks.0.title': [/control characters/],
    });
    const twins = documentWithEverything();
    twins.scenes.push({ ...twins.scenes[0]!, id: id(51), name: 'ＤＩＮＮＥＲ' });
    t.match(refusal(t, twins).options.errors, { 'backup.scenes.1.name': [/the same name as people read it/] });
  },
);
