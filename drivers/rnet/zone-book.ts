// RNET's part of the shared reconciliation book: its write order and the mute it can only toggle and never read.
//
// How mute stays honest: RNET has a mute *toggle* (remote key 0x0D) and no mute status, but every volume set
// un-mutes the zone (the controller does so on any volume change). So the book keeps the hardware mute as
// 1 / 0 / unknown:
// - unknown on every (re)connection and after the zone powers on: the amp may have been power cycled or toggled
//   while nobody listened; unknown is not news, and reads as un-muted;
// - on the first read of a connection the mute the daemon was told is written again, as no read can show it (the
//   one thing a start writes on RNET; a muted zone may sound for ~100 ms while it is set);
// - a volume set makes it 0 (known), which is also how the driver un-mutes: it sends the volume, never a toggle;
// - a toggle is sent only from a known 0, so it always lands on 1;
// - a mute toggle heard on the bus from a wall keypad flips it; a volume change seen in a read makes it 0, as the
//   hardware un-muted.
// Muting as "volume 0 with the volume remembered" was the alternative; it was not chosen because it changes the
// volume the controller stores (its turn-on and keypad display show 0) and the daemon would see volume 0 in every
// poll, whereas the protocol's own mute keeps the volume and is undone by the same volume set the driver sends.
import { type Attribute, type Fields, type ReadKind, type Wire, type Write, ZoneBook } from '../core/zone-book.js';

export class RnetZoneBook extends ZoneBook {
  /**
   * Power goes first; a zone that is (or is going) off gets nothing else, as its settings wait for power on (and its
   * mute is unknown after it). Source goes before volume, volume before the mute toggle. While the zone is muted a
   * volume change waits for the un-mute, since the set would un-mute it. Tone goes last.
   */
  protected override order(
    channel: number,
    hw: Wire,
    intent: (attribute: Attribute) => number | undefined,
  ): Write | undefined {
    const power = intent('power');
    if (power !== undefined && power !== hw.power) return { channel, attribute: 'power', value: power };
    if (hw.power !== 1) return undefined;
    const source = intent('source');
    if (source !== undefined && source !== hw.source) return { channel, attribute: 'source', value: source };
    const volume = intent('volume') ?? hw.volume;
    const mute = intent('muted');
    const needsVolume =
      (volume !== hw.volume && hw.muted !== 1) ||
      // un-mute, or make an unknown mute known before it is relied on or toggled
      (mute === 0 && hw.muted !== 0) ||
      (mute === 1 && hw.muted === undefined);
    if (needsVolume) return { channel, attribute: 'volume', value: volume };
    if (mute === 1 && hw.muted === 0) return { channel, attribute: 'muted', value: 1 };
    for (const attribute of ['bass', 'treble', 'balance', 'loudness'] as const) {
      const value = intent(attribute);
      if (value !== undefined && value !== hw[attribute]) return { channel, attribute, value };
    }
    return undefined;
  }

  /** What a command that went out does: RNET sends nothing back for it, so this is all that is known until a read. */
  protected override effect(hw: Wire, write: Write): void {
    if (write.attribute === 'power' && write.value === 1 && hw.power !== 1) hw.muted = undefined;
    if (write.attribute === 'volume') hw.muted = 0;
    hw[write.attribute] = write.value;
  }

  /** A zone info reply carries power, source and volume; the mute follows from what changed (module comment). */
  protected override merge(before: Wire | undefined, read: Fields, kind: ReadKind): Wire {
    const now: Wire = { ...(before ?? { power: 0, source: 1, volume: 0, muted: undefined }), ...read };
    if (!before) {
      now.muted = read.muted;
      return now;
    }
    if (kind === 'update') {
      if (now.power === 1 && before.power !== 1) now.muted = undefined;
      if (read.volume !== undefined && now.volume !== before.volume) now.muted = 0; // the controller un-mutes on any volume change
    } else if (kind === 'lost' && (now.volume !== before.volume || now.power !== before.power)) {
      now.muted = undefined;
    }
    return now;
  }

  protected override unread(hw: Wire, told: Wire | undefined): Fields {
    return hw.power === 1 && hw.muted === undefined && told?.muted !== undefined ? { muted: told.muted } : {};
  }
}
