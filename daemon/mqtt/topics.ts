// The topic layout: one place that names every state, command, availability and discovery topic.

import type { ReceiverKindName } from '../domain/playback/index.js';
import { RECEIVER_KINDS } from '../domain/playback/index.js';
import { canonicalId, isUuid } from '../ids.js';

/** The zone fields that take commands: its volume, switches, source, sleep timer and tone controls. */
export type ZoneCommand = 'volume' | 'power' | 'mute' | 'source' | 'sleep' | 'bass' | 'treble' | 'balance' | 'loudness';
/** Besides, what the amplifier reports about the zone (read-only binary sensors). */
export type ZoneField = ZoneCommand | 'paging' | 'do_not_disturb' | 'party';
/**
 * A player's volume; a stream player's playing switch, now-playing text, position, its MPD's availability, next and
 * previous.
 */
export type PlayerField = 'volume' | 'playing' | 'now_playing' | 'position' | 'availability' | 'next' | 'previous';
/** The player fields that take commands. */
export type PlayerCommand = 'volume' | 'playing' | 'next' | 'previous';

/** What a command topic addresses, once parsed. */
export type CommandTarget =
  | { kind: 'zone'; id: string; field: ZoneCommand }
  | { kind: 'player'; id: string; field: PlayerCommand }
  | { kind: 'receiver'; id: string; receiver: ReceiverKindName }
  | { kind: 'scene'; id: string }
  | { kind: 'all-off' };

const ZONE_COMMANDS: readonly string[] = [
  'volume',
  'power',
  'mute',
  'source',
  'sleep',
  'bass',
  'treble',
  'balance',
  'loudness',
];
const PLAYER_COMMANDS: readonly string[] = ['volume', 'playing', 'next', 'previous'];

export class Topics {
  constructor(
    readonly base: string,
    readonly discoveryPrefix: string,
  ) {}

  /** The bridge's availability: `online` retained on connect, `offline` as the last will. */
  get availability(): string {
    return `${this.base}/status`;
  }

  /** Home Assistant's own status topic; `online` there is its birth message. */
  get hassStatus(): string {
    return `${this.discoveryPrefix}/status`;
  }

  zone(id: string, field: ZoneField): string {
    return `${this.base}/zone/${id}/${field}`;
  }

  /** A zone's own availability: `offline` while its amplifier unit cannot answer (writes to it are refused then). */
  zoneAvailability(id: string): string {
    return `${this.base}/zone/${id}/availability`;
  }

  player(id: string, field: PlayerField): string {
    return `${this.base}/player/${id}/${field}`;
  }

  /** A stream player's now-playing details as JSON (Home Assistant's json_attributes_topic of the now-playing sensor). */
  nowPlayingAttributes(id: string): string {
    return `${this.player(id, 'now_playing')}/attributes`;
  }

  /** A stream player's receiver switch: `ON` while an admin has it switched on (a command switches it). */
  receiver(id: string, kind: ReceiverKindName): string {
    return `${this.base}/player/${id}/receiver/${kind}`;
  }

  /** How the receiver runs, as JSON (Home Assistant's json_attributes_topic of its switch). */
  receiverAttributes(id: string, kind: ReceiverKindName): string {
    return `${this.receiver(id, kind)}/attributes`;
  }

  /** An amplifier link: `online` or `offline`; zones on it are available only while it is online. */
  amplifier(key: string): string {
    return `${this.base}/amplifier/${key}/status`;
  }

  /** A scene has no state (Home Assistant's scene entity is stateless), only this command topic. */
  sceneCommand(id: string): string {
    return `${this.base}/scene/${id}/set`;
  }

  get allOffCommand(): string {
    return `${this.base}/all_off/set`;
  }

  command(state: string): string {
    return `${state}/set`;
  }

  /** Subscriptions that cover every command topic. */
  get commandFilters(): string[] {
    return [
      `${this.base}/zone/+/+/set`,
      `${this.base}/player/+/+/set`,
      `${this.base}/player/+/receiver/+/set`,
      `${this.base}/scene/+/set`,
      this.allOffCommand,
    ];
  }

  discovery(component: string, nodeId: string, objectId: string): string {
    return `${this.discoveryPrefix}/${component}/${nodeId}/${objectId}/config`;
  }

  /** Parses a command topic; undefined for anything that is not one of ours. Its id comes out canonical (lower case). */
  parseCommand(topic: string): CommandTarget | undefined {
    if (topic === this.allOffCommand) return { kind: 'all-off' };
    if (!topic.startsWith(`${this.base}/`) || !topic.endsWith('/set')) return undefined;
    const parts = topic.slice(this.base.length + 1, -'/set'.length).split('/');
    const named = parts[1];
    if (named === undefined || !isUuid(named)) return undefined;
    // The MQTT front door for ids: a hub may send them in any letter case.
    const id = canonicalId(named);
    if (parts.length === 2 && parts[0] === 'scene') return { kind: 'scene', id };
    if (parts.length === 4 && parts[0] === 'player' && parts[2] === 'receiver') {
      const receiver = RECEIVER_KINDS.find((kind) => kind === parts[3]);
      return receiver && { kind: 'receiver', id, receiver };
    }
    if (parts.length !== 3) return undefined;
    const [kind, , field] = parts as [string, string, string];
    if (kind === 'zone' && ZONE_COMMANDS.includes(field)) return { kind, id, field: field as ZoneCommand };
    if (kind === 'player' && PLAYER_COMMANDS.includes(field)) return { kind, id, field: field as PlayerCommand };
    return undefined;
  }
}
