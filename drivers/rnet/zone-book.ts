// Desired vs hardware state of RNET zones, including the mute RNET can only toggle and never report.
//
// How mute stays honest: RNET has a mute *toggle* (remote key 0x0D) and no mute status, but every volume set
// un-mutes the zone (the controller does so on any volume change). So the book keeps the hardware mute as
// true / false / unknown:
// - unknown on every (re)connection and after the zone powers on: the amp may have been power cycled or toggled
//   while nobody listened;
// - a volume set makes it false (known), which is also how the driver un-mutes: it sends the volume, never a toggle;
// - a toggle is sent only from a known false, so it always lands on true;
// - a mute toggle heard on the bus from a wall keypad flips it (and is reported); a volume change seen in a poll
//   clears it, as the hardware un-muted.
// Muting as "volume 0 with the volume remembered" was the alternative; it was not chosen because it changes the
// volume the controller stores (its turn-on and keypad display show 0) and the daemon would see volume 0 in every
// poll, whereas the protocol's own mute keeps the volume and is undone by the same volume set the driver sends.
import type { ZoneState } from '../driver.js';
import { stepToVolume, volumeToStep } from '../driver.js';
import { SOURCE_COUNT, VOLUME_STEPS, isChannel, type ZoneInfo } from './protocol.js';

export interface Wire {
  power: boolean;
  /** 1..6 */
  source: number;
  /** 0..50 */
  volume: number;
  /** undefined: not known (see the module comment). */
  mute: boolean | undefined;
}

type Desired = Partial<Omit<Wire, 'mute'> & { mute: boolean }>;

export type Write =
  | { channel: number; kind: 'power'; value: boolean }
  | { channel: number; kind: 'source'; value: number }
  | { channel: number; kind: 'volume'; value: number }
  /** The toggle, sent only from a known un-muted zone, so it mutes. */
  | { channel: number; kind: 'mute' };

const toState = (w: Wire): ZoneState => ({
  power: w.power,
  // Unknown reads as un-muted: what a freshly powered zone and any zone after a volume change are.
  muted: w.mute === true,
  volume: stepToVolume(w.volume, VOLUME_STEPS),
  source: w.source,
});

/** No I/O, no timers: the driver asks it what to send next and tells it what it learned. */
export class ZoneBook {
  private readonly desired = new Map<number, Desired>();
  private readonly known = new Map<number, Wire>();

  /** Stores a change as wire values; values the amp cannot take are dropped and the complaint returned for the log. */
  record(channel: number, change: Partial<ZoneState>): string | undefined {
    if (!isChannel(channel)) return `no zone ${channel}; zones are 11..16, 21..26, ... 61..66 (controller*10 + zone)`;
    const next: Desired = { ...this.desired.get(channel) };
    let complaint: string | undefined;
    if (typeof change.power === 'boolean') next.power = change.power;
    if (typeof change.muted === 'boolean') next.mute = change.muted;
    if (typeof change.volume === 'number' && Number.isFinite(change.volume)) next.volume = volumeToStep(change.volume, VOLUME_STEPS);
    if (change.source !== undefined) {
      if (Number.isInteger(change.source) && change.source >= 1 && change.source <= SOURCE_COUNT) next.source = change.source;
      else complaint = `source must be 1..${SOURCE_COUNT}, got ${change.source} (zone ${channel})`;
    }
    this.desired.set(channel, next);
    return complaint;
  }

  hardware(channel: number): ZoneState | undefined {
    const wire = this.known.get(channel);
    return wire && toState(wire);
  }

  /**
   * The next command for the zones read on this connection (`fresh`). Power goes first; a zone that is (or is
   * going) off gets nothing else, as its settings wait for power on (and its mute is unknown after it). Source goes
   * before volume, volume before the mute toggle. While the zone is muted a volume change waits for the un-mute,
   * since the set would un-mute it.
   */
  nextWrite(fresh: ReadonlySet<number>): Write | undefined {
    for (const channel of [...fresh].sort((a, b) => a - b)) {
      const hw = this.known.get(channel);
      const want = this.desired.get(channel);
      if (!hw || !want) continue;
      if (want.power !== undefined && want.power !== hw.power) return { channel, kind: 'power', value: want.power };
      if (!hw.power) continue;
      if (want.source !== undefined && want.source !== hw.source) return { channel, kind: 'source', value: want.source };
      const volume = want.volume ?? hw.volume;
      const needsVolume =
        (volume !== hw.volume && hw.mute !== true) ||
        // un-mute, or make an unknown mute known before it is relied on or toggled
        (want.mute === false && hw.mute !== false) ||
        (want.mute === true && hw.mute === undefined);
      if (needsVolume) return { channel, kind: 'volume', value: volume };
      if (want.mute === true && hw.mute === false) return { channel, kind: 'mute' };
    }
    return undefined;
  }

  /** The command went out: RNET sends nothing back for it, so this is all we know until the next read. */
  acknowledge(write: Write): void {
    const hw = this.known.get(write.channel);
    if (!hw) return;
    switch (write.kind) {
      case 'power':
        if (write.value && !hw.power) hw.mute = undefined;
        hw.power = write.value;
        break;
      case 'source':
        hw.source = write.value;
        break;
      case 'volume':
        hw.volume = write.value;
        hw.mute = false;
        break;
      case 'mute':
        hw.mute = true;
        break;
    }
  }

  /** Forgets every mute it knew: a new connection cannot tell what happened while it was away. */
  forgetMutes(): void {
    for (const hw of this.known.values()) hw.mute = undefined;
  }

  /**
   * Takes in one zone info reply. `sync` reads (the first on a connection) only learn the hardware: the desired
   * state is then pushed over it. `poll` reads adopt changes nobody here asked for (keypads) and return the zone's
   * new state when there is one to report.
   */
  learn(info: ZoneInfo, channel: number, mode: 'sync' | 'poll'): ZoneState | undefined {
    const before = this.known.get(channel);
    const now: Wire = { power: info.power, source: info.source, volume: info.volume, mute: before?.mute };
    if (!before || mode === 'sync') {
      now.mute = undefined;
      this.known.set(channel, now);
      return undefined;
    }
    if (now.power && !before.power) now.mute = undefined;
    if (now.volume !== before.volume) now.mute = false; // the controller un-mutes on any volume change
    this.known.set(channel, now);
    const want = this.desired.get(channel);
    // A mute undone by someone else's volume change is news, and it replaces what the daemon wanted.
    let changed = before.mute === true && now.mute === false;
    if (changed && want?.mute !== undefined) want.mute = false;
    for (const key of ['power', 'source', 'volume'] as const) {
      if (now[key] === before[key]) continue;
      // A change still to be written (recorded while this read was on the wire) is newer than the read.
      if (want?.[key] !== undefined && want[key] !== before[key]) continue;
      changed = true;
      if (want?.[key] !== undefined) (want as Record<string, unknown>)[key] = now[key];
    }
    return changed ? this.reported(channel) : undefined;
  }

  /**
   * Checks a read-back after our writes (RNET acknowledges nothing). True when the hardware holds what the writes
   * said; otherwise the hardware values replace them, so nextWrite() sends what did not arrive again.
   */
  verify(info: ZoneInfo, channel: number): boolean {
    const hw = this.known.get(channel);
    if (!hw) return true;
    if (hw.power === info.power && hw.source === info.source && hw.volume === info.volume) return true;
    if (hw.volume !== info.volume || hw.power !== info.power) hw.mute = undefined;
    hw.power = info.power;
    hw.source = info.source;
    hw.volume = info.volume;
    return false;
  }

  /** Gives up on desired values the controller keeps ignoring: the hardware's become desired; returns the state. */
  adoptHardware(channel: number): ZoneState | undefined {
    const hw = this.known.get(channel);
    const want = this.desired.get(channel);
    if (!hw) return undefined;
    if (want) {
      if (want.power !== undefined) want.power = hw.power;
      if (want.source !== undefined) want.source = hw.source;
      if (want.volume !== undefined) want.volume = hw.volume;
    }
    return this.reported(channel);
  }

  /** A wall keypad toggled mute (heard on the bus): flips it, adopts it as desired, and returns the state to report. */
  toggledMute(channel: number): ZoneState | undefined {
    const hw = this.known.get(channel);
    if (!hw) return undefined;
    // From unknown, the likelier start is un-muted (every volume change and power-on un-mutes).
    hw.mute = !(hw.mute ?? false);
    const want = this.desired.get(channel);
    if (want?.mute !== undefined) want.mute = hw.mute;
    return this.reported(channel);
  }

  /** What a zone is (or is about to be, once pending writes land): hardware overlaid with pending desired values. */
  private reported(channel: number): ZoneState {
    const state = toState(this.known.get(channel)!);
    const want = this.desired.get(channel) ?? {};
    if (want.power !== undefined) state.power = want.power;
    if (want.mute !== undefined) state.muted = want.mute;
    if (want.volume !== undefined) state.volume = stepToVolume(want.volume, VOLUME_STEPS);
    if (want.source !== undefined) state.source = want.source;
    return state;
  }
}
