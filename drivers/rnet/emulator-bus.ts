// Frames the emulator puts on the bus besides its replies: wall keypad events and the chatter a real bus carries.
import {
  CONTROLLER_KEYPAD,
  channelOf,
  controllerOf,
  type DeviceId,
  EVENT,
  encodeFrame,
  encodeKeypadKey,
  encodeZoneInfoReply,
  KEY_MUTE,
  TYPE,
  type ZoneInfo,
  zoneOf,
} from './protocol.js';

/** The id a zone's wall keypad uses on the bus (any id other than the host's 0x70 and the controller's 0x7F). */
export const keypadOf = (channel: number): DeviceId => ({
  controller: controllerOf(channel) - 1,
  zone: zoneOf(channel) - 1,
  keypad: 0x01,
});

/** A key pressed on a zone's wall keypad, as heard on the bus. */
export function keypadKeyFrame(channel: number, key: number): Buffer {
  return encodeKeypadKey(controllerOf(channel), keypadOf(channel), key);
}

/** The mute key from a zone's wall keypad: event 0xBF with key 0x0D, like the host's own mute toggle. */
export function keypadMuteFrame(channel: number): Buffer {
  const target = { controller: controllerOf(channel) - 1, zone: 0, keypad: CONTROLLER_KEYPAD };
  return encodeFrame(target, keypadOf(channel), TYPE.event, [
    0x02,
    0x02,
    0x00,
    0x00,
    EVENT.remoteKey,
    0x00,
    0x00,
    0x00,
    KEY_MUTE,
    0x00,
    0x01,
  ]);
}

/**
 * One frame of the traffic a controller's RS-232 port carries that answers nobody on it, in turn: display feedback
 * to keypads (target keypad 0x79, peripheral zone 0x7D), a type 0x06 frame, a zone info reply to another keypad
 * (0x71) with values that must not be taken for the zone's, a handshake, and the tail of a frame whose F0 was lost.
 */
export function chatterFrame(turn: number, controllers: number, info: (channel: number) => ZoneInfo): Buffer {
  const c = (turn % controllers) + 1;
  const ctrl = { controller: c - 1, zone: 0, keypad: CONTROLLER_KEYPAD };
  switch (turn % 6) {
    case 0: // source broadcast: "Source 1" text to every keypad, with an escaped byte in it
      return encodeFrame(
        { controller: c - 1, zone: 0, keypad: 0x79 },
        ctrl,
        TYPE.setData,
        [0x02, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x08, 0x00, 0x53, 0x6f, 0x75, 0x72, 0x63, 0x65, 0x20, 0x31, 0x80],
      );
    case 1: // peripheral feedback
      return encodeFrame(
        { controller: c - 1, zone: 0x7d, keypad: CONTROLLER_KEYPAD },
        ctrl,
        TYPE.event,
        [0x02, 0x02, 0x00, 0x00, 0x90, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01],
      );
    case 2: // undocumented type 0x06
      return encodeFrame(ctrl, { controller: c - 1, zone: 2, keypad: 0x01 }, 0x06, [0x00, 0x00, 0x11]);
    case 3: // a reply meant for another keypad: zone 1 on, source 6, volume 49
      return encodeZoneInfoReply(
        { ...info(channelOf(c, 1)), power: true, volume: 49, source: 6 },
        { controller: 0, zone: 0, keypad: 0x71 },
      );
    case 4: // a handshake between other devices
      return encodeFrame({ controller: c - 1, zone: 1, keypad: 0x01 }, ctrl, TYPE.handshake, [0x02]);
    default: // the tail of a frame whose start was lost
      return Buffer.from([0x00, 0x7f, 0x00, 0x00, 0x70, 0x05, 0x33, 0xf7]);
  }
}
