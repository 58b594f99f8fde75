// The backup document and the database rows, each made from the other (users' key material aside: backup.ts).
import { isReceiverKind } from '../../../drivers/index.js';
import type { ConfigurationRows, MetaRow, ZoneConfigRow } from '../../store/backup-repo.js';
import {
  BRIDGE_SETTINGS_KEY,
  bridgeSettingsText,
  brokerOf,
  parseBridgeSettings,
  type SavedBridgeSettings,
} from '../../store/bridge-repo.js';
import { DELETED, deletedKey, parseDeletedKey, UDN_KEY } from '../../store/meta-repo.js';
import { effectiveVolume, outputColumns, outputOf, storedTone, toneColumns } from '../audio/index.js';
import { BACKUP_FORMAT, BACKUP_VERSION, type BackupDocument } from './backup-format.js';

/** What the document says about where it comes from. */
export interface DocumentHeader {
  createdAt: string;
  schemaVersion: number;
  friendlyName: string;
  azcdVersion: string;
}

type Tracks = BackupDocument['playlists'][number]['tracks'];
type SceneZones = BackupDocument['scenes'][number]['zones'];

/** A zone's (or a scene zone's) stored tone as the document carries it: left out when none is kept. */
function toneEntryOf(row: Pick<ZoneConfigRow, 'tone_bass' | 'tone_treble' | 'tone_balance' | 'tone_loudness'>): {
  tone?: ReturnType<typeof storedTone>;
} {
  const tone = storedTone(row);
  return Object.keys(tone).length > 0 ? { tone } : {};
}

/** Groups child rows under their parent's id, keeping their order. */
function groupBy<R, V>(rows: readonly R[], parentOf: (row: R) => string, entryOf: (row: R) => V): Map<string, V[]> {
  const groups = new Map<string, V[]>();
  for (const row of rows) {
    const parent = parentOf(row);
    let list = groups.get(parent);
    if (!list) groups.set(parent, (list = []));
    list.push(entryOf(row));
  }
  return groups;
}

/** The document of the configuration in `rows`: no password hash and no key (secrets are sealed separately). */
export function documentOf(rows: ConfigurationRows, header: DocumentHeader): BackupDocument {
  const playerAssignments = groupBy(
    rows.assignments.filter((a) => a.kind === 'player'),
    (a) => a.user_id,
    (a) => a.target_id,
  );
  const zoneAssignments = groupBy(
    rows.assignments.filter((a) => a.kind === 'zone'),
    (a) => a.user_id,
    (a) => a.target_id,
  );
  const tracks = groupBy<ConfigurationRows['tracks'][number], Tracks[number]>(
    rows.tracks,
    (t) => t.playlist_id,
    (t) => ({
      id: t.id,
      title: t.title,
      uri: t.uri,
      durationMs: t.duration_ms,
    }),
  );
  const sceneZones = groupBy<ConfigurationRows['sceneZones'][number], SceneZones[number]>(
    rows.sceneZones,
    (z) => z.scene_id,
    (z) => ({
      zoneId: z.zone_id,
      power: z.power === 1,
      volume: z.volume,
      muted: z.muted === 1,
      playerId: z.player_id,
      ...toneEntryOf(z),
    }),
  );
  // A switch of a kind this build does not know (stored by a build that did) is left out: a restore could not take it.
  const receivers = groupBy(
    rows.playerReceivers.flatMap((r) => (isReceiverKind(r.kind) ? [{ ...r, kind: r.kind }] : [])),
    (r) => r.player_id,
    (r) => ({ kind: r.kind, server: r.server }),
  );
  const wakeZones = groupBy(
    rows.castWakeZones,
    (r) => r.player_id,
    (r) => r.zone_id,
  );
  const castSettings = new Map(
    rows.castSettings.map((c) => [
      c.player_id,
      {
        wakeZoneIds: c.wake_chosen === 1 ? (wakeZones.get(c.player_id) ?? []) : null,
        offAfterMinutes: c.off_after_minutes,
      },
    ]),
  );
  const deletedChannels: BackupDocument['settings']['deletedChannels'] = [];
  for (const row of rows.meta) {
    const deleted = parseDeletedKey(row.key, row.value);
    if (deleted)
      deletedChannels.push({
        kind: deleted.kind,
        amplifier: deleted.amplifier.key,
        driver: deleted.amplifier.driver,
        channel: deleted.channel,
      });
  }
  return {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    createdAt: header.createdAt,
    schemaVersion: header.schemaVersion,
    device: {
      udn: rows.meta.find((row) => row.key === UDN_KEY)?.value ?? '',
      friendlyName: header.friendlyName,
      azcdVersion: header.azcdVersion,
    },
    users: rows.users.map((u) => ({
      id: u.id,
      username: u.username,
      role: u.role,
      isEnabled: u.is_enabled === 1,
      passwordChangeRequired: u.password_change_required === 1,
      createdAt: u.created_at,
      assignments: { playerIds: playerAssignments.get(u.id) ?? [], zoneIds: zoneAssignments.get(u.id) ?? [] },
    })),
    players: rows.players.map((p) => ({
      id: p.id,
      name: p.name,
      volume: p.volume,
      input: { amplifier: p.input_amplifier, driver: p.input_driver, channel: p.input_channel },
      output: outputOf(p),
      createdAt: p.created_at,
      // Left out when none is switched on, as in the backups from before receivers.
      ...(receivers.has(p.id) && { receivers: receivers.get(p.id) }),
      // Left out while the player keeps the defaults, as in the backups from before cast settings.
      ...(castSettings.has(p.id) && { cast: castSettings.get(p.id) }),
    })),
    zones: rows.zones.map((z) => ({
      id: z.id,
      name: z.name,
      output: { amplifier: z.output_amplifier, driver: z.output_driver, channel: z.output_channel },
      maxVolume: z.max_volume,
      turnOnVolume: z.turn_on_volume,
      volume: z.volume,
      muted: z.muted === 1,
      power: z.power === 1,
      source: z.source,
      playerId: z.player_id,
      createdAt: z.created_at,
      ...toneEntryOf(z),
    })),
    inputDevices: rows.inputDevices.map((d) => ({
      id: d.id,
      name: d.name,
      kind: d.kind,
      input: { amplifier: d.input_amplifier, driver: d.input_driver, channel: d.input_channel },
      isFavorite: d.is_favorite === 1,
      createdAt: d.created_at,
    })),
    playlists: rows.playlists.map((p) => ({
      id: p.id,
      name: p.name,
      isFavorite: p.is_favorite === 1,
      createdAt: p.created_at,
      tracks: tracks.get(p.id) ?? [],
    })),
    scenes: rows.scenes.map((s) => ({
      id: s.id,
      name: s.name,
      createdAt: s.created_at,
      updatedAt: s.updated_at,
      zones: sceneZones.get(s.id) ?? [],
    })),
    settings: { deletedChannels, mqtt: bridgeSettingsOf(rows.meta) },
  };
}

/** The Home Assistant bridge settings saved in the dashboard, without the password (a sealed backup's secrets carry it). */
function bridgeSettingsOf(meta: readonly MetaRow[]): NonNullable<BackupDocument['settings']['mqtt']> {
  const { url, username, account } = parseBridgeSettings(meta.find((row) => row.key === BRIDGE_SETTINGS_KEY)?.value);
  return {
    ...(url !== undefined && { url }),
    ...(username !== undefined && { username }),
    ...(account !== undefined && { account }),
  };
}

/** The saved broker password of these `meta` rows (sealed with this appliance's device key), if there is one. */
export function savedBridgePassword(meta: readonly MetaRow[]): SavedBridgeSettings['password'] {
  return parseBridgeSettings(meta.find((row) => row.key === BRIDGE_SETTINGS_KEY)?.value).password;
}

/**
 * The rows of a checked document, users aside (their key material depends on the secrets and on this appliance).
 * Its ids are in their canonical form already (parseBackup).
 * `currentMeta` is the `meta` table now: settings the document does not cover stay as they are.
 */
export function configurationOf(
  doc: BackupDocument,
  currentMeta: readonly MetaRow[],
  /** The broker password from the backup's secrets, sealed with this appliance's device key. */
  bridgePassword?: SavedBridgeSettings['password'],
): Omit<ConfigurationRows, 'users'> {
  const zones: ZoneConfigRow[] = doc.zones.map((z) => ({
    id: z.id,
    name: z.name,
    // THE RULE holds for a restored zone too; it comes back powered off, so a restore never starts sound in a room.
    volume: effectiveVolume({ maxVolume: z.maxVolume, turnOnVolume: z.turnOnVolume }, z.volume),
    muted: z.muted ? 1 : 0,
    power: 0,
    source: z.source,
    player_id: z.playerId,
    output_amplifier: z.output.amplifier,
    output_driver: z.output.driver,
    output_channel: z.output.channel,
    created_at: z.createdAt,
    max_volume: z.maxVolume,
    turn_on_volume: z.turnOnVolume,
    ...toneColumns(z.tone ?? {}),
  }));
  const meta: MetaRow[] = currentMeta.filter((row) => row.key !== UDN_KEY && !row.key.startsWith('deleted:'));
  meta.push({ key: UDN_KEY, value: doc.device.udn });
  for (const d of doc.settings.deletedChannels) {
    meta.push({ key: deletedKey(d.kind, { key: d.amplifier, driver: d.driver }, d.channel), value: DELETED });
  }
  // A backup from before it carried them leaves this appliance's bridge settings as they are.
  const bridge = doc.settings.mqtt;
  if (bridge) {
    const current = parseBridgeSettings(currentMeta.find((row) => row.key === BRIDGE_SETTINGS_KEY)?.value);
    // Without the password in the backup, the one saved here stays only for the same broker and login (the rule of
    // a URL changed in the dashboard): it never goes to a broker it was not given for.
    const sameLogin = brokerOf(current.url) === brokerOf(bridge.url) && current.username === bridge.username;
    const text = bridgeSettingsText({
      ...bridge,
      password: bridgePassword ?? (sameLogin ? current.password : undefined),
    });
    const at = meta.findIndex((row) => row.key === BRIDGE_SETTINGS_KEY);
    if (at >= 0) meta.splice(at, 1);
    if (text !== null) meta.push({ key: BRIDGE_SETTINGS_KEY, value: text });
  }
  return {
    assignments: doc.users.flatMap((u) => [
      ...[...new Set(u.assignments.playerIds)].map((target_id) => ({
        user_id: u.id,
        kind: 'player' as const,
        target_id,
      })),
      ...[...new Set(u.assignments.zoneIds)].map((target_id) => ({
        user_id: u.id,
        kind: 'zone' as const,
        target_id,
      })),
    ]),
    players: doc.players.map((p) => ({
      id: p.id,
      name: p.name,
      volume: p.volume,
      input_amplifier: p.input.amplifier,
      input_driver: p.input.driver,
      input_channel: p.input.channel,
      created_at: p.createdAt,
      output_kind: outputColumns(p.output).kind,
      output_target: outputColumns(p.output).target,
    })),
    playerReceivers: doc.players.flatMap((p) =>
      (p.receivers ?? []).map((r) => ({ player_id: p.id, kind: r.kind, server: r.server })),
    ),
    castSettings: doc.players.flatMap((p) =>
      p.cast && (p.cast.wakeZoneIds !== null || p.cast.offAfterMinutes !== null)
        ? [
            {
              player_id: p.id,
              wake_chosen: p.cast.wakeZoneIds === null ? (0 as const) : (1 as const),
              off_after_minutes: p.cast.offAfterMinutes,
            },
          ]
        : [],
    ),
    castWakeZones: doc.players.flatMap((p) =>
      (p.cast?.wakeZoneIds ?? []).map((zone_id) => ({ player_id: p.id, zone_id })),
    ),
    zones,
    inputDevices: doc.inputDevices.map((d) => ({
      id: d.id,
      name: d.name,
      kind: d.kind,
      input_amplifier: d.input.amplifier,
      input_driver: d.input.driver,
      input_channel: d.input.channel,
      is_favorite: d.isFavorite ? 1 : 0,
      created_at: d.createdAt,
    })),
    playlists: doc.playlists.map((p) => ({
      id: p.id,
      name: p.name,
      is_favorite: p.isFavorite ? 1 : 0,
      created_at: p.createdAt,
      track_count: p.tracks.length,
      duration_ms: p.tracks.reduce((sum, t) => sum + (t.durationMs ?? 0), 0),
    })),
    tracks: doc.playlists.flatMap((p) =>
      p.tracks.map((t, position) => ({
        id: t.id,
        playlist_id: p.id,
        position,
        title: t.title,
        uri: t.uri,
        duration_ms: t.durationMs,
      })),
    ),
    scenes: doc.scenes.map((s) => ({
      id: s.id,
      name: s.name,
      created_at: s.createdAt,
      updated_at: s.updatedAt,
    })),
    sceneZones: doc.scenes.flatMap((s) =>
      s.zones.map((z) => ({
        scene_id: s.id,
        zone_id: z.zoneId,
        power: z.power ? 1 : 0,
        volume: z.volume,
        muted: z.muted ? 1 : 0,
        player_id: z.playerId,
        ...toneColumns(z.tone ?? {}),
      })),
    ),
    meta,
  };
}
