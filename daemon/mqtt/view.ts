// What the bridge's account may see right now, and the retained state topics that follow from it.
import type { PlayerView, ZoneView } from '../domain/events.js';
import { NO_SOURCE, OFFLINE, ONLINE, onOff, percent, sourceLabels } from './payloads.js';
import type { Topics } from './topics.js';

export interface BridgeView {
  /** False while the bridge account is missing or disabled: then nothing at all is published. */
  account: boolean;
  zones: readonly ZoneView[];
  players: readonly PlayerView[];
  amplifiers: ReadonlyArray<{ name: string; online: boolean }>;
}

export const EMPTY_VIEW: BridgeView = { account: false, zones: [], players: [], amplifiers: [] };

/** Every state topic the view calls for, by topic, as the text to publish retained. */
export function stateMessages(view: BridgeView, topics: Topics): Map<string, string> {
  const messages = new Map<string, string>();
  const labels = sourceLabels(view.players);
  for (const amplifier of view.amplifiers) messages.set(topics.amplifier(amplifier.name), amplifier.online ? ONLINE : OFFLINE);
  for (const zone of view.zones) {
    messages.set(topics.zone(zone.id, 'volume'), percent(zone.volume));
    messages.set(topics.zone(zone.id, 'power'), onOff(zone.power));
    messages.set(topics.zone(zone.id, 'mute'), onOff(zone.muted));
    messages.set(topics.zone(zone.id, 'source'), (zone.playerId && labels.get(zone.playerId)) || NO_SOURCE);
  }
  for (const player of view.players) messages.set(topics.player(player.id, 'volume'), percent(player.volume));
  return messages;
}
