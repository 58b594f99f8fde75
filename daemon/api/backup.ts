// Backup download (with or without sealed secrets) and restore (admin only); the checks live in domain/backup.ts.
import { T } from '../http/schema.js';
import { route, ok, type ApiResult, type Route } from '../http/route.js';
import type { BackupService } from '../domain/backup.js';
import type { BackupDocument } from '../domain/backup-format.js';
import { BackupSchema } from '../domain/backup-format.js';

/** writeOnly: never echoed back, not even in a validation message. */
const Passphrase = T.String({
  minLength: 8,
  maxLength: 1024,
  writeOnly: true,
  description: '8 to 1024 characters; the key that seals (and later opens) the password hashes and API keys',
  errorMessage: 'must be a string of 8 to 1024 characters',
});

const RestoreSummarySchema = T.Object(
  {
    restored: T.Object({
      users: T.Integer(),
      players: T.Integer(),
      zones: T.Integer(),
      inputDevices: T.Integer(),
      playlists: T.Integer(),
      tracks: T.Integer(),
      scenes: T.Integer(),
    }),
    secretsRestored: T.Boolean({ description: 'passwords and API keys came from the backup (made and restored with a passphrase)' }),
    usersWithoutPassword: T.Array(T.String(), {
      description: 'users new to this appliance restored without secrets: no password until an admin sets one, and a new API key',
    }),
    unconfiguredAmplifiers: T.Array(
      T.Object({ amplifier: T.String(), driver: T.String(), zones: T.Integer(), players: T.Integer(), inputDevices: T.Integer() }),
      { description: 'rows of amplifiers not configured here: kept and listed as unavailable until such an amplifier is configured' },
    ),
    databaseCopy: T.String({ description: 'the copy of the database as it was before, relative to the state directory' }),
    backupCreatedAt: T.String({ format: 'date-time' }),
  },
  { title: 'RestoreSummary' },
);

/** The document as a download: a file name with the day it was made. */
function download(doc: BackupDocument): ApiResult {
  return {
    status: 200,
    raw: JSON.stringify(doc, null, 1),
    contentType: 'application/json',
    headers: { 'Content-Disposition': `attachment; filename="azcd-backup-${doc.createdAt.slice(0, 10)}.json"` },
  };
}

export function backupRoutes(backups: BackupService, restoreBytes: number): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/backup',
      access: 'admin',
      sensitive: true,
      summary: 'Download the whole configuration as one JSON document, without passwords or API keys',
      description:
        'Users with roles and assignments, players, zones with names and limits, input devices, playlists with tracks, scenes and settings. ' +
        'Sessions, sleep timers and the undo slot are not included. Restore it with POST /api/restore.',
      tags: ['backup'],
      responses: { 200: { description: 'the backup, offered as an attachment', schema: BackupSchema } },
      handle: (req) => download(backups.export(req.caller)),
    }),
    route({
      method: 'POST',
      path: '/api/backup',
      access: 'admin',
      sensitive: true,
      summary: 'Download the configuration with password hashes and API keys sealed under a passphrase',
      description:
        'The same document as GET plus `secrets`: scrypt (parameters and salt in the document) derives a key from the passphrase, ' +
        'NaCl secretbox seals the secrets with it. Without the passphrase they cannot be read; keep it apart from the file.',
      tags: ['backup'],
      body: T.Object({ passphrase: Passphrase }),
      responses: { 200: { description: 'the backup with `secrets`, offered as an attachment', schema: BackupSchema } },
      handle: async (req) => download(await backups.exportWithSecrets(req.caller, req.body.passphrase, () => req.revalidate())),
    }),
    route({
      method: 'POST',
      path: '/api/restore',
      access: 'admin',
      sensitive: true,
      maxBodyBytes: restoreBytes,
      summary: 'Replace the whole configuration with a backup; every session and event stream ends',
      description:
        'The whole document is checked first (format, version, ids, references, limits; a passphrase that opens its secrets); ' +
        'nothing changes when any of it is wrong. Then the database is copied into <stateDir>/backups/ (the most recent copies kept), ' +
        'the configuration replaced in one transaction, the amplifiers set to the restored state (zones powered off), and every ' +
        'session and event stream ended. Without secrets (or without the passphrase that opens them), users that exist here ' +
        'keep their password and API key; new ones get no password and a new key. ' +
        `The body may be up to ${restoreBytes} bytes (limits.restoreBytes).`,
      tags: ['backup'],
      body: T.Object({
        backup: T.Any({ description: 'a document from GET or POST /api/backup (the Backup schema); older format versions are upgraded' }),
        passphrase: T.Optional(Passphrase),
      }),
      responses: {
        200: { description: 'restored; sign in again', schema: RestoreSummarySchema },
        400: { description: 'not an azcd backup, a newer format version, an invalid or inconsistent document, or a wrong passphrase; nothing changed' },
        409: { description: 'the restore would leave no enabled Admin who can sign in, or another restore is under way; nothing changed' },
        413: { description: 'the body is larger than limits.restoreBytes' },
      },
      handle: async (req) => ok(await backups.restore(req.caller, { backup: req.body.backup, passphrase: req.body.passphrase }, () => req.revalidate())),
    }),
  ];
}
