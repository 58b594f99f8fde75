// Backup and restore of the whole configuration (admin only): one versioned JSON document out, the same document
// checked as a whole and applied in one transaction in, with a copy of the database kept first.
import path from 'node:path';
import type { BackupRepo, ConfigurationRows } from '../../store/backup-repo.js';
import type { Store } from '../../store/db.js';
import type { UserRow } from '../../store/users-repo.js';
import { type DeviceSecrets, generateApiKey, hasPassword, reconcileInitialAdminFile } from '../accounts/index.js';
import type { Amplifiers } from '../audio/index.js';
import type { Caller, EventBus, FieldErrors } from '../shared/index.js';
import { conflict, inSlices, invalid, requireAdmin } from '../shared/index.js';
import { openSecrets, sealedSecretsProblem, sealSecrets } from './backup-crypto.js';
import {
  type BackupDocument,
  type DocumentLimits,
  parseBackup,
  parseSecrets,
  type SecretsPlain,
} from './backup-format.js';
import { configurationOf, documentOf, savedBridgePassword } from './backup-rows.js';
import { type DocumentStream, streamDocument } from './backup-stream.js';
import { type AccountsAfterRestore, accountsAfterRestore } from './restore-accounts.js';
import { placeOutputs } from './restore-outputs.js';
import { RestoreUpload, type UploadedBackup } from './restore-upload.js';

/** Stored as the password hash of a user restored without secrets: no password matches it (verifyPassword). */
const NO_PASSWORD = '!restored-without-password';

export interface BackupOptions {
  /** The document's limits, and how large it may be apart from its tracks (restoreBytes). */
  limits: DocumentLimits & { restoreBytes: number };
  friendlyName: string;
  version: string;
  /**
   * Told `configuration.replaced` once a restore is committed: each service that keeps something of the rows reloads
   * it (every zone's stored state goes to its amplifier), and every session and event stream ends.
   */
  bus: EventBus;
  /** <stateDir>/initial-admin.txt: kept after a restore only for the credentials it holds that still work. */
  initialAdminFile: string;
}

/** What a restore did, for the admin who ran it. */
export interface RestoreSummary {
  restored: {
    users: number;
    players: number;
    zones: number;
    inputDevices: number;
    playlists: number;
    tracks: number;
    scenes: number;
  };
  /** Whether passwords and API keys came from the backup (it was made, and restored, with a passphrase). */
  secretsRestored: boolean;
  /** Users that did not exist here and came without secrets: no password (an admin sets one) and a new API key. */
  usersWithoutPassword: string[];
  /** Rows of amplifiers not configured here: kept, listed as unavailable until such an amplifier is configured again. */
  unconfiguredAmplifiers: Array<{
    amplifier: string;
    driver: string;
    zones: number;
    players: number;
    inputDevices: number;
  }>;
  /** The copy of the database as it was before, under the state directory. */
  databaseCopy: string;
  backupCreatedAt: string;
  /** Which credentials apply now, for the admin who restored (the backup's accounts replaced this appliance's). */
  accounts: AccountsAfterRestore;
}

export interface RestoreInput {
  backup: unknown;
  passphrase?: string;
}

/** A restore under way: its body is written to it in pieces, then finish checks and applies it. */
export interface RestoreSession {
  write(piece: Buffer): void;
  abort(): void;
  /** `checkBody` checks the request around the document (the passphrase) and returns it. */
  finish(checkBody: (body: unknown) => RestoreInput, recheck: () => Caller): Promise<RestoreSummary>;
}

/** Rows deleted or copied per step of a restore's transaction (a few milliseconds each). */
const ROWS_PER_STEP = 1000;
/** Rows copied between syncs of the database file off the event loop (some megabytes). */
const ROWS_PER_SETTLE = 20_000;

export class BackupService {
  private restoring = false;
  private writing = false;
  private openedRepo: BackupRepo | undefined;

  /**
   * `openRepo` makes the repository (its ~30 statements) with the first backup or restore: prepared SQLite statements
   * cost ~6 KB each, and an appliance idles without either (ARCHITECTURE.md, "Memory").
   */
  constructor(
    private readonly store: Store,
    private readonly openRepo: () => BackupRepo,
    private readonly secrets: DeviceSecrets,
    private readonly amplifiers: Amplifiers,
    private readonly options: BackupOptions,
    private readonly now: () => number = Date.now,
  ) {}

  private get repo(): BackupRepo {
    this.openedRepo ??= this.openRepo();
    return this.openedRepo;
  }

  /** The configuration without secrets (nothing in it lets anyone sign in), written as it is sent. */
  export(caller: Caller): DocumentStream {
    requireAdmin(caller, 'downloading a backup');
    return this.stream(this.document(this.repo.readHead()));
  }

  /**
   * The configuration plus password hashes and API keys sealed under the passphrase. The key is derived off the event
   * loop; `recheck` re-resolves the caller after that (ApiRequest.revalidate), so no one demoted meanwhile gets it.
   */
  async exportWithSecrets(caller: Caller, passphrase: string, recheck: () => Caller): Promise<DocumentStream> {
    requireAdmin(caller, 'downloading a backup');
    const rows = this.repo.readHead();
    const sealedBridge = savedBridgePassword(rows.meta);
    const bridgePassword =
      sealedBridge &&
      this.secrets.open({
        nonce: Buffer.from(sealedBridge.nonce, 'base64'),
        box: Buffer.from(sealedBridge.box, 'base64'),
      });
    const plain: SecretsPlain = {
      // A user restored earlier without secrets, or made without a password, has none to carry (null), only its key.
      users: rows.users.map((row) => ({
        id: row.id,
        passwordHash: hasPassword(row.password_hash) ? row.password_hash : null,
        apiKey: this.openKey(row),
      })),
      ...(bridgePassword ? { bridgePassword } : {}),
    };
    const sealed = await sealSecrets(passphrase, JSON.stringify(plain));
    requireAdmin(recheck(), 'downloading a backup');
    return this.stream({ ...this.document(rows), secrets: sealed });
  }

  private stream(doc: BackupDocument): DocumentStream {
    return streamDocument(doc, (playlistId) => this.repo.tracksOf(playlistId));
  }

  /** Whether a restore is writing the configuration now: the API answers 503 meanwhile (reads would see half of it). */
  get applying(): boolean {
    return this.writing;
  }

  /**
   * Starts a restore whose body arrives in pieces (RestoreSession.write). Restores run one at a time. Nothing
   * changes and no file is written until the whole document was checked (finish).
   */
  beginRestore(caller: Caller): RestoreSession {
    requireAdmin(caller, 'restoring a backup');
    if (this.restoring) throw conflict('a restore is already under way; wait for it to finish');
    this.restoring = true;
    const upload = new RestoreUpload(this.store, this.options.limits, () => (this.restoring = false));
    return {
      write: (piece) => upload.write(piece),
      abort: () => upload.abort(),
      finish: (checkBody, recheck) => this.complete(upload, checkBody, recheck),
    };
  }

  /**
   * Checks the whole document (and opens its secrets) before anything changes, keeps a copy of the database, then
   * replaces the configuration in one transaction written in slices.
   */
  private async complete(
    upload: RestoreUpload,
    checkBody: (body: unknown) => RestoreInput,
    recheck: () => Caller,
  ): Promise<RestoreSummary> {
    const uploaded = upload.read();
    try {
      const input = checkBody(uploaded.body);
      // The state folder is the database's (app.ts opens it there): no FIFO output may be in it.
      const doc = placeOutputs(
        parseBackup(input.backup, this.options.limits, uploaded.trackErrors),
        path.dirname(this.store.file),
      );
      this.checkAmplifiers(doc);
      const secrets = await this.openSecrets(doc, input.passphrase);
      requireAdmin(recheck(), 'restoring a backup');
      // Refused before the copy is made; checked again below against the state right before the commit.
      this.plan(doc, secrets, uploaded);
      const copy = await this.store.backupBeforeRestore();
      const caller = recheck();
      requireAdmin(caller, 'restoring a backup');
      const before = this.repo.keyMaterial().get(caller.userId);
      const planned = this.plan(doc, secrets, uploaded);
      await this.apply(planned.rows, doc, uploaded);
      this.options.bus.publish({ type: 'configuration.replaced', payload: {} });
      const users = planned.rows.users;
      const admins = users
        .filter((u) => u.role === 'Admin' && u.is_enabled === 1 && (hasPassword(u.password_hash) || u.key_box))
        .map((u) => u.username);
      const accounts = {
        ...accountsAfterRestore(caller, before, users, admins, doc.createdAt),
        initialAdminFile: await reconcileInitialAdminFile(
          this.options.initialAdminFile,
          users,
          this.secrets,
          'a restore replaced the accounts',
          Date.now(),
        ),
      };
      return {
        restored: {
          users: doc.users.length,
          players: doc.players.length,
          zones: doc.zones.length,
          inputDevices: doc.inputDevices.length,
          playlists: doc.playlists.length,
          tracks: uploaded.tracks,
          scenes: doc.scenes.length,
        },
        secretsRestored: secrets !== undefined,
        usersWithoutPassword: planned.withoutPassword,
        unconfiguredAmplifiers: this.unconfigured(doc),
        databaseCopy: path.join(path.basename(path.dirname(copy)), path.basename(copy)),
        backupCreatedAt: doc.createdAt,
        accounts,
      };
    } finally {
      uploaded.staging.close();
      this.restoring = false;
    }
  }

  /**
   * One transaction, written in slices with the event loop free between them (the API answers 503 meanwhile): the
   * old tracks go, the rest of the configuration is replaced, the staged tracks are copied in.
   */
  private async apply(rows: ConfigurationRows, doc: BackupDocument, uploaded: UploadedBackup): Promise<void> {
    this.store.beginLong();
    this.writing = true;
    try {
      await inSlices(() => this.repo.clearTracksSlice(ROWS_PER_STEP) > 0);
      this.repo.replaceHead(rows);
      uploaded.staging.setPlaylists(doc.playlists.map((p) => p.id));
      let copied = 0;
      while (copied < uploaded.tracks) {
        const until = Math.min(uploaded.tracks, copied + ROWS_PER_SETTLE);
        await inSlices(() => {
          const to = Math.min(until, copied + ROWS_PER_STEP);
          uploaded.staging.copy(copied, to);
          copied = to;
          return copied < until;
        });
        await this.store.settleLong();
      }
      await this.store.commitLong();
    } catch (err) {
      await this.store.rollbackLong();
      throw err;
    } finally {
      this.writing = false;
    }
  }

  // ---- export ---------------------------------------------------------------------------------

  private document(rows: ConfigurationRows): BackupDocument {
    return documentOf(rows, {
      createdAt: new Date(this.now()).toISOString(),
      schemaVersion: this.store.schemaVersion,
      friendlyName: this.options.friendlyName,
      azcdVersion: this.options.version,
    });
  }

  private openKey(row: UserRow): string | null {
    if (!row.key_box || !row.key_nonce) return null;
    return this.secrets.open({ box: row.key_box, nonce: row.key_nonce });
  }

  // ---- restore --------------------------------------------------------------------------------

  /**
   * Zones, players and inputs of an amplifier configured here must be on channels it has. Those of any other
   * amplifier are restored as unavailable, the rule for an amplifier taken out of the configuration.
   */
  private checkAmplifiers(doc: BackupDocument): void {
    const errors: FieldErrors = {};
    const check = (
      field: string,
      place: { amplifier: string; driver: string; channel: number },
      kind: 'zones' | 'inputs',
    ) => {
      const amplifier = this.amplifiers.find(place.amplifier, place.driver);
      if (!amplifier) return;
      const channels = amplifier.driver.describe()[kind].map((c) => c.channel);
      if (!channels.includes(place.channel)) {
        errors[field] = [
          `channel ${place.channel} is not a ${kind === 'zones' ? 'zone output' : 'source input'} of amplifier "${amplifier.name}" here (it has ${channels.join(', ')})`,
        ];
      }
    };
    doc.zones.forEach((z, i) => {
      check(`backup.zones.${i}.output`, z.output, 'zones');
      check(`backup.zones.${i}.source`, { ...z.output, channel: z.source }, 'inputs');
    });
    doc.players.forEach((p, i) => check(`backup.players.${i}.input`, p.input, 'inputs'));
    doc.inputDevices.forEach((d, i) => check(`backup.inputDevices.${i}.input`, d.input, 'inputs'));
    const fields = Object.keys(errors);
    if (fields.length > 0) {
      throw invalid(
        `the backup was not restored: "${fields[0]}" ${errors[fields[0]!]![0]}${fields.length > 1 ? ` (and ${fields.length - 1} more, listed in "errors")` : ''}; nothing was changed`,
        errors,
      );
    }
  }

  private async openSecrets(doc: BackupDocument, passphrase: string | undefined): Promise<SecretsPlain | undefined> {
    if (!doc.secrets) {
      if (passphrase !== undefined) {
        throw invalid(
          'this backup carries no secrets (it was made without a passphrase); send it without "passphrase"; nothing was changed',
          {
            passphrase: ['the backup has no secrets to open'],
          },
        );
      }
      return undefined;
    }
    // Without the passphrase the sealed secrets are left aside: the configuration restores as from a plain backup.
    if (passphrase === undefined) return undefined;
    const problem = sealedSecretsProblem(doc.secrets);
    if (problem)
      throw invalid(`the backup was not restored: ${problem}; nothing was changed`, { 'backup.secrets': [problem] });
    const plain = await openSecrets(passphrase, doc.secrets);
    if (plain === null) {
      throw invalid(
        'the passphrase does not open the secrets of this backup (or they were altered); nothing was changed',
        {
          passphrase: ['does not open the secrets of this backup'],
        },
      );
    }
    return parseSecrets(plain, doc);
  }

  /**
   * The rows to write, from the document and, for users without secrets, the key material stored now: a user that
   * exists here (same id) keeps its password and key; a new one gets no password and a new key. Refuses (409) a
   * result in which no enabled Admin could sign in.
   */
  private plan(
    doc: BackupDocument,
    secrets: SecretsPlain | undefined,
    uploaded: UploadedBackup,
  ): { rows: ConfigurationRows; withoutPassword: string[] } {
    const fromBackup = new Map((secrets?.users ?? []).map((u) => [u.id, u]));
    const stored = this.repo.keyMaterial();
    const withoutPassword: string[] = [];
    /** Users someone can sign in as after the restore: with a password, or a key that is known (not a new one). */
    const usable = new Set<string>();
    const users: UserRow[] = doc.users.map((u) => {
      const id = u.id;
      const base = {
        id,
        username: u.username,
        role: u.role,
        is_enabled: u.isEnabled ? 1 : 0,
        created_at: u.createdAt,
        password_change_required: u.passwordChangeRequired ? 1 : 0,
      };
      const secret = fromBackup.get(id);
      if (secret) {
        const key = secret.apiKey === null ? null : this.secrets.sealKey(secret.apiKey);
        if (secret.passwordHash !== null || key) usable.add(id);
        return {
          ...base,
          password_hash: secret.passwordHash ?? NO_PASSWORD,
          password_change_required: secret.passwordHash === null ? 1 : base.password_change_required,
          key_digest: key?.digest ?? null,
          key_nonce: key?.nonce ?? null,
          key_box: key?.box ?? null,
        };
      }
      const current = stored.get(id);
      if (current) {
        if (hasPassword(current.password_hash) || current.key_box) usable.add(id);
        return { ...base, ...current };
      }
      withoutPassword.push(u.username);
      const key = this.secrets.sealKey(generateApiKey());
      return {
        ...base,
        password_hash: NO_PASSWORD,
        password_change_required: 1,
        key_digest: key.digest,
        key_nonce: key.nonce,
        key_box: key.box,
      };
    });
    // A key from the backup that a user kept from this appliance also holds would make the insert fail late.
    const owners = new Map<string, string>();
    users.forEach((u, i) => {
      if (!u.key_digest) return;
      const digest = Buffer.from(u.key_digest).toString('hex');
      const owner = owners.get(digest);
      if (owner !== undefined) {
        throw invalid(
          `the backup was not restored: users "${owner}" and "${u.username}" would have the same API key; nothing was changed`,
          {
            [`backup.users.${i}`]: [`would have the API key of user "${owner}"`],
          },
        );
      }
      owners.set(digest, u.username);
    });
    const admins = users.filter((u) => u.role === 'Admin' && u.is_enabled === 1);
    if (admins.length === 0) {
      throw conflict(
        'the backup has no enabled Admin: restoring it would lock everyone out of this appliance; nothing was changed',
      );
    }
    if (!admins.some((u) => usable.has(u.id))) {
      throw conflict(
        `no enabled Admin of the backup (${admins.map((u) => u.username).join(', ')}) could sign in here: no passwords or keys are restored ` +
          '(a backup without secrets, or one restored without its passphrase) and none of them exists on this appliance; ' +
          'make the backup with a passphrase (POST /api/backup) and restore it with that passphrase; nothing was changed',
      );
    }
    const bridgePassword =
      secrets?.bridgePassword === undefined ? undefined : this.secrets.seal(secrets.bridgePassword);
    const sealedBridge = bridgePassword && {
      nonce: Buffer.from(bridgePassword.nonce).toString('base64'),
      box: Buffer.from(bridgePassword.box).toString('base64'),
    };
    const rows = { ...configurationOf(doc, this.repo.meta(), sealedBridge), users };
    // The tracks are staged, not in the document: each playlist's size comes from what was staged for it.
    rows.playlists.forEach((p, i) => {
      const staged = uploaded.playlists.get(i);
      p.track_count = staged?.tracks ?? 0;
      p.duration_ms = staged?.durationMs ?? 0;
    });
    return { rows, withoutPassword };
  }

  /** Amplifiers the document has rows of that are not configured here, with how many rows each. */
  private unconfigured(doc: BackupDocument): RestoreSummary['unconfiguredAmplifiers'] {
    const found = new Map<string, RestoreSummary['unconfiguredAmplifiers'][number]>();
    const count = (place: { amplifier: string; driver: string }, what: 'zones' | 'players' | 'inputDevices') => {
      if (this.amplifiers.find(place.amplifier, place.driver)) return;
      const key = `${place.amplifier}\u0000${place.driver}`;
      let entry = found.get(key);
      if (!entry)
        found.set(
          key,
          (entry = { amplifier: place.amplifier, driver: place.driver, zones: 0, players: 0, inputDevices: 0 }),
        );
      entry[what]++;
    };
    for (const z of doc.zones) count(z.output, 'zones');
    for (const p of doc.players) count(p.input, 'players');
    for (const d of doc.inputDevices) count(d.input, 'inputDevices');
    return [...found.values()];
  }
}
