// The one access policy: what a caller may do and see, for requests, lists and events, whatever the front door.

import { type Caller, isAdmin } from './access.js';
import { forbidden } from './errors.js';
import type { DomainEvent, PlayerView, SceneView, ZoneView } from './events.js';
import type { AnnouncementView } from './playback-views.js';

export { isAdmin };

// ---- may do -----------------------------------------------------------------------------------

/** Admin-only operations (users, keys, assignments, creating and deleting players, zones and input devices). */
export function requireAdmin(caller: Caller, what: string): void {
  if (!isAdmin(caller)) throw forbidden(`${what} is for administrators only`);
}

/** Changes an Operator or Admin may make (a Viewer reads only). */
export function requireWriter(caller: Caller): void {
  if (caller.role === 'Viewer') throw forbidden('a Viewer can read but not change anything');
}

declare const writerChecked: unique symbol;

/**
 * A caller already checked to be allowed changes (requireWriter). A function that takes a Writer leaves the role to
 * the operation that called it, which checked it once where it loaded what it acts on.
 */
export type Writer = Caller & { readonly [writerChecked]: true };

/** requireWriter, with the caller returned as a Writer for the functions the operation hands it to. */
export function asWriter(caller: Caller): Writer {
  requireWriter(caller);
  return caller as Writer;
}

/** Operations on a user account that its owner may do too (read itself, change its own password). */
export function requireAdminOrSelf(caller: Caller, userId: string, what: string): void {
  if (!isAdmin(caller) && caller.userId !== userId)
    throw forbidden(`${what} is for administrators or the user themself`);
}

// ---- may see: single things and lists ---------------------------------------------------------

/** Players and zones outside a non-admin's assignment list do not exist for it (404, left out of lists). */
export const canSeePlayer = (caller: Caller, playerId: string): boolean =>
  isAdmin(caller) || caller.playerIds.has(playerId);
export const canSeeZone = (caller: Caller, zoneId: string): boolean => isAdmin(caller) || caller.zoneIds.has(zoneId);

/** The players of a list the caller may see, in order; an admin's list is returned as it is. */
export function visiblePlayers<T extends { readonly id: string }>(caller: Caller, players: readonly T[]): readonly T[] {
  return isAdmin(caller) ? players : players.filter((player) => caller.playerIds.has(player.id));
}

/** The zones of a list the caller may see, in order; an admin's list is returned as it is. */
export function visibleZones<T extends { readonly id: string }>(caller: Caller, zones: readonly T[]): readonly T[] {
  return isAdmin(caller) ? zones : zones.filter((zone) => caller.zoneIds.has(zone.id));
}

/** A player as the caller sees it: attached zones it may not see are left out. `null` is the unrestricted view. */
export function playerFor(caller: Caller | null, player: PlayerView): PlayerView {
  if (!caller || isAdmin(caller)) return player;
  return { ...player, zoneIds: player.zoneIds.filter((id) => caller.zoneIds.has(id)) };
}

/** A zone as the caller sees it: the player routed there is named only if the caller may see it. */
export function zoneFor(caller: Caller | null, zone: ZoneView): ZoneView {
  if (!caller || isAdmin(caller) || zone.playerId === null || caller.playerIds.has(zone.playerId)) return zone;
  return { ...zone, playerId: null };
}

/** A scene exists for a non-admin only if it may see every zone the scene covers. */
export function canSeeScene(
  caller: Caller,
  scene: { readonly zones: ReadonlyArray<{ readonly zoneId: string }> },
): boolean {
  return isAdmin(caller) || scene.zones.every((zone) => caller.zoneIds.has(zone.zoneId));
}

/** A visible scene as the caller sees it: a player it may not see is not named (as in zoneFor). */
export function sceneFor(caller: Caller | null, scene: SceneView): SceneView {
  if (!caller || isAdmin(caller)) return scene;
  const zones = scene.zones.map((zone) =>
    zone.playerId === null || caller.playerIds.has(zone.playerId) ? zone : { ...zone, playerId: null },
  );
  return { ...scene, zones };
}

/** An announcement (whose zones the caller sees) as the caller sees it: the stream players it may not see are not named. */
export function announcementFor(caller: Caller | null, announcement: AnnouncementView): AnnouncementView {
  if (!caller || isAdmin(caller)) return announcement;
  const { uri, detail } = announcement;
  // As for a skipped track (streamSkipFor): MPD's words on a stream that failed are for admins only.
  const unreached = /^https?:/i.test(uri) && detail?.includes(`${uri} could not play (`);
  return {
    ...announcement,
    playerIds: announcement.playerIds.filter((id) => caller.playerIds.has(id)),
    ...(unreached && { detail: `${uri} cannot be reached` }),
  };
}

// ---- may see: events --------------------------------------------------------------------------

/**
 * Whether the caller may receive an event, decided when it is sent so assignment changes apply at once. Admins
 * see everything; others see player and zone events for their assignments, and all library and hardware events.
 */
export function canSeeEvent(caller: Caller, event: DomainEvent): boolean {
  if (isAdmin(caller)) return true;
  switch (event.type) {
    case 'user.changed':
      // Admins only. A user's own assignment change shows as the events it now may (or no longer) see.
      return false;
    case 'player.created':
    case 'player.updated':
      return caller.playerIds.has(event.payload.player.id);
    case 'player.volumeChanged':
    case 'player.zonesChanged':
    case 'player.deleted':
      return caller.playerIds.has(event.payload.playerId);
    case 'zone.created':
    case 'zone.updated':
      return caller.zoneIds.has(event.payload.zone.id);
    case 'zone.volumeChanged':
    case 'zone.mutedChanged':
    case 'zone.powerChanged':
    case 'zone.sleepChanged':
    case 'zone.availabilityChanged':
    case 'zone.toneChanged':
    case 'zone.statusChanged':
    case 'zone.deleted':
      return caller.zoneIds.has(event.payload.zoneId);
    case 'scene.created':
    case 'scene.updated':
      return canSeeScene(caller, event.payload.scene);
    case 'scene.deleted':
    case 'scene.applied':
      return event.payload.zoneIds.every((id) => caller.zoneIds.has(id));
    case 'player.playbackChanged':
    case 'player.position':
    case 'player.trackSkipped':
    case 'player.engineChanged':
    case 'player.receiverChanged':
      return caller.playerIds.has(event.payload.playerId);
    case 'announcement.queued':
    case 'announcement.started':
    case 'announcement.ended':
      return event.payload.announcement.zoneIds.every((id) => caller.zoneIds.has(id));
    default:
      return true;
  }
}

/** Events whose payload names other players or zones, or counts them, so non-admins get their own copy. */
const PER_CALLER = new Set<DomainEvent['type']>([
  'player.volumeChanged',
  'player.zonesChanged',
  'player.created',
  'player.updated',
  'zone.created',
  'zone.updated',
  'scene.created',
  'scene.updated',
  'announcement.queued',
  'announcement.started',
  'announcement.ended',
  'player.trackSkipped',
]);

/** Whether the caller gets an event's payload exactly as published, so one encoding can serve every such caller. */
export function seesPayloadAsPublished(caller: Caller, event: DomainEvent): boolean {
  return isAdmin(caller) || !PER_CALLER.has(event.type);
}

/** What an event's payload is derived from that differs per caller and is not in the event itself. */
export interface CallerViews {
  /** The player's volume as the caller sees it (the average of the attached zones it may see), if it sees the player. */
  playerVolumeFor(caller: Caller, playerId: string): number | undefined;
}

/**
 * The payload of an event in the caller's view: ids of players and zones it may not see are left out, and a player's
 * volume counts only the zones it may see, as in REST. That volume is read when the event is sent: a replayed event
 * carries the present value, which the zone events replayed with it agree with.
 */
export function eventPayloadFor(caller: Caller, event: DomainEvent, views?: CallerViews): DomainEvent['payload'] {
  if (seesPayloadAsPublished(caller, event)) return event.payload;
  switch (event.type) {
    case 'player.volumeChanged': {
      const volume = views?.playerVolumeFor(caller, event.payload.playerId);
      return volume === undefined ? event.payload : { ...event.payload, volume };
    }
    case 'player.zonesChanged':
      return { ...event.payload, zoneIds: event.payload.zoneIds.filter((id) => caller.zoneIds.has(id)) };
    case 'player.created':
    case 'player.updated':
      return { player: playerFor(caller, event.payload.player) };
    case 'zone.created':
    case 'zone.updated':
      return { zone: zoneFor(caller, event.payload.zone) };
    case 'scene.created':
    case 'scene.updated':
      return { scene: sceneFor(caller, event.payload.scene) };
    case 'announcement.queued':
    case 'announcement.started':
    case 'announcement.ended':
      return { announcement: announcementFor(caller, event.payload.announcement) };
    case 'player.trackSkipped':
      return streamSkipFor(event.payload);
    default:
      return event.payload;
  }
}

/**
 * A skipped stream as a non-admin sees it: only that it cannot be reached. MPD's words and the reason tell a closed
 * port from an HTTP error or from a server that answered with something else, which would make any stream URL an
 * Operator may play a probe of the LAN behind the appliance; admins keep them to find what is wrong.
 */
function streamSkipFor(payload: Extract<DomainEvent, { type: 'player.trackSkipped' }>['payload']): typeof payload {
  if (!/^https?:/i.test(payload.uri) || payload.reason === 'refused') return payload;
  return { ...payload, reason: 'unreachable', detail: `${payload.uri} cannot be reached` };
}

/**
 * Whether a caller whose access changed (role or assignments) must be told to refetch: what it holds is then wrong
 * in ways no event describes. An admin sees everything, so becoming one needs no refetch.
 */
export function accessChangeNeedsRefetch(before: Caller, after: Caller): boolean {
  return !isAdmin(after) && !sameAccess(before, after);
}

/** Same role and the same assignment lists. */
export function sameAccess(a: Caller, b: Caller): boolean {
  const sameSet = (x: ReadonlySet<string>, y: ReadonlySet<string>) =>
    x.size === y.size && [...x].every((id) => y.has(id));
  return a.role === b.role && sameSet(a.playerIds, b.playerIds) && sameSet(a.zoneIds, b.zoneIds);
}
