// The one ownership rule, written once for every family. Per zone: what the amplifier holds (the truth about the
// present), the daemon's intents (writes a caller asked for, each stamped with the time it was made), and what the
// daemon was last told. A change the daemon did not write supersedes every older intent for its attribute; newer
// intents stay and are written. No I/O, no timers: a driver asks what to write next and tells what it read.
import type {
  RememberedZone,
  SoundDescription,
  StepControl,
  ToneScale,
  ZoneFlag,
  ZoneFlags,
  ZoneState,
  ZoneTone,
} from '../driver.js';
import { stepToTone, stepToVolume, toneToStep, volumeToStep, ZONE_FLAGS } from '../driver.js';

/** What the daemon writes: the zone's state, then its tone (bass, treble, balance in native steps; loudness 0/1). */
export type Attribute = 'power' | 'source' | 'volume' | 'muted' | 'bass' | 'treble' | 'balance' | 'loudness';
const STATE: readonly Attribute[] = ['power', 'source', 'volume', 'muted'];
const TONE = ['bass', 'treble', 'balance', 'loudness'] as const;
const STEPPED: readonly StepControl[] = ['bass', 'treble', 'balance'];
const ATTRIBUTES: readonly Attribute[] = [...STATE, ...TONE];
/** What the amplifier reports and nobody writes: never an intent, only news. */
const FLAGS: readonly ZoneFlag[] = ZONE_FLAGS;
/** What a read may show that the daemon was never told of (after a start): taken silently. */
const OPTIONAL: ReadonlyArray<Attribute | ZoneFlag> = [...TONE, ...FLAGS];

/**
 * A zone as the wire carries it: power and muted 0/1, source 1..S, volume in device steps. Muted is undefined where
 * the amplifier cannot tell (RNET has no mute status); unknown is not news, and reads as un-muted.
 */
export interface Wire {
  power: number;
  source: number;
  volume: number;
  muted: number | undefined;
  /** Tone in native steps (loudness 0/1), and the read-only flags (0/1): undefined where the family has none. */
  bass?: number;
  treble?: number;
  balance?: number;
  loudness?: number;
  paging?: number;
  doNotDisturb?: number;
  party?: number;
}

/** What one read showed: the attributes and flags it carries. */
export type Fields = Partial<Record<Attribute | ZoneFlag, number>>;

/** What a change to report carries: the state, and the tone and flags of a family that has them. */
export interface Reported {
  state: ZoneState;
  tone?: ZoneTone;
  flags?: ZoneFlags;
}

/** The fields of a zone status line (Monoprice, Xantech), volume and tone in device steps. */
export function statusFields(status: {
  power: boolean;
  mute: boolean;
  volume: number;
  source: number;
  bass: number;
  treble: number;
  balance: number;
}): Fields {
  const { bass, treble, balance } = status;
  return {
    power: status.power ? 1 : 0,
    muted: status.mute ? 1 : 0,
    volume: status.volume,
    source: status.source,
    bass,
    treble,
    balance,
  };
}

/** 0/1 for a flag on the wire. */
export const bit = (on: boolean): number => (on ? 1 : 0);

/** When something happened: the clock's time, and a counter that orders what happened within one reading of it. */
export interface Stamp {
  at: number;
  seq: number;
}

const isBefore = (a: Stamp, b: Stamp): boolean => a.at < b.at || (a.at === b.at && a.seq < b.seq);

export interface Write {
  channel: number;
  attribute: Attribute;
  value: number;
}

/**
 * How a read is taken in. `first`: the zone's first read on this connection (or since its unit came back, or since
 * it powered on at our own command on amps that change then): adopted, and reported where it differs from what the
 * daemon was told, but no intent is superseded (intents made while unreachable are written over it). `update`: a
 * later read; every change is one nobody here wrote. `lost` (amps that acknowledge nothing): a read-back showing a
 * write did not arrive; the intents stay, to be written again.
 */
export type ReadKind = 'first' | 'update' | 'lost';

interface Intent {
  value: number;
  stamp: Stamp;
  /** Made while the zone was off or going off: it waits for power-on; one made while on is dropped when it goes off. */
  whileOff: boolean;
}

interface Zone {
  hardware: Wire | undefined;
  intents: Map<Attribute, Intent>;
  /** What the daemon was last told, asked for, or remembered at start. */
  told: Wire | undefined;
}

export interface BookSpec {
  volumeSteps: number;
  sourceCount: number;
  /** Undefined for a channel of this amplifier, else the complaint naming the valid ones. */
  checkChannel(channel: number): string | undefined;
  now(): number;
  /** The hardware takes sets while a zone is off (the simulated one); real amps are sent only power then. */
  setsWhileOff?: boolean;
  /** The family's tone controls and flags (driver.ts SoundDescription); none when left out. */
  sound?: SoundDescription;
}

export class ZoneBook {
  private readonly zones = new Map<number, Zone>();
  private seq = 0;

  constructor(protected readonly spec: BookSpec) {}

  stamp(): Stamp {
    return { at: this.spec.now(), seq: ++this.seq };
  }

  /** What the daemon last knew of a zone (start's state): what the amplifier's state is compared with. */
  remember(channel: number, state: RememberedZone): void {
    if (this.spec.checkChannel(channel)) return;
    this.zone(channel).told = { ...this.toWire(state), ...(state.tone && this.toneFields(state.tone)) };
  }

  /**
   * Records an intent; values the amp cannot take are dropped and the complaint returned for the log. Tone values
   * must have been checked (driver.ts checkTone): controls the family lacks are left out here.
   */
  record(channel: number, change: Partial<ZoneState> & ZoneTone): string | undefined {
    const wrong = this.spec.checkChannel(channel);
    if (wrong) return wrong;
    const zone = this.zone(channel);
    let complaint: string | undefined;
    const power = typeof change.power === 'boolean' ? (change.power ? 1 : 0) : undefined;
    const muted = typeof change.muted === 'boolean' ? (change.muted ? 1 : 0) : undefined;
    const volume =
      typeof change.volume === 'number' && Number.isFinite(change.volume)
        ? volumeToStep(change.volume, this.spec.volumeSteps)
        : undefined;
    let source: number | undefined;
    if (change.source !== undefined) {
      const { sourceCount } = this.spec;
      if (Number.isInteger(change.source) && change.source >= 1 && change.source <= sourceCount) source = change.source;
      else complaint = `source must be 1..${sourceCount}, got ${change.source} (zone ${channel})`;
    }
    // Field by field, without building the overlay or a map of fields: this runs for every zone of a volume change.
    const stamp = this.stamp();
    const off = this.poweredNow(zone) !== 1;
    if (power !== undefined) zone.intents.set('power', { value: power, stamp, whileOff: false });
    if (muted !== undefined) zone.intents.set('muted', { value: muted, stamp, whileOff: off });
    if (volume !== undefined) zone.intents.set('volume', { value: volume, stamp, whileOff: off });
    if (source !== undefined) zone.intents.set('source', { value: source, stamp, whileOff: off });
    const tone = this.toneFields(change);
    if (tone) {
      for (const attribute of TONE) {
        const value = tone[attribute];
        if (value !== undefined) zone.intents.set(attribute, { value, stamp, whileOff: off });
      }
    }
    // The daemon knows what it asked for: that is no news to report back.
    // Written in place: no one else holds a zone's told state, and this runs for every zone of a volume change.
    const told = zone.told;
    if (told) {
      if (power !== undefined) told.power = power;
      if (source !== undefined) told.source = source;
      if (volume !== undefined) told.volume = volume;
      if (muted !== undefined) told.muted = muted;
      if (tone) Object.assign(told, tone);
    } else if (zone.hardware) zone.told = this.overlay(zone);
    return complaint;
  }

  hardware(channel: number): ZoneState | undefined {
    const wire = this.zones.get(channel)?.hardware;
    return wire && this.state(wire);
  }

  /** The tone last read from the hardware, on the shared scale (the controls the family has). */
  hardwareTone(channel: number): ZoneTone | undefined {
    const wire = this.zones.get(channel)?.hardware;
    return wire && this.toneOf(wire);
  }

  /** The flags last read from the hardware (those the family reports). */
  hardwareFlags(channel: number): ZoneFlags | undefined {
    const wire = this.zones.get(channel)?.hardware;
    return wire && this.flagsOf(wire);
  }

  /** Whether the hardware, as the book has it, holds every attribute of a read (a read-back matches the writes). */
  shows(channel: number, read: Fields): boolean {
    const hw = this.zones.get(channel)?.hardware;
    return (
      hw === undefined ||
      ATTRIBUTES.every((attribute) => read[attribute] === undefined || hw[attribute] === read[attribute])
    );
  }

  hasIntents(channel: number): boolean {
    return (this.zones.get(channel)?.intents.size ?? 0) > 0;
  }

  /**
   * The next write among `channels` (zones read on this connection whose unit answers, in that order), skipping
   * `held` ones. Chosen when the line is free, so a burst of intents goes out as its latest value.
   */
  nextWrite(channels: Iterable<number>, held: ReadonlySet<number>): Write | undefined {
    for (const channel of channels) {
      const zone = this.zones.get(channel);
      if (!zone?.hardware || zone.intents.size === 0 || held.has(channel)) continue;
      const write = this.order(channel, zone.hardware, (attribute) => zone.intents.get(attribute)?.value);
      if (write) return write;
    }
    return undefined;
  }

  /** The amplifier took the write: it now holds it, and the intent it carried is fulfilled. Returns a state to report. */
  confirm(write: Write): Reported | undefined {
    const zone = this.zone(write.channel);
    if (zone.hardware) this.effect(zone.hardware, write);
    if (zone.intents.get(write.attribute)?.value === write.value) zone.intents.delete(write.attribute);
    return this.report(zone);
  }

  /**
   * The write went out and nothing acknowledges it (RNET): the hardware is taken to hold it, and the intent stays
   * until a read-back shows it.
   */
  sent(write: Write): void {
    const zone = this.zone(write.channel);
    if (zone.hardware) this.effect(zone.hardware, write);
  }

  /** The amplifier keeps refusing or ignoring these intents: given up, and the zone's own state reported. */
  giveUp(channel: number, attributes: readonly Attribute[] = ATTRIBUTES): Reported | undefined {
    const zone = this.zone(channel);
    for (const attribute of attributes) zone.intents.delete(attribute);
    return this.report(zone);
  }

  /**
   * Takes in what one read (or report) showed of a zone. `stamp` is when the read was sent (a report: when it came):
   * a change it shows supersedes the intents made before then, and it confirms those it shows fulfilled. Returns
   * the state to report when it differs from what the daemon was told.
   */
  learn(channel: number, read: Fields, kind: ReadKind, stamp: Stamp): Reported | undefined {
    const zone = this.zone(channel);
    const was = zone.hardware;
    const now = this.merge(kind === 'first' ? undefined : was, read, kind);
    zone.hardware = now;
    if (kind === 'update' && was) {
      for (const attribute of ATTRIBUTES) {
        if (now[attribute] === undefined || now[attribute] === was[attribute]) continue;
        const intent = zone.intents.get(attribute);
        if (intent && isBefore(intent.stamp, stamp)) zone.intents.delete(attribute);
      }
    }
    if (kind === 'first') {
      for (const [attribute, value] of Object.entries(this.unread(now, zone.told)) as Array<[Attribute, number]>) {
        if (!zone.intents.has(attribute)) zone.intents.set(attribute, { value, stamp: this.stamp(), whileOff: false });
      }
    }
    this.fulfil(zone, stamp);
    return this.report(zone);
  }

  /** The unit stopped answering: writes to the zone are not sent, so its intents go. Returns a state to report. */
  dropIntents(channel: number): Reported | undefined {
    const zone = this.zones.get(channel);
    if (!zone || zone.intents.size === 0) return undefined;
    zone.intents.clear();
    return this.report(zone);
  }

  // ---- what an amplifier family may do differently (RNET: its mute model) ----------------------------------------

  /**
   * The next write for one zone, in the order the amplifier needs. Amps of the status-line kind ignore sets other
   * than power to an off zone, so those are sent only while the zone is on: power on therefore goes first, power
   * off last, and an intent for a zone that stays off waits until it is on. Source goes before volume and mute, so
   * an unmuted zone never plays the previous source and a volume reset by a source switch (seen on one MRC88) is
   * overwritten by the volume that follows. A mute goes before both: a zone asked to go silent is never heard while
   * its source or volume changes. Tone follows, once the zone plays what it should at the volume it should.
   */
  protected order(channel: number, hw: Wire, intent: (attribute: Attribute) => number | undefined): Write | undefined {
    const want = (attribute: Attribute): number | undefined => {
      const value = intent(attribute);
      return value !== undefined && value !== hw[attribute] ? value : undefined;
    };
    if (hw.power === 1 || this.spec.setsWhileOff) {
      if (want('muted') === 1) return { channel, attribute: 'muted', value: 1 };
      for (const attribute of ['source', 'volume', 'muted', ...TONE] as const) {
        const value = want(attribute);
        if (value !== undefined) return { channel, attribute, value };
      }
    }
    const power = want('power');
    return power === undefined ? undefined : { channel, attribute: 'power', value: power };
  }

  /** What the hardware holds once `write` went through. */
  protected effect(hw: Wire, write: Write): void {
    hw[write.attribute] = write.value;
  }

  /** The hardware after a read, from what it held before (undefined: a first read). */
  protected merge(before: Wire | undefined, read: Fields, _kind: ReadKind): Wire {
    return { ...(before ?? { power: 0, source: 1, volume: 0, muted: undefined }), ...read };
  }

  /** At a first read: what to write again of what no read can show, from what the daemon was told (RNET's mute). */
  protected unread(_hw: Wire, _told: Wire | undefined): Fields {
    return {};
  }

  // ---- the rule -----------------------------------------------------------------------------------------------

  /**
   * Intents a read settles: one made while the zone was on is dropped once the zone is seen off (unless it is being
   * powered on); one the read shows done is fulfilled, provided the read was sent after it was made.
   */
  private fulfil(zone: Zone, stamp: Stamp): void {
    const hw = zone.hardware!;
    const on = hw.power === 1;
    const poweringOn = zone.intents.get('power')?.value === 1;
    for (const [attribute, intent] of zone.intents) {
      if (attribute !== 'power' && !on && !intent.whileOff && !poweringOn) {
        zone.intents.delete(attribute);
      } else if (isBefore(intent.stamp, stamp) && hw[attribute] === intent.value && (attribute === 'power' || on)) {
        zone.intents.delete(attribute);
      }
    }
  }

  /** Power as the overlay has it (the intent, else what is known), undefined when nothing is known of the zone. */
  private poweredNow(zone: Zone): number | undefined {
    const base = zone.hardware ?? zone.told;
    if (!base) return undefined;
    return zone.intents.get('power')?.value ?? base.power;
  }

  /** What the zone is about to be: the hardware (or, before any read, what the daemon was told) with the intents on it. */
  private overlay(zone: Zone): Wire | undefined {
    const base = zone.hardware ?? zone.told;
    if (!base) return undefined;
    const wire = { ...base };
    for (const [attribute, intent] of zone.intents) wire[attribute] = intent.value;
    return wire;
  }

  /**
   * The state to report when it differs from what the daemon was told (silently taken when it was told nothing). A
   * tone control or flag the daemon was never told of (the first read after a start) is taken silently too.
   */
  private report(zone: Zone): Reported | undefined {
    const now = this.overlay(zone);
    if (!now) return undefined;
    const told = zone.told;
    if (told) {
      const differs = (key: Attribute | ZoneFlag): boolean => now[key] !== undefined && now[key] !== told[key];
      const news = STATE.some(differs) || OPTIONAL.some((key) => told[key] !== undefined && differs(key));
      if (!news) {
        for (const key of OPTIONAL) if (told[key] === undefined && now[key] !== undefined) told[key] = now[key];
        return undefined;
      }
    }
    // An unknown mute reads as un-muted, as in every state reported.
    zone.told = { ...now, muted: now.muted ?? 0 };
    return told && this.reported(zone.told);
  }

  private reported(wire: Wire): Reported {
    const reported: Reported = { state: this.state(wire) };
    if (this.spec.sound) {
      reported.tone = this.toneOf(wire);
      reported.flags = this.flagsOf(wire);
    }
    return reported;
  }

  private state(wire: Wire): ZoneState {
    return {
      power: wire.power === 1,
      muted: wire.muted === 1,
      volume: stepToVolume(wire.volume, this.spec.volumeSteps),
      source: wire.source,
    };
  }

  /** A stepped control's native range, for a family that has it. */
  private scale(control: StepControl): ToneScale | undefined {
    const has = this.spec.sound?.controls[control];
    return has && 'up' in has ? has : undefined;
  }

  private toneOf(wire: Wire): ZoneTone {
    const tone: ZoneTone = {};
    for (const control of STEPPED) {
      const scale = this.scale(control);
      const step = wire[control];
      if (scale && step !== undefined) tone[control] = stepToTone(step, scale);
    }
    if (this.spec.sound?.controls.loudness === true && wire.loudness !== undefined) tone.loudness = wire.loudness === 1;
    return tone;
  }

  private flagsOf(wire: Wire): ZoneFlags {
    const flags: ZoneFlags = {};
    for (const flag of FLAGS)
      if (this.spec.sound?.flags[flag] === true && wire[flag] !== undefined) flags[flag] = wire[flag] === 1;
    return flags;
  }

  /** A tone change as native steps, the controls the family lacks left out; undefined when it carries none. */
  private toneFields(change: ZoneTone): Fields | undefined {
    if (
      change.bass === undefined &&
      change.treble === undefined &&
      change.balance === undefined &&
      change.loudness === undefined
    )
      return undefined;
    const fields: Fields = {};
    for (const control of STEPPED) {
      const scale = this.scale(control);
      const value = change[control];
      if (scale && typeof value === 'number' && Number.isFinite(value)) fields[control] = toneToStep(value, scale);
    }
    if (this.spec.sound?.controls.loudness === true && typeof change.loudness === 'boolean')
      fields.loudness = bit(change.loudness);
    return fields;
  }

  private toWire(state: ZoneState): Wire {
    return {
      power: state.power ? 1 : 0,
      muted: state.muted ? 1 : 0,
      volume: volumeToStep(state.volume, this.spec.volumeSteps),
      source: state.source,
    };
  }

  private zone(channel: number): Zone {
    let zone = this.zones.get(channel);
    if (!zone) {
      zone = { hardware: undefined, intents: new Map(), told: undefined };
      this.zones.set(channel, zone);
    }
    return zone;
  }
}
