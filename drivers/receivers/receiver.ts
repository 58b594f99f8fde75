// The receiver contract: what one kind of casting receiver (Squeezelite, AirPlay, UPnP, …) tells the supervisor that
// runs it — its program, how it is started, what its log lines mean, and how the sender's volume maps to 0..1.

/** The receivers a stream player can run: the names of the kinds listed in kinds.ts (the next kind is one module). */
export type { ReceiverKindName } from './kinds.js';

/** What a cast is doing, as the receiver reports it. */
export type CastState = 'idle' | 'playing' | 'paused';

/** What the sender says plays; a field it does not give stays null. */
export interface CastMetadata {
  title: string | null;
  artist: string | null;
  album: string | null;
  /** Cover art as the sender sent it. */
  artwork: { mime: string; data: Buffer } | null;
}

/**
 * Where a receiver's PCM goes: an ALSA device it opens itself, or a FIFO (raw PCM in PCM_FORMAT) that the supervisor
 * opens and hands it as its standard output or names in its configuration.
 */
export type ReceiverOutput = { kind: 'alsa'; device: string } | { kind: 'fifo'; path: string };

/** What a kind found out about its installed program when the receiver started (ReceiverKind.probe). */
export interface ProgramBuild {
  /** Its version as it prints it: `3.3.8`, `4.3.7`. */
  version: string;
  /** What it was built with, as it says: `AirPlay2`, `Avahi`, `metadata`, … */
  features: string[];
  /** The protocol it runs as here, which the receiver's state shows (`AirPlay 1`, `AirPlay 2`); null if one only. */
  variant: string | null;
}

/** What a receiver is started with, whatever its kind. */
export interface ReceiverSettings {
  /** The stream player's id: names the receiver's private folder and, hashed, its MAC address. */
  playerId: string;
  /** The name senders show: the player's name. */
  name: string;
  output: ReceiverOutput;
  /** The address the daemon serves on: a receiver that listens binds only there. */
  listenHost: string;
  /** The network interface of listenHost, for a program that takes a name (shairport-sync's mDNS). */
  listenInterface?: string;
  /** The receiver's private folder (0700), for generated configuration and state. */
  dir: string;
  /** For a receiver that connects out (Squeezelite): the music server, `host:port`; unset to find one on the LAN. */
  server?: string;
  /** What the kind's probe found at this start (ReceiverKind.probe); unset for a kind without one. */
  build?: ProgramBuild;
}

/** How to start one run of a receiver. */
export interface Launch {
  args: string[];
  /**
   * `stdout`: the program writes PCM on its standard output, which the supervisor points at the FIFO. `self`: the
   * program opens its output itself (an ALSA device, or a FIFO named in its configuration).
   */
  pcm: 'stdout' | 'self';
  /** Files to write (0600) in the private folder before each start: generated configuration. */
  files?: Array<{ name: string; content: string }>;
  /**
   * A FIFO the program writes metadata into (AirPlay's metadata pipe), named in the private folder: the supervisor
   * makes it before the start and gives its lines to the parser, as it does the program's log lines.
   */
  metadataPipe?: string;
  /** Added to its environment (gmediarender: CHARSET, without which GLib refuses a name that is not ASCII). */
  env?: Record<string, string>;
  /**
   * Folders it may reach besides the system's, its own folder and the audio devices (the supervisor runs it under
   * Landlock): `read`, or every right (`write`).
   */
  confine?: { read?: string[]; write?: string[] };
}

/** What one line of the program's log says, if anything the supervisor reports. */
export type ReceiverReport =
  | { type: 'state'; state: CastState }
  | { type: 'metadata'; metadata: Partial<CastMetadata> }
  /** The sender's volume, already mapped to 0..1. */
  | { type: 'volume'; volume: number }
  /** The sender connected to or left the receiver (the music server, an AirPlay client). */
  | { type: 'sender'; connected: boolean }
  /**
   * Where this side reaches what the sender listens to (SenderRemote): the renderer's own UPnP control
   * (gmediarender), the music server (Squeezelite), the AirPlay sender's DACP server, as the run logged it; null
   * when the run's current sender cannot be reached (an AirPlay sender that serves no DACP, or not found yet).
   */
  | { type: 'endpoint'; endpoint: ReceiverEndpoint | null };

/** An address and port a receiver's run logged (see the `endpoint` report). */
export interface ReceiverEndpoint {
  host: string;
  port: number;
  /**
   * What the sender asks each request to carry (AirPlay's Active-Remote): a credential of sorts, sent to `host`
   * only, never logged or put in an error.
   */
  token?: string;
}

/**
 * What this side can tell the sender, for a kind whose protocol allows it: a volume changed here (the dashboard, a
 * keypad, Home Assistant), so the sender's slider shows the rooms' volume — the run's report of the volume it then
 * has is an echo, which the runtime recognises by the level it sent — and a pause, when the cast loses the output.
 */
export interface SenderRemote {
  /**
   * Gives the sender `level` (0..1) through `endpoint`; rejects when it could not (the caller logs it). `signal`
   * aborts a request that takes too long.
   */
  setVolume(endpoint: ReceiverEndpoint, settings: ReceiverSettings, level: number, signal: AbortSignal): Promise<void>;
  /** Pauses the sender's playback (a person paused the player, or started its playlist, during the cast). */
  pause(endpoint: ReceiverEndpoint, settings: ReceiverSettings, signal: AbortSignal): Promise<void>;
}

/**
 * Reads a run's log and its metadata pipe (Launch.metadataPipe), a line at a time, each line saying where it came
 * from; a fresh one for each run, so it may keep state between lines.
 */
export interface LogParser {
  line(line: string, from: 'log' | 'metadata'): ReceiverReport[];
  /**
   * For a parser whose metadata can come after its line (UPnP's cover art, fetched from the sender's media server):
   * where it goes, while the run is the current one, and what to log meanwhile.
   */
  later?(late: { metadata(metadata: Partial<CastMetadata>): void; log(message: string): void }): void;
  /** The run ended: work under way for it (a fetch) is dropped. */
  close?(): void;
}

/** The volume scale of a protocol and 0..1 (the player's group volume), both ways. */
export interface VolumeMapping {
  /** The protocol's value (a 16.16 gain, dB, a percentage) as 0..1. */
  toLevel(value: number): number;
  /** 0..1 as the protocol's value, for giving a change made here back to the sender. */
  fromLevel(level: number): number;
}

/**
 * One kind of receiver: everything that differs between Squeezelite, AirPlay, UPnP, … Listed once in kinds.ts, from
 * which the API, the events, the store, MQTT and the dashboard learn it; `K` is its name, as a literal there.
 */
export interface ReceiverKind<K extends string = string> {
  /** Its name in the API, the store, a backup and MQTT topics: lower case letters and digits. */
  readonly kind: K;
  /** What people read: the dashboard's label, MQTT's switch (`AirPlay`, `UPnP/DLNA`). */
  readonly displayName: string;
  /** Whether a switch of it takes a music server (`host` or `host:port`) that it connects to (Squeezelite). */
  readonly takesServer: boolean;
  /** The program's name, looked up in PATH. */
  readonly program: string;
  /**
   * Asks the installed program what it is (its build, a companion service it needs), once at each start of the
   * receiver; each run's launch gets the answer as `settings.build`. Rejects (a PlaybackError) saying what to
   * install when it cannot run here. Left out by a kind whose program runs one way only.
   */
  probe?(program: string): Promise<ProgramBuild>;
  /** The Debian package that installs it: named in the error when the program is missing. */
  readonly debianPackage: string;
  launch(settings: ReceiverSettings): Launch;
  parser(): LogParser;
  readonly volume: VolumeMapping;
  /** Present where the protocol lets this side reach the sender (UPnP, Squeezelite through its server). */
  readonly remote?: SenderRemote;
}

/** The message for a machine without a receiver's program: what switching that receiver on answers. */
export function missingProgram(kind: ReceiverKind, program: string): string {
  return `${program} is not installed: the ${kind.kind} receiver runs it (install it with: apt-get install --no-install-recommends ${kind.debianPackage})`;
}

/**
 * What a sender given `level` reports back (the echo the runtime recognises): `level` on the kind's protocol scale
 * (VolumeMapping.fromLevel, what a SenderRemote sends) and back.
 */
export function echoOf(kind: ReceiverKind, level: number): number {
  return kind.volume.toLevel(kind.volume.fromLevel(level));
}
