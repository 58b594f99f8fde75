// The backup document: its schema (one per format version), the upgrade steps from older versions, and the checks
// a document must pass as a whole (ids, references, uniqueness, limits) before a restore changes anything.
import { FormatRegistry, type Static, Type as T, type TSchema } from '@sinclair/typebox';
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler';
import { RECEIVER_KIND_MODULES, RECEIVER_KIND_NAMES } from '../../../drivers/index.js';
import { mqttUrlProblem } from '../../config.js';
import { type IdDecoder, Id as IdSchema, idDecoder } from '../../ids.js';
import { nameKey, nameProblem, usernameProblem } from '../../names.js';
import { passwordHashProblem } from '../accounts/index.js';
import {
  type FieldErrors,
  invalid,
  KINDS_IN_WORDS,
  ReceiverKindSchema,
  SERVER_KINDS,
  serverProblem,
} from '../shared/index.js';

export const BACKUP_FORMAT = 'azcd-backup';
/** The version this azcd writes. A change of the document's shape adds a version and an upgrade step below. */
export const BACKUP_VERSION = 4;

const UUID = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
/** Any letter case is accepted; parseBackup and parseSecrets hand on the canonical (lower-case) form. */
const Id = IdSchema();
const Fraction = T.Number({ minimum: 0, maximum: 1, errorMessage: 'must be a number from 0 to 1' });
const Timestamp = T.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?(Z|[+-]\\d{2}:\\d{2})$',
  errorMessage: 'must be an ISO 8601 date-time such as 2026-01-31T12:00:00.000Z',
});
FormatRegistry.Set('name', (value) => nameProblem(value) === undefined);
/** A name or title: what the API accepts (daemon/names.ts), so what a restore writes is what a request could have. */
const Name = (max: number) =>
  T.String({
    minLength: 1,
    maxLength: max,
    format: 'name',
    errorMessage: `must be a string of 1 to ${max} characters, without control characters or bidirectional overrides`,
  });
const Channel = T.Integer({ minimum: 1, maximum: 999, errorMessage: 'must be a channel number from 1 to 999' });
/** Where a zone, player or input is: the amplifier's key (from its configured name), its driver, the channel. */
const Place = T.Object({
  amplifier: T.String({ pattern: '^[a-z0-9-]{1,80}$', errorMessage: 'must be an amplifier key (a-z, 0-9, -)' }),
  driver: T.String({ pattern: '^[a-z0-9-]{1,40}$', errorMessage: 'must be a driver name' }),
  channel: Channel,
});

const UserEntry = T.Object({
  id: Id,
  username: T.String({
    pattern: '^[A-Za-z0-9._-]{3,64}$',
    errorMessage: 'must be 3 to 64 characters of A-Z a-z 0-9 . _ -',
  }),
  role: T.Union([T.Literal('Admin'), T.Literal('Operator'), T.Literal('Viewer')], {
    errorMessage: 'must be Admin, Operator or Viewer',
  }),
  isEnabled: T.Boolean(),
  passwordChangeRequired: T.Boolean({
    description:
      'true while the account has the generated password of the first start, or no password after a restore without secrets',
  }),
  createdAt: Timestamp,
  assignments: T.Object({ playerIds: T.Array(Id, { maxItems: 4096 }), zoneIds: T.Array(Id, { maxItems: 4096 }) }),
});

/** A stream player's output, as the API takes it (an ALSA device, a FIFO, nowhere); null for a device wired to the input. */
const OutputTarget = T.String({
  minLength: 1,
  maxLength: 1024,
  pattern: '^[^\\u0000-\\u001f\\u007f"\\\\]+$',
  errorMessage: 'must be 1 to 1024 characters without control characters, quotes or backslashes',
});
const StreamOutputEntry = T.Union(
  [
    T.Object({ kind: T.Literal('alsa'), device: OutputTarget }),
    T.Object({ kind: T.Literal('fifo'), path: OutputTarget }),
    T.Object({ kind: T.Literal('null') }),
  ],
  { errorMessage: 'must be null, {"kind":"alsa","device":…}, {"kind":"fifo","path":…} or {"kind":"null"}' },
);

/** A receiver switched on for a player: its kind and (Squeezelite) its music server, null to find one on the LAN. */
const ReceiverEntry = T.Object(
  {
    kind: ReceiverKindSchema({ errorMessage: `must be ${KINDS_IN_WORDS}` }),
    server: T.Union([T.String({ minLength: 1, maxLength: 259 }), T.Null()], {
      errorMessage: 'must be null or a music server (host or host:port)',
    }),
  },
  { additionalProperties: false, errorMessage: 'must be an object of "kind" and "server"' },
);

/** The rooms that wake for a cast into a player (see docs/api.md, cast settings). */
const CastEntry = T.Object(
  {
    wakeZoneIds: T.Union([T.Array(Id, { maxItems: 1000 }), T.Null()], {
      errorMessage: 'must be null (the zones attached when the cast starts) or a list of zone ids',
    }),
    offAfterMinutes: T.Union([T.Integer({ minimum: 1, maximum: 720 }), T.Null()], {
      errorMessage: 'must be null (never) or a whole number of minutes from 1 to 720',
    }),
  },
  { additionalProperties: false, errorMessage: 'must be an object of "wakeZoneIds" and "offAfterMinutes"' },
);

const PlayerEntry = T.Object({
  id: Id,
  name: Name(100),
  volume: Fraction,
  input: Place,
  output: T.Union([StreamOutputEntry, T.Null()], { errorMessage: 'must be null or a stream output' }),
  createdAt: Timestamp,
  /** The receivers switched on; absent: none (and every player of a backup from before receivers). */
  receivers: T.Optional(T.Array(ReceiverEntry, { maxItems: RECEIVER_KIND_NAMES.length })),
  /** The rooms that wake for a cast; absent: the defaults (and every player of a backup from before them). */
  cast: T.Optional(CastEntry),
});

const ToneValue = T.Number({ minimum: -1, maximum: 1, errorMessage: 'must be a number from -1 to 1' });
/** A zone's tone (the controls known), as the API shows it; absent: none kept (a backup from before tone controls). */
const ToneEntry = T.Optional(
  T.Object(
    {
      bass: T.Optional(ToneValue),
      treble: T.Optional(ToneValue),
      balance: T.Optional(ToneValue),
      loudness: T.Optional(T.Boolean({ errorMessage: 'must be true or false' })),
    },
    {
      additionalProperties: false,
      errorMessage: 'must be an object of "bass", "treble", "balance" (-1 to 1) and "loudness" (true or false)',
    },
  ),
);

const ZoneEntry = T.Object({
  id: Id,
  name: Name(100),
  output: Place,
  maxVolume: Fraction,
  turnOnVolume: T.Union([Fraction, T.Null()], { errorMessage: 'must be null or a number from 0 to 1' }),
  volume: Fraction,
  muted: T.Boolean(),
  power: T.Boolean(),
  source: Channel,
  playerId: T.Union([Id, T.Null()], { errorMessage: 'must be null or a UUID' }),
  createdAt: Timestamp,
  tone: ToneEntry,
});

const InputDeviceEntry = T.Object({
  id: Id,
  name: Name(100),
  kind: Name(40),
  input: Place,
  isFavorite: T.Boolean(),
  createdAt: Timestamp,
});

const TrackEntry = T.Object({
  id: Id,
  title: Name(500),
  uri: Name(2048),
  durationMs: T.Union([T.Integer({ minimum: 0, maximum: 86_400_000 }), T.Null()], {
    errorMessage: 'must be null or milliseconds from 0 to 86400000',
  }),
});

const PlaylistEntry = T.Object({
  id: Id,
  name: Name(100),
  isFavorite: T.Boolean(),
  createdAt: Timestamp,
  tracks: T.Array(TrackEntry),
});

const SceneZoneEntry = T.Object({
  zoneId: Id,
  power: T.Boolean(),
  volume: Fraction,
  muted: T.Boolean(),
  playerId: T.Union([Id, T.Null()]),
  tone: ToneEntry,
});

const SceneEntry = T.Object({
  id: Id,
  name: Name(64),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  zones: T.Array(SceneZoneEntry, { minItems: 1, maxItems: 4096 }),
});

/** A channel an admin deleted the zone or input of, so a start does not recreate it from the amplifier. */
const DeletedChannel = T.Object({
  kind: T.Union([T.Literal('zone'), T.Literal('input')]),
  amplifier: Place.properties.amplifier,
  driver: Place.properties.driver,
  channel: Channel,
});

/** The Home Assistant bridge settings saved in the dashboard (those given at start are not the backup's). */
const BridgeSettingsEntry = T.Object(
  {
    url: T.Optional(T.String({ maxLength: 256, errorMessage: 'must be a string of at most 256 characters' })),
    username: T.Optional(
      T.String({
        minLength: 1,
        maxLength: 256,
        pattern: '^[^\\u0000-\\u001f\\u007f]+$',
        errorMessage: 'must be 1 to 256 characters without control characters',
      }),
    ),
    account: T.Optional(T.String({ maxLength: 64, errorMessage: 'must be a string of at most 64 characters' })),
  },
  {
    description:
      'the broker URL ("" turns the bridge off), broker username and bridge account saved in the dashboard; the broker password only in `secrets`',
  },
);

const B64 = T.String({
  pattern: '^[A-Za-z0-9+/]+={0,2}$',
  maxLength: 64 * 1024 * 1024,
  errorMessage: 'must be base64',
});
export const SealedSecretsSchema = T.Object({
  kdf: T.Object({
    name: T.Literal('scrypt', { errorMessage: 'must be "scrypt"' }),
    N: T.Integer({ minimum: 2 }),
    r: T.Integer({ minimum: 1 }),
    p: T.Integer({ minimum: 1 }),
    salt: B64,
  }),
  cipher: T.Literal('nacl-secretbox', { errorMessage: 'must be "nacl-secretbox"' }),
  nonce: B64,
  box: B64,
});

export const BackupSchema = T.Object(
  {
    format: T.Literal(BACKUP_FORMAT),
    version: T.Literal(BACKUP_VERSION),
    createdAt: Timestamp,
    schemaVersion: T.Integer({ minimum: 1, description: 'the database schema version of the daemon that wrote it' }),
    device: T.Object({
      udn: T.String({ pattern: `^uuid:${UUID.slice(1)}`, errorMessage: 'must be "uuid:" and a UUID' }),
      friendlyName: T.String({ maxLength: 200 }),
      azcdVersion: T.String({ maxLength: 40 }),
    }),
    users: T.Array(UserEntry, { minItems: 1 }),
    players: T.Array(PlayerEntry),
    zones: T.Array(ZoneEntry),
    inputDevices: T.Array(InputDeviceEntry),
    playlists: T.Array(PlaylistEntry),
    scenes: T.Array(SceneEntry),
    settings: T.Object({
      deletedChannels: T.Array(DeletedChannel),
      mqtt: T.Optional(BridgeSettingsEntry),
    }),
    secrets: T.Optional(SealedSecretsSchema),
  },
  {
    title: 'Backup',
    description:
      'the whole configuration of the appliance (format version 4). `secrets` (password hashes, API keys and the broker password, sealed under a passphrase) only in backups made with POST.',
  },
);

export type BackupDocument = Static<typeof BackupSchema>;
export type BackupUser = Static<typeof UserEntry>;
export type BackupZone = Static<typeof ZoneEntry>;
export type SealedSecretsEntry = Static<typeof SealedSecretsSchema>;

/** The plaintext inside `secrets.box`: per user id, its password hash and full API key (each null when it has none). */
export const SecretsPlainSchema = T.Object({
  users: T.Array(
    T.Object({
      id: Id,
      passwordHash: T.Union([
        T.String({ pattern: '^scrypt\\$[0-9]+\\$[0-9]+\\$[0-9]+\\$[A-Za-z0-9_-]+\\$[A-Za-z0-9_-]+$', maxLength: 512 }),
        T.Null(),
      ]),
      apiKey: T.Union([T.String({ pattern: '^svc_[0-9a-f]{48}$' }), T.Null()]),
    }),
  ),
  /** The Home Assistant bridge's broker password saved in the dashboard, when one is. */
  bridgePassword: T.Optional(T.String({ minLength: 1, maxLength: 4096 })),
});
export type SecretsPlain = Static<typeof SecretsPlainSchema>;

/**
 * Upgrade steps: UPGRADES[n] turns a version-n document into a version n+1 one. A restore runs every step from the
 * document's version up to BACKUP_VERSION, then checks the result against BackupSchema, so an old backup always
 * restores into a newer azcd.
 * 1 → 2: players have an `output` (stream players); every player of a version 1 backup is a device wired to its input.
 * 2 → 3: zones and scene zones may carry a `tone`; a version 2 backup has none, and its zones restore without one.
 * 3 → 4: players may carry the `receivers` switched on; a version 3 backup has none, and its players restore without.
 *   Players may also carry their `cast` settings (an optional field of version 4: a backup without it restores the
 *   defaults, so no new version).
 */
export const UPGRADES: Record<number, (doc: Record<string, unknown>) => Record<string, unknown>> = {
  1: (doc) => ({
    ...doc,
    players: Array.isArray(doc.players)
      ? doc.players.map((player: unknown) =>
          typeof player === 'object' && player !== null && !Array.isArray(player)
            ? { output: null, ...player }
            : player,
        )
      : doc.players,
  }),
  2: (doc) => doc,
  3: (doc) => doc,
};

/** The limits a document must keep (the same as the API enforces one request at a time). */
export interface DocumentLimits {
  playlists: number;
  tracksPerPlaylist: number;
  scenes: number;
}

/**
 * The most bytes one track takes in a backup azcd writes: its line `{"id":…,"title":…,"uri":…,"durationMs":…},`
 * with a 500-character title and a 2048-character URI of 3-byte characters (a name holds no control character, so
 * JSON escapes none but quotes and backslashes, 2 bytes each).
 */
const TRACK_BYTES_MAX = 64 + 36 + 3 * 500 + 3 * 2048 + 8;
/** The most bytes of a playlist apart from its tracks (a 100-character name, its id, flags and time). */
const PLAYLIST_BYTES_MAX = 160 + 3 * 100;

/**
 * The largest restore body a backup of a configuration within `limits` makes: the document apart from its tracks
 * (at most `restoreBytes`, as large as 100,000 users), every playlist with every track at its longest, and the
 * request around it. POST /api/restore takes bodies up to this, so every backup azcd writes restores.
 */
export function restoreBodyBytes(limits: DocumentLimits & { restoreBytes: number }): number {
  return (
    limits.restoreBytes + limits.playlists * (PLAYLIST_BYTES_MAX + limits.tracksPerPlaylist * TRACK_BYTES_MAX) + 4096
  );
}

/** Problems of one track entry (from a streamed restore), by field below the track; empty when it is fine. */
export function trackProblems(value: unknown): Array<[field: string, message: string]> {
  const check = checks().track;
  if (check.Check(value)) return [];
  const problems: Array<[string, string]> = [];
  for (const error of check.Errors(value)) {
    const field = error.path.replaceAll('/', '.');
    if (problems.some(([f]) => f === field)) continue;
    problems.push([
      field,
      error.value === undefined ? 'is required' : (error.schema.errorMessage ?? lower(error.message)),
    ]);
  }
  return problems;
}

/** Compiled on first use: a restore is rare, and compiling at load would cost every start-up for nothing. */
let compiled:
  | {
      document: TypeCheck<typeof BackupSchema>;
      documentIds: IdDecoder;
      secrets: TypeCheck<typeof SecretsPlainSchema>;
      secretsIds: IdDecoder;
      track: TypeCheck<typeof TrackEntry>;
    }
  | undefined;
const checks = () =>
  (compiled ??= {
    document: TypeCompiler.Compile(BackupSchema),
    documentIds: idDecoder(BackupSchema) as IdDecoder,
    secrets: TypeCompiler.Compile(SecretsPlainSchema),
    secretsIds: idDecoder(SecretsPlainSchema) as IdDecoder,
    track: TypeCompiler.Compile(TrackEntry),
  });
/** Problems listed per field before the rest are summed up: enough to fix a document, bounded for a huge one. */
const MAX_LISTED = 20;

/**
 * Checks a document from a request: its format and version first (a foreign or newer document is named as such),
 * then upgrades it, then the schema, then the whole of it (references, uniqueness, limits). Throws `invalid` with
 * the problems per field (`backup.<path>`), `streamed` (problems found in tracks as they arrived) among them;
 * returns the document, upgraded.
 */
export function parseBackup(value: unknown, limits: DocumentLimits, streamed: FieldErrors = {}): BackupDocument {
  const doc = upgrade(value);
  const check = checks().document;
  let errors: FieldErrors = {};
  if (!check.Check(doc)) {
    for (const error of check.Errors(doc)) {
      const field = `backup${error.path.replaceAll('/', '.')}`;
      if (errors[field]) continue;
      errors[field] = [error.value === undefined ? 'is required' : (error.schema.errorMessage ?? lower(error.message))];
      if (Object.keys(errors).length >= MAX_LISTED) break;
    }
  } else {
    // The restore's front door for ids: from here on they are in the form the store keeps.
    checks().documentIds(doc);
    errors = relations(doc, limits);
  }
  for (const [field, messages] of Object.entries(streamed)) {
    if (Object.keys(errors).length >= MAX_LISTED) break;
    errors[field] ??= messages;
  }
  if (Object.keys(errors).length > 0) throw failed(errors);
  return doc as BackupDocument;
}

/** The decrypted secrets, checked against the users of the document. */
export function parseSecrets(plain: string, doc: BackupDocument): SecretsPlain {
  let value: unknown;
  try {
    value = JSON.parse(plain);
  } catch {
    value = undefined;
  }
  if (!checks().secrets.Check(value))
    throw invalid('the secrets of this backup opened but are not in the expected form; the backup is damaged');
  checks().secretsIds(value);
  const users = new Set(doc.users.map((u) => u.id));
  const unknown = value.users.filter((u) => !users.has(u.id)).map((u) => u.id);
  if (unknown.length)
    throw invalid(
      `the secrets of this backup name users it does not hold: ${unknown.slice(0, 5).join(', ')}; the backup is damaged`,
    );
  // What the secrets hold is trusted as this appliance's own: hash costs within what azcd uses, one user per key.
  const errors: FieldErrors = {};
  const keys = new Map<string, number>();
  const seen = new Set<string>();
  value.users.forEach((u, i) => {
    const field = `backup.secrets.users.${i}`;
    if (seen.has(u.id)) (errors[`${field}.id`] ??= []).push('names a user twice');
    seen.add(u.id);
    const problem = u.passwordHash === null ? undefined : passwordHashProblem(u.passwordHash);
    if (problem) (errors[`${field}.passwordHash`] ??= []).push(`the password hash ${problem}`);
    if (u.apiKey === null) return;
    const first = keys.get(u.apiKey);
    if (first !== undefined)
      (errors[`${field}.apiKey`] ??= []).push(`the same API key as entry ${first}: a key belongs to one user`);
    else keys.set(u.apiKey, i);
  });
  if (Object.keys(errors).length > 0) throw failed(errors);
  return value;
}

function upgrade(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid('"backup" must be the JSON object of an azcd backup (the file GET /api/backup downloads)', {
      backup: ['must be an object'],
    });
  }
  const doc = value as Record<string, unknown>;
  if (doc.format !== BACKUP_FORMAT) {
    throw invalid(`this is not an azcd backup: "format" must be "${BACKUP_FORMAT}", got ${shown(doc.format)}`, {
      'backup.format': [`must be "${BACKUP_FORMAT}"`],
    });
  }
  const version = doc.version;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    throw invalid(`"backup.version" must be a whole number from 1, got ${shown(version)}`, {
      'backup.version': ['must be a whole number from 1'],
    });
  }
  if (version > BACKUP_VERSION) {
    throw invalid(
      `this backup has format version ${version}, newer than this azcd reads (up to ${BACKUP_VERSION}); update azcd, then restore it`,
      { 'backup.version': [`must be at most ${BACKUP_VERSION}`] },
    );
  }
  let upgraded = doc;
  for (let from = version; from < BACKUP_VERSION; from++) {
    const step = UPGRADES[from];
    if (!step) throw new Error(`no upgrade step from backup format version ${from}`);
    upgraded = { ...step(upgraded), version: from + 1 };
  }
  return upgraded;
}

/** References, uniqueness and limits over the whole document; the field errors found (empty: none). */
function relations(doc: BackupDocument, limits: DocumentLimits): FieldErrors {
  const errors: FieldErrors = {};
  let count = 0;
  const add = (field: string, message: string) => {
    count++;
    if (Object.keys(errors).length < MAX_LISTED) (errors[field] ??= []).push(message);
  };
  const ids = new Set<string>();
  const unique = (field: string, id: string) => {
    if (ids.has(id)) add(field, `the id ${id} is used twice`);
    ids.add(id);
  };
  const distinct = <V>(items: readonly V[], keyOf: (item: V) => string, field: (i: number) => string, what: string) => {
    const seen = new Map<string, number>();
    items.forEach((item, i) => {
      const key = keyOf(item);
      const first = seen.get(key);
      if (first !== undefined) add(field(i), `${what} as entry ${first}`);
      else seen.set(key, i);
    });
  };
  const place = (p: { amplifier: string; driver: string; channel: number }) =>
    `${p.amplifier}\u0000${p.driver}\u0000${p.channel}`;
  const amplifierOf = (p: { amplifier: string; driver: string }) => `${p.amplifier}\u0000${p.driver}`;

  doc.users.forEach((u, i) => unique(`backup.users.${i}.id`, u.id));
  doc.players.forEach((p, i) => unique(`backup.players.${i}.id`, p.id));
  doc.zones.forEach((z, i) => unique(`backup.zones.${i}.id`, z.id));
  doc.inputDevices.forEach((d, i) => unique(`backup.inputDevices.${i}.id`, d.id));
  doc.playlists.forEach((p, i) => {
    unique(`backup.playlists.${i}.id`, p.id);
    p.tracks.forEach((t, j) => unique(`backup.playlists.${i}.tracks.${j}.id`, t.id));
  });
  doc.scenes.forEach((s, i) => unique(`backup.scenes.${i}.id`, s.id));

  distinct(
    doc.users,
    (u) => u.username.toLowerCase(),
    (i) => `backup.users.${i}.username`,
    'the same username (letter case aside)',
  );
  distinct(
    doc.players,
    (p) => place(p.input),
    (i) => `backup.players.${i}.input`,
    'the same input',
  );
  distinct(
    doc.zones,
    (z) => place(z.output),
    (i) => `backup.zones.${i}.output`,
    'the same output',
  );
  distinct(
    doc.inputDevices,
    (d) => place(d.input),
    (i) => `backup.inputDevices.${i}.input`,
    'the same input',
  );
  // A device or FIFO carries one player's audio (players without one, or playing nowhere, are each their own).
  const outputKey = (p: BackupDocument['players'][number]) =>
    p.output?.kind === 'alsa'
      ? `alsa\u0000${p.output.device}`
      : p.output?.kind === 'fifo'
        ? `fifo\u0000${p.output.path}`
        : `none\u0000${p.id}`;
  distinct(doc.players, outputKey, (i) => `backup.players.${i}.output`, 'the same output');
  doc.players.forEach((p, i) => {
    if (p.output?.kind === 'fifo' && (!p.output.path.startsWith('/') || p.output.path.split('/').includes('..'))) {
      add(`backup.players.${i}.output.path`, 'must be an absolute path without ".."');
    }
  });
  doc.players.forEach((p, i) => {
    const kinds = new Set<string>();
    p.receivers?.forEach((r, j) => {
      const field = `backup.players.${i}.receivers.${j}`;
      if (kinds.has(r.kind)) add(`${field}.kind`, 'names a receiver twice for one player');
      kinds.add(r.kind);
      if (r.server === null) return;
      if (!RECEIVER_KIND_MODULES[r.kind].takesServer)
        add(`${field}.server`, `is for the ${SERVER_KINDS} receiver only`);
      else {
        const problem = serverProblem(r.server);
        if (problem) add(`${field}.server`, problem);
      }
    });
  });
  const bridge = doc.settings.mqtt;
  const urlProblem = bridge?.url ? mqttUrlProblem(bridge.url) : undefined;
  if (urlProblem) add('backup.settings.mqtt.url', urlProblem);
  const accountProblem = bridge?.account === undefined ? undefined : usernameProblem(bridge.account);
  if (accountProblem) add('backup.settings.mqtt.account', accountProblem);
  distinct(
    doc.scenes,
    (s) => nameKey(s.name),
    (i) => `backup.scenes.${i}.name`,
    'the same name as people read it (letter case, width and invisible characters aside)',
  );

  const players = new Map(doc.players.map((p) => [p.id, p]));
  const zones = new Map(doc.zones.map((z) => [z.id, z]));
  const sameAmplifier = (zone: BackupZone, playerId: string) =>
    amplifierOf(zone.output) === amplifierOf(players.get(playerId)!.input);

  doc.users.forEach((u, i) => {
    u.assignments.playerIds.forEach((id, j) => {
      if (!players.has(id))
        add(`backup.users.${i}.assignments.playerIds.${j}`, `names no player of the backup (${id})`);
    });
    u.assignments.zoneIds.forEach((id, j) => {
      if (!zones.has(id)) add(`backup.users.${i}.assignments.zoneIds.${j}`, `names no zone of the backup (${id})`);
    });
  });
  doc.players.forEach((p, i) => {
    const seen = new Set<string>();
    p.cast?.wakeZoneIds?.forEach((id, j) => {
      const field = `backup.players.${i}.cast.wakeZoneIds.${j}`;
      const zone = zones.get(id);
      if (!zone) add(field, `names no zone of the backup (${id})`);
      else if (!sameAmplifier(zone, p.id)) add(field, 'names a zone of another amplifier than the player');
      if (seen.has(id)) add(field, 'names a zone twice');
      seen.add(id);
    });
  });
  doc.zones.forEach((z, i) => {
    if (z.playerId === null) return;
    if (!players.has(z.playerId)) add(`backup.zones.${i}.playerId`, `names no player of the backup (${z.playerId})`);
    else if (!sameAmplifier(z, z.playerId))
      add(`backup.zones.${i}.playerId`, 'names a player of another amplifier than the zone');
  });
  doc.scenes.forEach((s, i) => {
    const seen = new Set<string>();
    s.zones.forEach((entry, j) => {
      const field = `backup.scenes.${i}.zones.${j}`;
      const zone = zones.get(entry.zoneId);
      if (!zone) add(`${field}.zoneId`, `names no zone of the backup (${entry.zoneId})`);
      if (seen.has(entry.zoneId)) add(`${field}.zoneId`, 'names a zone twice in one scene');
      seen.add(entry.zoneId);
      if (entry.playerId === null) return;
      if (!players.has(entry.playerId)) add(`${field}.playerId`, `names no player of the backup (${entry.playerId})`);
      else if (zone && !sameAmplifier(zone, entry.playerId))
        add(`${field}.playerId`, 'names a player of another amplifier than the zone');
    });
  });

  if (doc.playlists.length > limits.playlists)
    add(
      'backup.playlists',
      `holds ${doc.playlists.length} playlists; this appliance keeps at most ${limits.playlists}`,
    );
  doc.playlists.forEach((p, i) => {
    if (p.tracks.length > limits.tracksPerPlaylist) {
      add(
        `backup.playlists.${i}.tracks`,
        `holds ${p.tracks.length} tracks; a playlist here holds at most ${limits.tracksPerPlaylist}`,
      );
    }
  });
  if (doc.scenes.length > limits.scenes)
    add('backup.scenes', `holds ${doc.scenes.length} scenes; this appliance keeps at most ${limits.scenes}`);
  if (count > MAX_LISTED)
    (errors.backup ??= []).push(`${count - Object.values(errors).flat().length} more problems not listed`);
  return errors;
}

/** The 400 of a backup refused for these problems (the first named in the detail); nothing was changed. */
export function failed(errors: FieldErrors): Error {
  const entries = Object.entries(errors);
  const [field, messages] = entries[0]!;
  const more = entries.length > 1 ? ` (and ${entries.length - 1} more fields, listed in "errors")` : '';
  return invalid(`the backup was not restored: "${field}" ${messages[0]}${more}; nothing was changed`, errors);
}

function lower(message: string): string {
  return message.charAt(0).toLowerCase() + message.slice(1);
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/** For the OpenAPI document: the schema of what GET /api/backup returns. */
export const BackupDocumentSchema: TSchema = BackupSchema;
