// Home Assistant discovery: one retained config message per entity, every entity on one device per appliance.
import type { ResolvedBridgeOptions } from './options.js';
import { MAX_SLEEP_MINUTES } from '../domain/scenes/index.js';
import { NO_SOURCE, OFFLINE, ONLINE, ON, PRESS, percent, sourceLabels } from './payloads.js';
import type { Topics } from './topics.js';
import { amplifierKeyOf, type BridgeView } from './view.js';

type Payload = Record<string, unknown>;

/** Every discovery config the view calls for, by topic, as the JSON text to publish retained. */
export function discoveryMessages(view: BridgeView, topics: Topics, options: ResolvedBridgeOptions): Map<string, string> {
  const { nodeId, identity } = options;
  const device = {
    identifiers: [nodeId],
    name: identity.friendlyName,
    manufacturer: 'audio-zone-control',
    model: 'azcd',
    sw_version: identity.version,
    configuration_url: identity.dashboardUrl,
  };
  const origin = { name: 'azcd', sw_version: identity.version };
  const bridgeUp = { topic: topics.availability, payload_available: ONLINE, payload_not_available: OFFLINE };
  const linkUp = (key: string) => ({ topic: topics.amplifier(key), payload_available: ONLINE, payload_not_available: OFFLINE });
  const zoneUp = (id: string) => ({ topic: topics.zoneAvailability(id), payload_available: ONLINE, payload_not_available: OFFLINE });
  const messages = new Map<string, string>();
  if (!view.account) return messages;
  // unique_id and object_id use ids, never names, so renames keep the entity (and its history) in the hub.
  const add = (component: string, objectId: string, payload: Payload) => {
    messages.set(topics.discovery(component, nodeId, objectId), JSON.stringify({ ...payload, unique_id: `${nodeId}_${objectId}`, device, origin }));
  };
  /** Player entities: usable only while both the bridge and their amplifier link are up. */
  const onAmplifier = (name: string) => ({ availability: [bridgeUp, linkUp(amplifierKeyOf(view, name))], availability_mode: 'all' });
  /** Zone entities: besides, only while the zone's own unit answers. */
  const onZone = (zone: BridgeView['zones'][number]) => ({
    availability: [bridgeUp, linkUp(amplifierKeyOf(view, zone.output.amplifier)), zoneUp(zone.id)],
    availability_mode: 'all',
  });

  const labels = sourceLabels(view.players);
  const sourceOptions = [NO_SOURCE, ...view.players.map((player) => labels.get(player.id)!)];
  for (const zone of view.zones) {
    const on = onZone(zone);
    const volume = topics.zone(zone.id, 'volume');
    add('number', `zone_${zone.id}_volume`, {
      name: `${zone.name} volume`,
      state_topic: volume,
      command_topic: topics.command(volume),
      min: 0,
      // The slider ends at the zone's limit: the daemon would clamp anything above it anyway. Home Assistant
      // refuses a number whose max is not above its min, so a zone limited to 0 keeps a slider to 1 (clamped to 0).
      max: Math.max(Number(percent(zone.maxVolume)), 1),
      step: 1,
      mode: 'slider',
      unit_of_measurement: '%',
      icon: 'mdi:volume-high',
      ...on,
    });
    for (const [field, icon] of [['power', 'mdi:power'], ['mute', 'mdi:volume-off']] as const) {
      const state = topics.zone(zone.id, field);
      add('switch', `zone_${zone.id}_${field}`, {
        name: `${zone.name} ${field}`,
        state_topic: state,
        command_topic: topics.command(state),
        payload_on: 'ON',
        payload_off: 'OFF',
        icon,
        ...on,
      });
    }
    const source = topics.zone(zone.id, 'source');
    add('select', `zone_${zone.id}_source`, {
      name: `${zone.name} source`,
      state_topic: source,
      command_topic: topics.command(source),
      options: sourceOptions,
      icon: 'mdi:speaker-multiple',
      ...on,
    });
    const sleep = topics.zone(zone.id, 'sleep');
    add('number', `zone_${zone.id}_sleep`, {
      name: `${zone.name} sleep timer`,
      state_topic: sleep,
      command_topic: topics.command(sleep),
      min: 0,
      max: MAX_SLEEP_MINUTES,
      step: 1,
      mode: 'box',
      device_class: 'duration',
      unit_of_measurement: 'min',
      icon: 'mdi:timer-outline',
      ...on,
    });
  }
  for (const player of view.players) {
    const volume = topics.player(player.id, 'volume');
    add('number', `player_${player.id}_volume`, {
      name: `${player.name} volume`,
      state_topic: volume,
      command_topic: topics.command(volume),
      min: 0,
      max: 100,
      step: 1,
      mode: 'slider',
      unit_of_measurement: '%',
      icon: 'mdi:speaker',
      ...onAmplifier(player.input.amplifier),
    });
  }
  for (const amplifier of view.amplifiers) {
    add('binary_sensor', `amplifier_${amplifier.key}_link`, {
      name: `Amplifier ${amplifier.name} link`,
      state_topic: topics.amplifier(amplifier.key),
      payload_on: ONLINE,
      payload_off: OFFLINE,
      device_class: 'connectivity',
      entity_category: 'diagnostic',
      availability: [bridgeUp],
    });
  }
  for (const scene of view.scenes) {
    add('scene', `scene_${scene.id}`, {
      name: scene.name,
      command_topic: topics.sceneCommand(scene.id),
      payload_on: ON,
      icon: 'mdi:palette',
      availability: [bridgeUp],
    });
  }
  add('button', 'all_zones_off', {
    name: 'All zones off',
    command_topic: topics.allOffCommand,
    payload_press: PRESS,
    icon: 'mdi:power-off',
    availability: [bridgeUp],
  });
  return messages;
}
