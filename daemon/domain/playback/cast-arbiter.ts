// Who holds one stream player's output: its MPD, one receiver (a cast), or an announcement. The source a person
// started last wins; an announcement pre-empts every source and gives the output back to the one that held it.
// Pure: the player's playback service feeds it what happened and carries out the actions it returns.
import type { ReceiverKindName } from './receiver-runtime.js';

/** The receivers a stream player can run. */
export type CastKind = ReceiverKindName;

/** Who the output belongs to when no announcement plays: a playing MPD, a cast, or nobody. */
export type OutputHolder = 'mpd' | CastKind | null;

/**
 * What the arbiter asks for, in order:
 * - pauseMpd: the player's MPD pauses (a cast took over; the playlist stays where it was);
 * - endCast: that receiver's cast ends or pauses, through its protocol where it has a way, and it loses the output;
 * - select: the output switch passes that receiver's PCM, or none (null: MPD writes the output itself).
 */
export type ArbiterAction =
  | { do: 'pauseMpd' }
  | { do: 'endCast'; kind: CastKind }
  | { do: 'select'; source: CastKind | null };

const isCast = (holder: OutputHolder): holder is CastKind => holder !== null && holder !== 'mpd';

export class CastArbiter {
  private owner: OutputHolder = null;
  private announcing = false;
  /** A cast began while an announcement played MPD: MPD, given back its playback afterwards, must pause again. */
  private pauseAfterAnnouncement = false;

  get holder(): OutputHolder {
    return this.owner;
  }

  /** Whether an announcement holds the output now. */
  get announcement(): boolean {
    return this.announcing;
  }

  /** A sender began to play through receiver `kind`: it takes the output from whoever had it. */
  castStarted(kind: CastKind): ArbiterAction[] {
    if (this.owner === kind) return [];
    // MPD plays the announcement now: it pauses once the announcement gave it its playback back, not before.
    const deferPause = this.announcing && this.owner === 'mpd';
    const actions = deferPause ? [] : this.leave(this.owner);
    if (deferPause) this.pauseAfterAnnouncement = true;
    this.owner = kind;
    if (!this.announcing) actions.push({ do: 'select', source: kind });
    return actions;
  }

  /** Receiver `kind` stopped playing (the sender stopped, left, or the receiver ended). */
  castEnded(kind: CastKind): ArbiterAction[] {
    if (this.owner !== kind) return [];
    this.owner = null;
    return this.announcing ? [] : [{ do: 'select', source: null }];
  }

  /** A person started the player's MPD (Play, a playlist, a resume): it takes the output from a cast. */
  mpdStarted(): ArbiterAction[] {
    if (this.owner === 'mpd') return [];
    const actions = this.leave(this.owner);
    const hadCast = isCast(this.owner);
    this.owner = 'mpd';
    this.pauseAfterAnnouncement = false;
    if (hadCast && !this.announcing) actions.push({ do: 'select', source: null });
    return actions;
  }

  /** The player's MPD paused, stopped or ended its queue: the output is nobody's until a source starts. */
  mpdStopped(): ArbiterAction[] {
    if (this.owner === 'mpd') this.owner = null;
    return [];
  }

  /** An announcement begins on this player: MPD plays it, so no cast's PCM passes meanwhile. */
  announcementStarted(): ArbiterAction[] {
    if (this.announcing) return [];
    this.announcing = true;
    return isCast(this.owner) ? [{ do: 'select', source: null }] : [];
  }

  /**
   * The announcement ended and MPD has its playback back (the announcement restores it): a cast that held the output,
   * or began meanwhile, gets it back; MPD pauses again if the cast began during the announcement.
   */
  announcementEnded(): ArbiterAction[] {
    if (!this.announcing) return [];
    this.announcing = false;
    const actions: ArbiterAction[] = [];
    // Even when that cast already ended: it paused the playlist, which a person then has to start again.
    if (this.pauseAfterAnnouncement) actions.push({ do: 'pauseMpd' });
    this.pauseAfterAnnouncement = false;
    if (isCast(this.owner)) actions.push({ do: 'select', source: this.owner });
    return actions;
  }

  /** What the holder must do to let go of the output to a new source. */
  private leave(holder: OutputHolder): ArbiterAction[] {
    if (holder === 'mpd') return [{ do: 'pauseMpd' }];
    if (isCast(holder)) return [{ do: 'endCast', kind: holder }];
    return [];
  }
}
