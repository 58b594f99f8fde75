// Home Assistant discovery: one retained config message per entity, every entity on one device per appliance.

import { MAX_SLEEP_MINUTES } from '../domain/scenes/index.js';
import type { ResolvedBridgeOptions } from './options.js';
import { NO_SOURCE, OFF, OFFLINE, ON, ONLINE, PRESS, percent, RECEIVER_NAMES, sourceLabels } from './payloads.js';
import type { Topics, ZoneField } from './topics.js';
import { amplifierKeyOf, type BridgeView, bridgedReceivers, STEPPED_TONE, toneStepsOf, ZONE_STATUS } from './view.js';

type Payload = Record<string, unknown>;

const TONE_ICONS = { bass: 'mdi:speaker', treble: 'mdi:music-clef-treble', balance: 'mdi:scale-balance' } as const;
const STATUS_NAMES = { paging: 'paging', doNotDisturb: 'do not disturb', party: 'party mode' } as const;
const STATUS_ICONS = { paging: 'mdi:bullhorn', doNotDisturb: 'mdi:minus-circle', party: 'mdi:party-popper' } as const;
/** A receiver switch's icon where a kind has one of its own; any other kind's is the generic cast icon. */
const RECEIVER_ICONS: Readonly<Record<string, string>> = {
  airplay: 'mdi:apple-airplay',
  squeezelite: 'mdi:speaker-wireless',
};
const RECEIVER_ICON = 'mdi:cast-audio';

/** Every discovery config the view calls for, by topic, as the JSON text to publish retained. */
export function discoveryMessages(
  view: BridgeView,
  topics: Topics,
  options: ResolvedBridgeOptions,
): Map<string, string> {
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
  const linkUp = (key: string) => ({
    topic: topics.amplifier(key),
    payload_available: ONLINE,
    payload_not_available: OFFLINE,
  });
  const zoneUp = (id: string) => ({
    topic: topics.zoneAvailability(id),
    payload_available: ONLINE,
    payload_not_available: OFFLINE,
  });
  const messages = new Map<string, string>();
  if (!view.account) return messages;
  // unique_id and object_id use ids, never names, so renames keep the entity (and its history) in the hub.
  const add = (component: string, objectId: string, payload: Payload) => {
    messages.set(
      topics.discovery(component, nodeId, objectId),
      JSON.stringify({ ...payload, unique_id: `${nodeId}_${objectId}`, device, origin }),
    );
  };
  /** Player entities: usable only while both the bridge and their amplifier link are up. */
  const onAmplifier = (name: string) => ({
    availability: [bridgeUp, linkUp(amplifierKeyOf(view, name))],
    availability_mode: 'all',
  });
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
    // Loudness only where the zone's amplifier has it.
    const switches: Array<readonly [ZoneField, string]> = [
      ['power', 'mdi:power'],
      ['mute', 'mdi:volume-off'],
    ];
    if (zone.toneControls.loudness.available) switches.push(['loudness', 'mdi:ear-hearing']);
    for (const [field, icon] of switches) {
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
    // Tone controls only where the zone's amplifier has them (a family that lacks one gets no entity for it, and an
    // entity made for an amplifier since replaced is cleared). The slider runs over the amplifier's own steps from
    // flat or centre (-7..7 on Monoprice bass), so every position is one step it plays, whatever the family.
    for (const control of STEPPED_TONE) {
      const steps = toneStepsOf(zone, control);
      if (!steps) continue;
      const state = topics.zone(zone.id, control);
      add('number', `zone_${zone.id}_${control}`, {
        name: `${zone.name} ${control}`,
        state_topic: state,
        command_topic: topics.command(state),
        min: -steps.down,
        max: steps.up,
        step: 1,
        mode: 'slider',
        icon: TONE_ICONS[control],
        ...on,
      });
    }
    // What the amplifier reports about the zone, only what its family reports (null in the zone's amplifierStatus:
    // no entity, rather than one that stays unknown for good).
    for (const { flag, field } of ZONE_STATUS) {
      if (zone.amplifierStatus[flag] === null) continue;
      add('binary_sensor', `zone_${zone.id}_${field}`, {
        name: `${zone.name} ${STATUS_NAMES[flag]}`,
        state_topic: topics.zone(zone.id, field),
        payload_on: ON,
        payload_off: OFF,
        icon: STATUS_ICONS[flag],
        ...on,
      });
    }
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
  for (const id of view.playback.keys()) {
    const player = view.players.find((p) => p.id === id);
    if (!player) continue;
    // A stream player's own entities follow its MPD, not the amplifier link: it plays whether the amplifier answers or not.
    const engineUp = {
      availability: [
        bridgeUp,
        { topic: topics.player(id, 'availability'), payload_available: ONLINE, payload_not_available: OFFLINE },
      ],
      availability_mode: 'all',
    };
    add('sensor', `player_${id}_now_playing`, {
      name: `${player.name} now playing`,
      state_topic: topics.player(id, 'now_playing'),
      json_attributes_topic: topics.nowPlayingAttributes(id),
      icon: 'mdi:music',
      ...engineUp,
    });
    // Off until someone turns it on: a value that changes every second while playing would otherwise fill the hub's
    // history (its recorder stores every change of an enabled entity).
    add('sensor', `player_${id}_position`, {
      name: `${player.name} position`,
      state_topic: topics.player(id, 'position'),
      device_class: 'duration',
      unit_of_measurement: 's',
      enabled_by_default: false,
      icon: 'mdi:timer-music-outline',
      ...engineUp,
    });
    const playing = topics.player(id, 'playing');
    add('switch', `player_${id}_playing`, {
      name: `${player.name} playing`,
      state_topic: playing,
      command_topic: topics.command(playing),
      payload_on: ON,
      payload_off: OFF,
      icon: 'mdi:play-pause',
      ...engineUp,
    });
    for (const [field, icon] of [
      ['next', 'mdi:skip-next'],
      ['previous', 'mdi:skip-previous'],
    ] as const) {
      add('button', `player_${id}_${field}`, {
        name: `${player.name} ${field}`,
        command_topic: topics.command(topics.player(id, field)),
        payload_press: PRESS,
        icon,
        ...engineUp,
      });
    }
    // A receiver runs beside the player's MPD, not in it: its switch is usable whenever the bridge is. It is an
    // admin's setting (configuration, not a control), so only an Admin bridge account's commands are taken.
    for (const receiver of bridgedReceivers(view, id)) {
      const state = topics.receiver(id, receiver.kind);
      add('switch', `player_${id}_receiver_${receiver.kind}`, {
        name: `${player.name} ${RECEIVER_NAMES[receiver.kind]}`,
        state_topic: state,
        command_topic: topics.command(state),
        json_attributes_topic: topics.receiverAttributes(id, receiver.kind),
        payload_on: ON,
        payload_off: OFF,
        entity_category: 'config',
        icon: RECEIVER_ICONS[receiver.kind] ?? RECEIVER_ICON,
        availability: [bridgeUp],
      });
    }
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
