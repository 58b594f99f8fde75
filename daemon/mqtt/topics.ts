// The topic layout: one place that names every state, command, availability and discovery topic.

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
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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
    return [`${this.base}/zone/+/+/set`, `${this.base}/player/+/+/set`, `${this.base}/scene/+/set`, this.allOffCommand];
  }

  discovery(component: string, nodeId: string, objectId: string): string {
    return `${this.discoveryPrefix}/${component}/${nodeId}/${objectId}/config`;
  }

  /** Parses a command topic; undefined for anything that is not one of ours. */
  parseCommand(topic: string): CommandTarget | undefined {
    if (topic === this.allOffCommand) return { kind: 'all-off' };
    if (!topic.startsWith(`${this.base}/`) || !topic.endsWith('/set')) return undefined;
    const parts = topic.slice(this.base.length + 1, -'/set'.length).split('/');
    if (parts.length === 2 && parts[0] === 'scene' && UUID_RE.test(parts[1]!))
      return { kind: 'scene', id: parts[1]!.toLowerCase() };
    if (parts.length !== 3 || !UUID_RE.test(parts[1]!)) return undefined;
    const [kind, id, field] = parts as [string, string, string];
    if (kind === 'zone' && ZONE_COMMANDS.includes(field))
      return { kind, id: id.toLowerCase(), field: field as ZoneCommand };
    if (kind === 'player' && PLAYER_COMMANDS.includes(field))
      return { kind, id: id.toLowerCase(), field: field as PlayerCommand };
    return undefined;
  }
}
