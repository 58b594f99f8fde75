import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { Socket } from 'node:net';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import {
  AlsaOutput,
  type CastMetadata,
  castFifo,
  echoOf,
  fifoOutput,
  findAplay,
  findProgram,
  makeFifo,
  OutputSwitch,
  playerFiles,
  RECEIVER_KIND_MODULES,
  type ReceiverEvent,
  type ReceiverKind,
  ReceiverSupervisor,
  readFifo,
  type SourceCounts,
  type SupervisorTiming,
} from '../../../drivers/index.js';
import { PCM_FORMAT } from '../../../drivers/playback.js';
import type { Logger } from '../../log.js';
import { type Clock, type StreamOutput, systemClock } from '../shared/index.js';
import { type ArbiterAction, CastArbiter, type OutputHolder } from './cast-arbiter.js';
import {
  RECEIVER_KINDS,
  type ReceiverKindName,
  type ReceiverRunState,
  type ReceiverRuntime,
  STOPPED_RECEIVER,
  type WantedReceiver,
} from './receiver-runtime.js';

/** Levels given to a sender and not reported back yet, kept to know their echoes (a long drag gives more). */
const SENT_KEPT = 16;
/** Bytes of PCM a second: the pace at which a receiver that does not hold the output is read and dropped. */
const PCM_BYTES_PER_SECOND = PCM_FORMAT.rate * PCM_FORMAT.channels * (PCM_FORMAT.bits / 8);

export interface CastingDeps {
  /** The daemon's state folder: each receiver's private folder is made under it. */
  stateDir: string;
  /** The address the daemon serves on, where a receiver that listens binds, and its interface. */
  listenHost: string;
  listenInterface?: string;
  /** A player's name and output as stored now; undefined once it is gone. */
  player(playerId: string): { name: string; output: StreamOutput | null } | undefined;
  /** Pauses the player's MPD if it plays; resolves once it no longer writes the output. */
  pauseMpd(playerId: string): Promise<void>;
  /** Sets the player's group volume (0..1): its zones, each within its maxVolume, as every path does. */
  setGroupVolume(playerId: string, level: number): Promise<void>;
  /**
   * An ALSA player's MPD plays into `output` (its private FIFO) while receivers run for it, and into its device again
   * once given null; resolves once the MPD that held the device let go of it. Without it, MPD is left as it is.
   */
  routeMpd?(playerId: string, output: StreamOutput | null): Promise<void>;
  /** A receiver's state() changed (or given later: attachListener). */
  onChange?(playerId: string, kind: ReceiverKindName): void;
  /** What castView() shows for the player changed: a cast took or left the output, or its titles changed. */
  onNowPlaying?(playerId: string): void;
  /** Who holds the player's output changed (MPD, a receiver kind, or nobody), told once the change was carried out. */
  onHolder?(playerId: string, holder: OutputHolder): void;
  clock?: Clock;
  log?: Logger;
  /** Tests: the kinds' modules, the folders programs are looked up in, a command to run them through (a netns). */
  kinds?: Partial<Record<ReceiverKindName, ReceiverKind>>;
  searchPath?: string;
  prefix?: string[];
  timing?: Partial<SupervisorTiming>;
  /** Added to the receivers' environment (AirPlay: the D-Bus system bus its Avahi listens on). */
  env?: Record<string, string>;
}

/** The source holding a player's output: its MPD, a receiver's cast, an announcement, or nobody. */
export type OutputSource = 'mpd' | ReceiverKindName | 'announcement' | null;

/** A cast holding a player's output, as its playback shows it. */
export interface CastView {
  source: ReceiverKindName;
  state: 'playing' | 'paused';
  title: string | null;
  artist: string | null;
  album: string | null;
  /** The version of the cover art its sender gave (changes with the image), or null without one. */
  artwork: string | null;
}

/** A cast's cover art as its sender gave it, and its version (a short hash of the bytes). */
export interface CastArtwork {
  mime: string;
  data: Buffer;
  version: string;
}

/** Each image's version, computed once per image the sender gave. */
const artworkVersions = new WeakMap<Buffer, string>();
function artworkOf(artwork: CastMetadata['artwork']): CastArtwork | undefined {
  if (!artwork) return undefined;
  let version = artworkVersions.get(artwork.data);
  if (version === undefined) {
    version = createHash('sha256').update(artwork.data).digest('base64url').slice(0, 16);
    artworkVersions.set(artwork.data, version);
  }
  return { mime: artwork.mime, data: artwork.data, version };
}

/** One receiver running for a player. */
interface Running {
  kind: ReceiverKindName;
  server: string | null;
  supervisor: ReceiverSupervisor;
  /** The PCM pipe of its current run, a source of the player's switch. */
  pcm: Readable | undefined;
  /** The arbiter gave the output to another source: its cast reads as idle until it reports a state again. */
  ended: boolean;
  /** The sender's volume last reported, and the level last set from it (a report equal to that is an echo). */
  heard: number | null;
  applied: number | null;
  /**
   * The levels given to the sender (SenderRemote) whose report has not come back yet, oldest first, each as the
   * sender will report it: such a report is an echo. A dragged slider gives several before the first comes back.
   */
  sent: number[];
  off: () => void;
}

/**
 * A player's output while receivers run for it: its FIFO, or, for an ALSA device, an aplay the daemon runs on it with
 * the player's MPD as one more source (`mpd`, read from its private FIFO).
 */
interface Output {
  sink: Writable;
  switch: OutputSwitch;
  /** The output receivers are started with: a FIFO (their PCM comes on a pipe, never written there themselves). */
  receiverOutput: StreamOutput & { kind: 'fifo' };
  alsa?: { aplay: AlsaOutput; mpd: Socket };
}

/** Everything about one player's casting; its work runs one step at a time on `queue`. */
interface PlayerCasting {
  id: string;
  arbiter: CastArbiter;
  running: Map<ReceiverKindName, Running>;
  /** Why a wanted receiver does not run: its program missing, an output it cannot play to, a start that failed. */
  problems: Map<ReceiverKindName, string>;
  wanted: readonly WantedReceiver[];
  /** The name and output the running receivers were started with: a change restarts them. */
  startedAs: string | undefined;
  out: Output | undefined;
  /** state() as last told to onChange, per kind; castView() as last told to onNowPlaying. */
  told: Map<ReceiverKindName, string>;
  toldView: string;
  /** The output's holder as last told to onHolder. */
  toldHolder: OutputHolder;
  queue: Promise<void>;
}

/**
 * The receivers' runtime (ReceiverRuntime): the API's switches say what runs; the transport and the announcements
 * say when MPD or an announcement takes the output (mpdStarted, announcementStarted, …). A player whose output is
 * an ALSA device has it held by the daemon (one aplay) while receivers run for it, its MPD playing into a private
 * FIFO that is one more source of the switch.
 */
export class Casting implements ReceiverRuntime {
  private readonly players = new Map<string, PlayerCasting>();
  private readonly clock: Clock;
  private readonly kinds: Record<ReceiverKindName, ReceiverKind>;
  private closed = false;

  /** Told when a receiver's state() changed: the deps' onChange, or one attached once its owner exists. */
  private onChange: ((playerId: string, kind: ReceiverKindName) => void) | undefined;

  constructor(private readonly deps: CastingDeps) {
    this.onChange = deps.onChange?.bind(deps);
    this.clock = deps.clock ?? systemClock;
    this.kinds = { ...RECEIVER_KIND_MODULES, ...deps.kinds };
  }

  /** The receivers' switches, built after this runtime (they are handed it), hear its state changes from now on. */
  attachListener(listener: (playerId: string, kind: ReceiverKindName) => void): void {
    this.onChange = listener;
  }

  apply(playerId: string, wanted: readonly WantedReceiver[]): Promise<void> {
    const player = this.player(playerId);
    return this.step(player, () => {
      player.wanted = this.closed ? [] : wanted;
      return this.reconcile(player);
    });
  }

  /** The player was renamed or given another output (player.updated): its receivers restart under the new ones. */
  playerChanged(playerId: string): Promise<void> {
    const player = this.players.get(playerId);
    return player ? this.step(player, () => this.reconcile(player)) : Promise.resolve();
  }

  state(playerId: string, kind: ReceiverKindName): ReceiverRunState {
    const player = this.players.get(playerId);
    const problem = player?.problems.get(kind);
    if (problem !== undefined) return { ...STOPPED_RECEIVER, detail: problem };
    const running = player?.running.get(kind);
    if (!running) return STOPPED_RECEIVER;
    const { supervisor } = running;
    return {
      phase: supervisor.phase,
      cast: running.ended ? 'idle' : supervisor.status().state,
      // An ALSA player's receivers play nowhere while the daemon's aplay is down: each says why.
      detail: supervisor.reason ?? player?.out?.alsa?.aplay.reason ?? null,
      ...(supervisor.variant === null ? {} : { variant: supervisor.variant }),
    };
  }

  missing(kind: ReceiverKindName): string | undefined {
    try {
      findProgram(this.kinds[kind], this.deps.searchPath);
      return undefined;
    } catch (err) {
      return (err as Error).message;
    }
  }

  /** The source holding the player's output now (what the playback shows of a cast is castView's). */
  holder(playerId: string): OutputSource {
    const player = this.players.get(playerId);
    if (!player) return null;
    return player.arbiter.announcement ? 'announcement' : player.arbiter.holder;
  }

  /** The cast holding the player's output now, if one does (none while an announcement holds it). */
  castView(playerId: string): CastView | undefined {
    const player = this.players.get(playerId);
    const holder = player?.arbiter.holder;
    if (!player || player.arbiter.announcement || holder === null || holder === undefined || holder === 'mpd')
      return undefined;
    const running = player.running.get(holder);
    if (!running || running.ended) return undefined;
    const status = running.supervisor.status();
    if (status.state === 'idle') return undefined;
    const { title, artist, album } = status.metadata;
    const artwork = artworkOf(status.metadata.artwork)?.version ?? null;
    return { source: holder, state: status.state, title, artist, album, artwork };
  }

  /** The cover art of the cast castView() shows, if its sender gave one. */
  castArtwork(playerId: string): CastArtwork | undefined {
    const view = this.castView(playerId);
    if (!view) return undefined;
    return artworkOf(
      this.players.get(playerId)?.running.get(view.source)?.supervisor.status().metadata.artwork ?? null,
    );
  }

  /**
   * A person paused or stopped the player while a cast held its output: the cast loses it (its PCM is dropped, its
   * sender paused where the protocol allows) and reads as idle until its sender plays again. Answers whether one held
   * it.
   */
  async endCast(playerId: string): Promise<boolean> {
    const player = this.players.get(playerId);
    if (!player) return false;
    let ended = false;
    await this.step(player, () => {
      const holder = player.arbiter.holder;
      if (holder === null || holder === 'mpd') return;
      ended = true;
      return this.carryOut(player, [...player.arbiter.castEnded(holder), { do: 'endCast', kind: holder }]);
    });
    return ended;
  }

  /** Bytes of a receiver's PCM written to the player's output and read in all (the rest was dropped). */
  pcmCounts(playerId: string, kind: ReceiverKindName | 'mpd'): SourceCounts | undefined {
    return this.players.get(playerId)?.out?.switch.counts(kind);
  }

  /** The aplay holding an ALSA player's device while its receivers run: its pid, the bytes it took, why it is down. */
  deviceOutput(playerId: string): { pid: number | undefined; written: number; reason: string | null } | undefined {
    const aplay = this.players.get(playerId)?.out?.alsa?.aplay;
    return aplay && { pid: aplay.pid, written: aplay.written, reason: aplay.reason };
  }

  /** A person started the player's MPD: a cast that held the output ends (or is dropped) and MPD has it. */
  mpdStarted(playerId: string): Promise<void> {
    return this.arbitrate(playerId, (arbiter) => arbiter.mpdStarted());
  }

  /** The player's MPD paused or stopped: the output is nobody's until a source starts. */
  mpdStopped(playerId: string): Promise<void> {
    return this.arbitrate(playerId, (arbiter) => arbiter.mpdStopped());
  }

  /** An announcement begins on the player (MPD plays it): no cast's PCM passes until it ends. */
  announcementStarted(playerId: string): Promise<void> {
    return this.arbitrate(playerId, (arbiter) => arbiter.announcementStarted());
  }

  /** The announcement ended and gave MPD its playback back: a cast that held the output has it again. */
  announcementEnded(playerId: string): Promise<void> {
    return this.arbitrate(playerId, (arbiter) => arbiter.announcementEnded());
  }

  /**
   * The player's group volume changed (player.volumeChanged: the dashboard, a keypad, Home Assistant, or the sender's
   * own volume set on the rooms): a cast holding the output whose protocol allows it gives it to its sender, unless
   * the sender has that volume already. Answers whether it was given.
   */
  groupVolumeChanged(playerId: string, level: number): boolean {
    const player = this.players.get(playerId);
    const holder = player?.arbiter.holder;
    if (!player || player.arbiter.announcement || holder === null || holder === undefined || holder === 'mpd')
      return false;
    const running = player.running.get(holder);
    const kind = this.kinds[holder];
    if (!running || running.ended || !kind.remote) return false;
    const echo = echoOf(kind, level);
    if (echo === running.heard) return false;
    if (!running.supervisor.sendVolume(level)) return false;
    running.sent.push(echo);
    if (running.sent.length > SENT_KEPT) running.sent.shift();
    return true;
  }

  /** Stops every receiver and lets go of every output (the daemon stops). */
  async stop(): Promise<void> {
    this.closed = true;
    await Promise.all(
      [...this.players.values()].map((player) =>
        this.step(player, () => {
          player.wanted = [];
          return this.reconcile(player);
        }),
      ),
    );
  }

  private player(playerId: string): PlayerCasting {
    let player = this.players.get(playerId);
    if (!player) {
      const stopped = JSON.stringify(STOPPED_RECEIVER);
      player = {
        id: playerId,
        arbiter: new CastArbiter(),
        running: new Map(),
        problems: new Map(),
        wanted: [],
        startedAs: undefined,
        out: undefined,
        told: new Map(RECEIVER_KINDS.map((kind) => [kind, stopped])),
        toldView: 'null',
        toldHolder: null,
        queue: Promise.resolve(),
      };
      this.players.set(playerId, player);
    }
    return player;
  }

  /** Runs `work` after the player's earlier work, then tells onChange what changed; a failure is logged. */
  private step(player: PlayerCasting, work: () => Promise<void> | void): Promise<void> {
    const next = player.queue.then(async () => {
      try {
        await work();
      } catch (err) {
        this.deps.log?.error({ player: player.id, err: (err as Error).message }, 'casting failed');
      }
      this.tell(player);
    });
    player.queue = next;
    return next;
  }

  private arbitrate(playerId: string, input: (arbiter: CastArbiter) => ArbiterAction[]): Promise<void> {
    const player = this.player(playerId);
    return this.step(player, () => this.carryOut(player, input(player.arbiter)));
  }

  private tell(player: PlayerCasting): void {
    const holder = player.arbiter.holder;
    if (holder !== player.toldHolder) {
      player.toldHolder = holder;
      try {
        this.deps.onHolder?.(player.id, holder);
      } catch (err) {
        this.deps.log?.error({ player: player.id, err: (err as Error).message }, 'an output holder listener threw');
      }
    }
    const view = JSON.stringify(this.castView(player.id) ?? null);
    if (view !== player.toldView) {
      player.toldView = view;
      try {
        this.deps.onNowPlaying?.(player.id);
      } catch (err) {
        this.deps.log?.error({ player: player.id, err: (err as Error).message }, 'a now-playing listener threw');
      }
    }
    for (const kind of RECEIVER_KINDS) {
      const now = JSON.stringify(this.state(player.id, kind));
      if (player.told.get(kind) === now) continue;
      player.told.set(kind, now);
      try {
        this.onChange?.(player.id, kind);
      } catch (err) {
        this.deps.log?.error({ player: player.id, err: (err as Error).message }, 'a receiver change listener threw');
      }
    }
  }

  /** Starts and stops receivers until those running are the wanted ones, under the player's name and output now. */
  private async reconcile(player: PlayerCasting): Promise<void> {
    const info = this.deps.player(player.id);
    const startedAs = info && JSON.stringify([info.name, info.output]);
    const restart = startedAs !== player.startedAs;
    const wanted = new Map(info ? player.wanted.map((w) => [w.kind, w]) : []);
    player.problems.clear();
    for (const running of [...player.running.values()]) {
      const still = wanted.get(running.kind);
      if (restart || !still || still.server !== running.server) await this.stopOne(player, running);
    }
    player.startedAs = startedAs;
    // The output may be another FIFO or device now: it is opened again below.
    if (restart || wanted.size === 0 || !info) await this.closeOutput(player);
    if (wanted.size === 0 || !info) return;
    const output = info.output;
    if (output === null || output.kind === 'null') {
      const detail =
        "receivers play into the player's output, and this player has none (null): give it a FIFO or an ALSA device to cast to it";
      for (const kind of wanted.keys()) player.problems.set(kind, detail);
      return;
    }
    if (!player.out) {
      try {
        player.out =
          output.kind === 'alsa' ? await this.openAlsa(player, output.device) : this.openFifo(player, output);
      } catch (err) {
        for (const kind of wanted.keys()) player.problems.set(kind, (err as Error).message);
        return;
      }
    }
    for (const want of wanted.values()) {
      if (player.running.has(want.kind)) continue;
      await this.startOne(player, info.name, player.out.receiverOutput, want);
    }
  }

  /** The player's FIFO, written by the switch (and by its MPD, which the arbiter pauses before a cast writes). */
  private openFifo(player: PlayerCasting, output: StreamOutput & { kind: 'fifo' }): Output {
    const sink = fifoOutput(makeFifo(output.path, this.deps.stateDir));
    sink.on('error', (err) =>
      this.deps.log?.warn({ player: player.id, err: err.message }, "writing the player's FIFO failed"),
    );
    return { sink, switch: new OutputSwitch(sink, this.pace()), receiverOutput: output };
  }

  /**
   * The player's ALSA device, held by the daemon while receivers run (no two programs may open it, and an MPD that
   * is paused may keep it): its MPD is moved to its private FIFO first, which then is the switch's `mpd` source,
   * passed whenever no cast holds the output; aplay plays what the switch writes.
   */
  private async openAlsa(player: PlayerCasting, device: string): Promise<Output> {
    const log = this.deps.log;
    // aplay missing changes nothing: MPD keeps the device.
    findAplay(this.deps.searchPath);
    const fifo = castFifo(playerFiles(this.deps.stateDir, player.id));
    mkdirSync(path.dirname(fifo), { recursive: true, mode: 0o700 });
    const mpd = readFifo(fifo);
    mpd.on('error', (err) => log?.warn({ player: player.id, err: err.message }, "reading the player's MPD failed"));
    const aplay = new AlsaOutput({
      device,
      clock: this.clock,
      log: (level, msg, fields) => log?.[level]({ player: player.id, ...fields }, msg),
      ...(this.deps.searchPath === undefined ? {} : { searchPath: this.deps.searchPath }),
      ...(this.deps.timing ? { timing: this.deps.timing } : {}),
      onChange: () => void this.step(player, () => undefined),
    });
    try {
      await this.deps.routeMpd?.(player.id, { kind: 'fifo', path: fifo });
      aplay.start();
    } catch (err) {
      mpd.destroy();
      await this.deps.routeMpd?.(player.id, null);
      throw err;
    }
    const out: Output = {
      sink: aplay.sink,
      switch: new OutputSwitch(aplay.sink, this.pace()),
      receiverOutput: { kind: 'fifo', path: fifo },
      alsa: { aplay, mpd },
    };
    out.switch.add('mpd', mpd);
    this.select(out, null);
    return out;
  }

  /** A source that does not hold the output is read and dropped at the PCM's own pace. */
  private pace() {
    return { bytesPerSecond: PCM_BYTES_PER_SECOND, clock: this.clock };
  }

  /** The switch passes `source`; none named, it passes the player's MPD where MPD is one of its sources (ALSA). */
  private select(out: Output, source: string | null): void {
    const present = source !== null && out.switch.counts(source) !== undefined;
    out.switch.select(present ? source : out.alsa ? 'mpd' : null);
  }

  private async startOne(
    player: PlayerCasting,
    name: string,
    output: Output['receiverOutput'],
    want: WantedReceiver,
  ): Promise<void> {
    const { kind } = want;
    const log = this.deps.log;
    const running: Running = {
      kind,
      server: want.server,
      supervisor: new ReceiverSupervisor({
        kind: this.kinds[kind],
        stateDir: this.deps.stateDir,
        settings: {
          playerId: player.id,
          name,
          output,
          listenHost: this.deps.listenHost,
          ...(this.deps.listenInterface === undefined ? {} : { listenInterface: this.deps.listenInterface }),
          ...(want.server === null ? {} : { server: want.server }),
        },
        clock: this.clock,
        log: (level, msg, fields) => log?.[level]({ player: player.id, receiver: kind, ...fields }, msg),
        ...(this.deps.timing ? { timing: this.deps.timing } : {}),
        ...(this.deps.searchPath === undefined ? {} : { searchPath: this.deps.searchPath }),
        ...(this.deps.prefix ? { prefix: this.deps.prefix } : {}),
        ...(this.deps.env ? { env: this.deps.env } : {}),
        pcm: (stream) => this.takePcm(player, running, stream),
      }),
      pcm: undefined,
      ended: false,
      heard: null,
      applied: null,
      sent: [],
      off: () => undefined,
    };
    running.off = running.supervisor.onEvent(
      (event) => void this.step(player, () => this.heard(player, running, event)),
    );
    player.running.set(kind, running);
    try {
      await running.supervisor.start();
    } catch (err) {
      running.off();
      player.running.delete(kind);
      player.problems.set(kind, (err as Error).message);
    }
  }

  /** Stops a receiver; the output goes to nobody if its cast held it. */
  private async stopOne(player: PlayerCasting, running: Running): Promise<void> {
    running.off();
    const stopped = running.supervisor.stop();
    // Its pipe is let go of at once: a receiver waiting to write into a full output (nobody reads the FIFO) would
    // otherwise not see its SIGTERM, and be killed only after the stop bound.
    this.dropPcm(player, running);
    await stopped;
    player.running.delete(running.kind);
    await this.carryOut(player, player.arbiter.castEnded(running.kind));
  }

  /** A run's PCM pipe becomes the receiver's source on the player's switch, in place of the last run's. */
  private takePcm(player: PlayerCasting, running: Running, stream: Readable): void {
    this.dropPcm(player, running);
    running.pcm = stream;
    stream.on('error', (err) =>
      this.deps.log?.debug({ player: player.id, receiver: running.kind, err: err.message }, 'receiver PCM pipe'),
    );
    if (player.out) player.out.switch.add(running.kind, stream);
    else stream.destroy();
  }

  private dropPcm(player: PlayerCasting, running: Running): void {
    if (!running.pcm) return;
    player.out?.switch.remove(running.kind);
    running.pcm.destroy();
    running.pcm = undefined;
  }

  /**
   * No receiver runs: the player's FIFO is let go of; an ALSA device is let go of by aplay before the player's MPD
   * is given it back (not when the daemon stops: its MPD stops too).
   */
  private async closeOutput(player: PlayerCasting): Promise<void> {
    const out = player.out;
    player.out = undefined;
    if (!out) return;
    if (!out.alsa) {
      out.sink.destroy();
      return;
    }
    await out.alsa.aplay.stop();
    out.switch.remove('mpd');
    out.alsa.mpd.destroy();
    if (!this.closed) await this.deps.routeMpd?.(player.id, null);
  }

  private async heard(player: PlayerCasting, running: Running, event: ReceiverEvent): Promise<void> {
    if (player.running.get(running.kind) !== running) return;
    if (event.type === 'state') {
      running.ended = false;
      if (event.state === 'playing') {
        const actions = player.arbiter.castStarted(running.kind);
        // MPD is asked to pause before any cast takes the output, not only when the arbiter saw it start: a
        // playlist that began by a path that did not say so (a restored queue) never plays under a cast either.
        const takes = actions.some((action) => action.do === 'select' && action.source === running.kind);
        if (takes && !actions.some((action) => action.do === 'pauseMpd')) actions.unshift({ do: 'pauseMpd' });
        await this.carryOut(player, actions);
        await this.applyVolume(player, running);
      } else if (event.state === 'idle') {
        await this.carryOut(player, player.arbiter.castEnded(running.kind));
      }
    } else if (event.type === 'volume') {
      // Reports come in the order the levels were given: the ones before an echo will not come any more.
      const at = running.sent.indexOf(event.volume);
      const echo = at >= 0;
      running.sent = echo ? running.sent.slice(at + 1) : [];
      running.heard = event.volume;
      // The sender shows the volume given to it from here: the rooms are there already, and stay as they are
      // (setting them from the sender's rounded value would move rooms a limit or a balance keeps apart).
      if (echo) running.applied = event.volume;
      else await this.applyVolume(player, running);
    }
  }

  /**
   * The sender's volume becomes the player's group volume while its cast holds the output; a report made meanwhile
   * (a server sends its volume each time the receiver connects) waits for the cast to start. A report equal to the
   * level last set from it is an echo and sets nothing.
   */
  private async applyVolume(player: PlayerCasting, running: Running): Promise<void> {
    const level = running.heard;
    if (level === null || level === running.applied || player.arbiter.holder !== running.kind) return;
    running.applied = level;
    try {
      await this.deps.setGroupVolume(player.id, level);
    } catch (err) {
      this.deps.log?.warn(
        { player: player.id, receiver: running.kind, err: (err as Error).message },
        "the sender's volume could not be set on the player's zones",
      );
    }
  }

  /**
   * Does what the arbiter asked, in order: MPD is paused (and that awaited) before a cast's PCM is let through, so
   * the two never write the output at once; a pause that fails lets nothing through.
   */
  private async carryOut(player: PlayerCasting, actions: ArbiterAction[]): Promise<void> {
    for (const action of actions) {
      switch (action.do) {
        case 'pauseMpd':
          try {
            await this.deps.pauseMpd(player.id);
          } catch (err) {
            this.deps.log?.error(
              { player: player.id, err: (err as Error).message },
              "the player's MPD could not be paused for a cast: the cast's PCM is not let through",
            );
            if (player.out) this.select(player.out, null);
            return;
          }
          break;
        case 'endCast': {
          // Its PCM is dropped and it reads as idle until it reports again; its sender is paused where the protocol
          // lets this side reach it (UPnP; Squeezelite through its server; AirPlay through the sender's DACP), and plays
          // on unheard where not (an AirPlay sender without DACP).
          const running = player.running.get(action.kind);
          if (running) {
            running.ended = true;
            running.supervisor.pauseSender();
          }
          break;
        }
        case 'select':
          if (player.out) this.select(player.out, action.source);
          break;
      }
    }
  }
}
