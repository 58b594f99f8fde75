// Backup download (with or without sealed secrets) and restore (admin only); the checks live in domain/backup/.

import type { BackupService, DocumentStream, RestoreSession } from '../domain/backup/index.js';
import { BackupSchema } from '../domain/backup/index.js';
import { type ApiResult, DOWNLOAD_HEADERS, ok, type Route, route } from '../http/route.js';
import { T, Validator } from '../http/schema.js';

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
    secretsRestored: T.Boolean({
      description: 'passwords and API keys came from the backup (made and restored with a passphrase)',
    }),
    usersWithoutPassword: T.Array(T.String(), {
      description:
        'users new to this appliance restored without secrets: no password until an admin sets one, and a new API key',
    }),
    unconfiguredAmplifiers: T.Array(
      T.Object({
        amplifier: T.String(),
        driver: T.String(),
        zones: T.Integer(),
        players: T.Integer(),
        inputDevices: T.Integer(),
      }),
      {
        description:
          'rows of amplifiers not configured here: kept and listed as unavailable until such an amplifier is configured',
      },
    ),
    databaseCopy: T.String({
      description: 'the copy of the database as it was before, relative to the state directory',
    }),
    backupCreatedAt: T.String({ format: 'date-time' }),
    accounts: T.Object(
      {
        message: T.String({ description: 'in plain words: whose accounts apply now and how to sign in again' }),
        yourAccount: T.Union(
          [
            T.Object({
              username: T.String(),
              password: T.Union(['unchanged', 'backup', 'none'].map((s) => T.Literal(s))),
              apiKey: T.Union(['unchanged', 'backup', 'none'].map((s) => T.Literal(s))),
            }),
            T.Null(),
          ],
          {
            description:
              'the account of the admin who restored, as the backup left it; null when the backup does not hold it',
          },
        ),
        admins: T.Array(T.String(), { description: 'enabled Admins of the restored configuration who can sign in' }),
        initialAdminFile: T.Union(
          ['kept', 'rewritten', 'removed', 'absent'].map((s) => T.Literal(s)),
          {
            description:
              '<stateDir>/initial-admin.txt after the restore: kept only for the credentials it holds that still work',
          },
        ),
      },
      { description: "the backup's accounts replaced this appliance's: which credentials apply now" },
    ),
  },
  { title: 'RestoreSummary' },
);

/**
 * The document as a download, sent as it is written. Names differ by kind and carry the time to the second, so
 * `curl -OJ` of a plain and a sealed backup (which refuses to overwrite a file) never collide.
 */
function download(doc: DocumentStream, sealed: boolean, now = new Date()): ApiResult {
  const stamp = now.toISOString().slice(0, 19).replace(/:/g, '').replace('T', '-');
  return {
    status: 200,
    stream: doc,
    contentType: 'application/json',
    headers: {
      'Content-Disposition': `attachment; filename="azcd-backup-${sealed ? 'sealed' : 'plain'}-${stamp}.json"`,
    },
  };
}

const RestoreBody = T.Object({
  backup: T.Any({
    description: 'a document from GET or POST /api/backup (the Backup schema); older format versions are upgraded',
  }),
  passphrase: T.Optional(Passphrase),
});
/** The request around the document, checked once it is read (the body streams past the usual validation). */
const restoreBody = new Validator(RestoreBody);

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
      responses: {
        200: { description: 'the backup, offered as an attachment', schema: BackupSchema, headers: DOWNLOAD_HEADERS },
      },
      handle: (req) => download(backups.export(req.caller), false),
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
      responses: {
        200: {
          description: 'the backup with `secrets`, offered as an attachment',
          schema: BackupSchema,
          headers: DOWNLOAD_HEADERS,
        },
      },
      handle: async (req) =>
        download(await backups.exportWithSecrets(req.caller, req.body.passphrase, () => req.revalidate()), true),
    }),
    route({
      method: 'POST',
      path: '/api/restore',
      access: 'admin',
      sensitive: true,
      maxBodyBytes: restoreBytes,
      summary: 'Replace the whole configuration with a backup; every session and event stream ends',
      description:
        'The body is read as it arrives (tracks are checked and set aside one by one), then the whole document is checked ' +
        '(format, version, ids, references, limits; a passphrase that opens its secrets); nothing changes and no file is written ' +
        'when any of it is wrong. Then the database is copied into <stateDir>/backups/ (the most recent copies kept), the ' +
        'configuration replaced in one transaction written in slices (other requests get 503 meanwhile), the amplifiers set to ' +
        'the restored state (zones powered off), and every session and event stream ended. Without secrets (or without the ' +
        'passphrase that opens them), users that exist here keep their password and API key; new ones get no password and a ' +
        `new key. The body may be up to ${restoreBytes} bytes: what a backup of the largest configuration the limits allow takes.`,
      tags: ['backup'],
      body: RestoreBody,
      responses: {
        200: { description: 'restored; sign in again', schema: RestoreSummarySchema },
        400: {
          description:
            'not an azcd backup, a newer format version, an invalid or inconsistent document, or a wrong passphrase; nothing changed',
        },
        409: {
          description:
            'the restore would leave no enabled Admin who can sign in, or another restore is under way; nothing changed',
        },
        413: { description: 'the body is larger than a backup of the largest configuration the limits allow' },
        503: { description: 'another restore is writing the configuration; try again after Retry-After seconds' },
      },
      streamBody: (req) => backups.beginRestore(req.caller),
      handle: async (req) => {
        const session = req.body as unknown as RestoreSession;
        return ok(
          await session.finish(
            (body) => restoreBody.parse(body, 'body'),
            () => req.revalidate(),
          ),
        );
      },
    }),
  ];
}
