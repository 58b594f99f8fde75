// Russound RNET driver (CAA66, CAM6.6, CAV6.6, CAS44, MCA in RNET mode): the family's addressing, bus traffic and
// wire on the shared driver core, which keeps the ownership rule, the work loop, liveness and availability.
//
// Zone channels are controller*10 + zone: 11..16 on controller 1, 21..26 on controller 2, up to 61..66. This keeps a
// zone's channel stable when another controller is added to the bus, reads the way installers label zones
// ("controller 2, zone 3" is 23), leaves room for MCA units with up to 8 zones, and matches the Monoprice driver.
import { SerialDriver } from '../core/serial-driver.js';
import type { FirstRead, ReadReply, SerialOptions, WriteOutcome } from '../core/serial-options.js';
import type { Topology } from '../core/units.js';
import { bit, type Write } from '../core/zone-book.js';
import { RnetLink } from './link.js';
import { RNET_DEFAULTS } from './options.js';
import {
  channelOf,
  controllerChannels,
  controllerOf,
  encodeMuteToggle,
  encodeParameter,
  encodeSource,
  encodeVolume,
  encodeZonePower,
  type Heard,
  isChannel,
  MAX_CONTROLLERS,
  PARAMETER,
  RNET_SOUND,
  SOURCE_COUNT,
  VOLUME_STEPS,
  ZONES_PER_CONTROLLER,
  zoneOf,
} from './protocol.js';
import { RnetZoneBook } from './zone-book.js';

export type RnetOptions = SerialOptions;

export { RNET_DEFAULTS } from './options.js';

/** Controllers 1..6 of six zones, each zone read on its own; a controller is probed through its zone 1. */
const TOPOLOGY: Topology = {
  units: Array.from({ length: MAX_CONTROLLERS }, (_, i) => i + 1),
  unitOf: (channel) => (isChannel(channel) ? controllerOf(channel) : undefined),
  channels: controllerChannels,
  zoneName: (channel) => `Zone ${(controllerOf(channel) - 1) * ZONES_PER_CONTROLLER + zoneOf(channel)}`,
  unitName: (controller) => `controller ${controller}`,
  pollReads: controllerChannels,
  probeRead: (controller) => channelOf(controller, 1),
  zoneRead: (channel) => channel,
  covers: (channel) => [channel],
};

export class RnetDriver extends SerialDriver {
  protected readonly link: RnetLink;
  protected readonly book: RnetZoneBook;

  constructor(options: RnetOptions & { serialPort: string }) {
    super(
      {
        family: 'rnet',
        topology: TOPOLOGY,
        defaults: RNET_DEFAULTS,
        probeOthers: true,
        maxRefusals: 1, // RNET refuses nothing
        volumeSteps: VOLUME_STEPS,
        sound: RNET_SOUND,
        inputs: Array.from({ length: SOURCE_COUNT }, (_, i) => ({
          channel: i + 1,
          name: `Source ${i + 1}`,
          kind: 'line-in',
        })),
      },
      options,
    );
    this.book = new RnetZoneBook({
      volumeSteps: VOLUME_STEPS,
      sourceCount: SOURCE_COUNT,
      sound: RNET_SOUND,
      checkChannel: (c) => this.checkChannel(c),
      now: () => this.clock.now(),
    });
    this.link = new RnetLink({ ...this.lineOptions(), onHeard: (heard) => this.heard(heard) });
  }

  protected checkChannel(channel: number): string | undefined {
    return isChannel(channel)
      ? undefined
      : `no zone ${channel}; zones are 11..16, 21..26, ... 61..66 (controller*10 + zone)`;
  }

  /**
   * Controller 1 must answer for the link to count as up. One that is off or still booting does not; the link then
   * closes and retries with back-off, the driver staying offline meanwhile.
   */
  protected async handshake(connection: number): Promise<FirstRead | undefined> {
    const first = await this.stampedRead(channelOf(1, 1));
    if (connection !== this.link.connection) return undefined;
    if (first.reply.outcome !== 'ok') {
      this.link.fail('controller 1 not answering (powered off or still booting?)');
      return undefined;
    }
    return first;
  }

  protected async read(channel: number): Promise<ReadReply> {
    const { outcome, info } = await this.link.zoneInfo(controllerOf(channel), zoneOf(channel));
    if (!info || outcome !== 'ok') return { outcome, answered: false, zones: [] };
    const { bass, treble, balance } = info;
    const fields = {
      power: bit(info.power),
      source: info.source,
      volume: info.volume,
      bass,
      treble,
      balance,
      loudness: bit(info.loudness),
      doNotDisturb: bit(info.dnd),
      party: bit(info.party !== 0),
    };
    return { outcome, answered: true, zones: [{ channel, fields }] };
  }

  /** RNET answers no event: a write that went out is only known to have landed once the zone is read back. */
  protected async send(write: Write): Promise<WriteOutcome> {
    const outcome = await this.link.send(encodeWrite(write));
    return outcome === 'ok' ? 'sent' : outcome;
  }

  /**
   * Unsolicited frames. A wall keypad's event names its zone: that zone is read at the next turn, so the change it
   * made is reported without waiting for the poll (the key's effect depends on the keypad's programming, so the
   * read, not the key, says what changed). A mute toggle is the exception: no read can show it.
   */
  private heard(heard: Heard): void {
    if (heard.kind !== 'keypad' || this.phase !== 'online') return;
    if (heard.zone > ZONES_PER_CONTROLLER || !this.units.answers(heard.controller)) return;
    const channel = channelOf(heard.controller, heard.zone);
    const known = this.book.hardware(channel);
    if (heard.mute && known) this.learn(channel, { muted: known.muted ? 0 : 1 }, 'update', this.book.stamp());
    this.plan.touch(channel);
    this.kick();
  }
}

function encodeWrite(write: Write): Buffer {
  const controller = controllerOf(write.channel);
  const zone = zoneOf(write.channel);
  switch (write.attribute) {
    case 'power':
      return encodeZonePower(controller, zone, write.value === 1);
    case 'source':
      return encodeSource(controller, zone, write.value);
    case 'volume':
      return encodeVolume(controller, zone, write.value);
    case 'muted':
      return encodeMuteToggle(controller, zone);
    case 'bass':
    case 'treble':
    case 'balance':
    case 'loudness':
      return encodeParameter(controller, zone, PARAMETER[write.attribute], write.value);
  }
}
