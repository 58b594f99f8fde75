// What the announcement tests share: a music folder with a chime, the zones' state an announcement puts back, and
// an announcement's start and end as their events say them.
import path from 'node:path';
import type { ZoneView as Zone } from '../../daemon/domain/shared/views.js';
import { musicFolder, tone } from './mpd-rig.js';
import type { StreamRig } from './stream-rig.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** The chime every announcement test plays (1.5 s, tagged "Door"). */
export const CHIME = 'file:chimes/door.flac';

/** The test tones of musicFolder, and the chime. */
export function chimeFolder(t: Teardown): string {
  const music = musicFolder(t);
  tone(path.join(music, 'chimes', 'door.flac'), 1.5, 990, { title: 'Door' });
  return music;
}

/** What an announcement changes of a zone and puts back. */
export const zoneState = (zone: Zone) => ({
  power: zone.power,
  volume: zone.volume,
  muted: zone.muted,
  playerId: zone.playerId,
});

export async function zonesOf(rig: StreamRig): Promise<Zone[]> {
  return (await rig.api.get('/api/zones')).body;
}

/** The announcement's start, as its event says it. */
export async function announcementStarted(rig: StreamRig, id: string, from = 0) {
  return (await rig.next('announcement.started', (e) => e.payload.announcement.id === id, from)).payload.announcement;
}

/** The announcement's end, as its event says it. */
export async function announcementEnded(rig: StreamRig, id: string, from = 0) {
  return (await rig.next('announcement.ended', (e) => e.payload.announcement.id === id, from)).payload.announcement;
}
