// What the bridge's account may see right now, and the retained state topics that follow from it. Zones, players and
// scenes of amplifiers that are not configured get no entities: nothing could be done with them until they are again.
import type { PlaybackView, PlayerView, ReceiverView, SceneView, ZoneView } from '../domain/shared/index.js';
import {
  minutesLeft,
  NO_SOURCE,
  nowPlaying,
  nowPlayingAttributes,
  OFFLINE,
  ONLINE,
  onOff,
  percent,
  receiverAttributes,
  sourceLabels,
  type ToneSteps,
  toneStep,
} from './payloads.js';
import type { Topics } from './topics.js';

/** The tone controls that are number entities (loudness is a switch). */
export const STEPPED_TONE = ['bass', 'treble', 'balance'] as const;
export type SteppedTone = (typeof STEPPED_TONE)[number];

/** What the amplifier reports about a zone, by its field in the zone's amplifierStatus and its topic's field. */
export const ZONE_STATUS = [
  { flag: 'paging', field: 'paging' },
  { flag: 'doNotDisturb', field: 'do_not_disturb' },
  { flag: 'party', field: 'party' },
] as const;

/** The native steps of a tone control the zone's amplifier has; undefined when it lacks it. */
export function toneStepsOf(zone: ZoneView, control: SteppedTone): ToneSteps | undefined {
  const has = zone.toneControls[control];
  return has.available ? { down: has.down, up: has.up } : undefined;
}

export interface BridgeView {
  /** False while the bridge account is missing or disabled: then nothing at all is published. */
  account: boolean;
  zones: readonly ZoneView[];
  players: readonly PlayerView[];
  /** The scenes the account may apply (all of whose zones it sees). */
  scenes: readonly SceneView[];
  /** The playback of each bridged stream player, by player id. */
  playback: ReadonlyMap<string, PlaybackView>;
  /** The receivers of each bridged stream player, by player id: every kind, in the API's order. */
  receivers: ReadonlyMap<string, readonly ReceiverView[]>;
  /** `key` (config.ts amplifierKey) names topics and entities, so they follow the amplifier, not the list order. */
  amplifiers: ReadonlyArray<BridgeAmplifier>;
  /** When the view was taken (epoch ms): sleep timers are published as minutes left from then. */
  now: number;
}

export interface BridgeAmplifier {
  key: string;
  name: string;
  driver: string;
  online: boolean;
}

/** Whether a zone's output is on one of the configured amplifiers (a zone whose unit is silent still is). */
export function onConfigured(
  amplifiers: readonly BridgeAmplifier[],
  binding: { amplifier: string; driver: string },
): boolean {
  return amplifiers.some((amplifier) => amplifier.name === binding.amplifier && amplifier.driver === binding.driver);
}

/** The players bridged: a player is unavailable only when its amplifier is not configured. */
export function bridgedPlayers(players: readonly PlayerView[]): PlayerView[] {
  return players.filter((player) => player.available);
}

/** The scenes bridged: those with a bridged zone (a scene only of zones of amplifiers not configured could do nothing). */
export function bridgedScenes(scenes: readonly SceneView[], zones: readonly ZoneView[]): SceneView[] {
  const bridged = new Set(zones.map((zone) => zone.id));
  return scenes.filter((scene) => scene.zones.some((zone) => bridged.has(zone.zoneId)));
}

/** The key of the amplifier a zone or player names (views carry the amplifier's name). */
export function amplifierKeyOf(view: BridgeView, name: string): string {
  return view.amplifiers.find((amplifier) => amplifier.name === name)?.key ?? name;
}

export const EMPTY_VIEW: BridgeView = {
  account: false,
  zones: [],
  players: [],
  scenes: [],
  playback: new Map(),
  receivers: new Map(),
  amplifiers: [],
  now: 0,
};

/**
 * The receivers that get a switch: those whose program is installed here (one that cannot run could only be switched
 * off, and the API already says what to install).
 */
export function bridgedReceivers(view: BridgeView, playerId: string): ReceiverView[] {
  return (view.receivers.get(playerId) ?? []).filter((receiver) => receiver.available);
}

/** Every state topic the view calls for, by topic, as the text to publish retained. */
export function stateMessages(view: BridgeView, topics: Topics): Map<string, string> {
  const messages = new Map<string, string>();
  const labels = sourceLabels(view.players);
  for (const amplifier of view.amplifiers)
    messages.set(topics.amplifier(amplifier.key), amplifier.online ? ONLINE : OFFLINE);
  for (const zone of view.zones) {
    messages.set(topics.zone(zone.id, 'volume'), percent(zone.volume));
    messages.set(topics.zone(zone.id, 'power'), onOff(zone.power));
    messages.set(topics.zone(zone.id, 'mute'), onOff(zone.muted));
    messages.set(topics.zone(zone.id, 'source'), (zone.playerId && labels.get(zone.playerId)) || NO_SOURCE);
    messages.set(topics.zone(zone.id, 'sleep'), String(minutesLeft(zone.sleepUntil, view.now)));
    // A control not read from the amplifier yet has no state: Home Assistant shows it as unknown until one comes.
    for (const control of STEPPED_TONE) {
      const steps = toneStepsOf(zone, control);
      const value = zone.tone[control];
      if (steps && value !== null) messages.set(topics.zone(zone.id, control), toneStep(value, steps));
    }
    if (zone.toneControls.loudness.available && zone.tone.loudness !== null)
      messages.set(topics.zone(zone.id, 'loudness'), onOff(zone.tone.loudness));
    for (const { flag, field } of ZONE_STATUS) {
      const value = zone.amplifierStatus[flag];
      if (value !== null) messages.set(topics.zone(zone.id, field), onOff(value));
    }
    messages.set(topics.zoneAvailability(zone.id), zone.available ? ONLINE : OFFLINE);
  }
  for (const player of view.players) messages.set(topics.player(player.id, 'volume'), percent(player.volume));
  for (const [id, playback] of view.playback) {
    messages.set(topics.player(id, 'playing'), onOff(playback.state === 'playing'));
    messages.set(topics.player(id, 'now_playing'), nowPlaying(playback));
    messages.set(topics.nowPlayingAttributes(id), nowPlayingAttributes(playback));
    messages.set(topics.player(id, 'position'), String(Math.round(playback.positionMs / 1000)));
    messages.set(topics.player(id, 'availability'), playback.engine.state === 'up' ? ONLINE : OFFLINE);
    for (const receiver of bridgedReceivers(view, id)) {
      messages.set(topics.receiver(id, receiver.kind), onOff(receiver.enabled));
      messages.set(topics.receiverAttributes(id, receiver.kind), receiverAttributes(receiver));
    }
  }
  return messages;
}

/**
 * How long until a sleep timer's minutes-left figure changes (the earliest of the visible zones), so the bridge
 * republishes then; undefined when no visible zone has a timer.
 */
export function nextSleepTick(view: BridgeView): number | undefined {
  let next: number | undefined;
  for (const zone of view.zones) {
    if (zone.sleepUntil === null) continue;
    const left = Date.parse(zone.sleepUntil) - view.now;
    if (left <= 0) continue;
    // The figure is the minutes left rounded up: it drops when `left` crosses a whole minute.
    const wait = left % 60_000 || 60_000;
    next = next === undefined ? wait : Math.min(next, wait);
  }
  return next;
}
