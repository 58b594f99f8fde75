// The Squeezelite receiver: Debian's squeezelite joins a Lyrion Music Server or Music Assistant as a player named
// after the stream player; state and the server's volume come from its slimproto log.
import { createHash } from 'node:crypto';
import type {
  CastState,
  Launch,
  LogParser,
  ReceiverEndpoint,
  ReceiverKind,
  ReceiverReport,
  ReceiverSettings,
  SenderRemote,
} from './receiver.js';

/** 0 dB in slimproto's 16.16 fixed-point gain (`audg`). */
const UNITY = 0x10000;
/**
 * The server's volume curve (Lyrion's Squeezebox2 default, which Music Assistant's aioslimproto copies): volume v of
 * 1..100 is 50·(v−100)/101 dB, 0 is silence. So 100 is 0 dB, 50 about −24.8 dB, 1 about −49 dB.
 */
const RANGE_DB = 50;

function levelOfGain(gain: number): number {
  if (!(gain > 0)) return 0;
  const db = 20 * Math.log10(gain / UNITY);
  const volume = 100 + (db * 101) / RANGE_DB;
  return Math.round(Math.min(100, Math.max(0, volume))) / 100;
}

function gainOfLevel(level: number): number {
  const volume = Math.min(1, Math.max(0, level)) * 100;
  if (volume <= 0) return 0;
  return Math.round(UNITY * 10 ** ((RANGE_DB * (volume - 100)) / 101 / 20));
}

/**
 * A stable, locally administered MAC for the player (the server knows a player by it): the same player id gives
 * the same player on the server after a restart, and two players never share one.
 */
export function macOf(playerId: string): string {
  const bytes = createHash('sha256').update(`azcd squeezelite ${playerId}`).digest().subarray(0, 6);
  bytes[0] = (bytes[0]! & 0xfc) | 0x02; // unicast, locally administered
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join(':');
}

/** squeezelite's log prefix: `[05:02:36.277708] process_strm:280 `. */
const PREFIX = /^\[[\d:.]+\]\s+\S+:\d+\s+/;
/** The STAT events it sends the server, as the state they mean (others say nothing about the state). */
const STATES: Record<string, CastState> = {
  STMs: 'playing', // a track started playing
  STMr: 'playing', // resumed after a pause
  STMp: 'paused',
  STMf: 'idle', // flushed: the server stopped it
  STMu: 'idle', // the output ran out of data: the stream ended
};

class SqueezeliteLog implements LogParser {
  private state: CastState | undefined;

  /** `serverHttpPort`: where the server's JSON-RPC answers (SERVER_HTTP_PORT). */
  constructor(private readonly serverHttpPort: number) {}

  line(raw: string): ReceiverReport[] {
    const line = raw.replace(PREFIX, '');
    const stat = /^STAT: (STM[a-z])$/.exec(line);
    if (stat) {
      const state = STATES[stat[1]!];
      if (!state || state === this.state) return [];
      this.state = state;
      return [{ type: 'state', state }];
    }
    const audg = /^audg gainL: (\d+) gainR: (\d+) adjust: \d+$/.exec(line);
    if (audg) return [{ type: 'volume', volume: levelOfGain(Math.max(Number(audg[1]), Number(audg[2]))) }];
    if (line === 'connected') return [{ type: 'sender', connected: true }];
    // The server it connects to (named or found on the LAN): its JSON-RPC is where a volume changed here goes.
    const server = /^connecting to ([\d.]+):\d+$/.exec(line);
    if (server) return [{ type: 'endpoint', endpoint: { host: server[1]!, port: this.serverHttpPort } }];
    if (/^(error reading from socket|No messages from server|unable to connect to server)/.test(line)) {
      const reports: ReceiverReport[] = [{ type: 'sender', connected: false }];
      if (this.state !== undefined && this.state !== 'idle') reports.push({ type: 'state', state: 'idle' });
      this.state = 'idle';
      return reports;
    }
    return [];
  }
}

/**
 * The music server's HTTP port, where its JSON-RPC (`/jsonrpc.js`) answers: Lyrion's web port, 9000 unless its owner
 * moved it; Music Assistant's Squeezebox provider serves the same API on its "JSON-RPC CLI" port.
 */
export const SERVER_HTTP_PORT = 9000;

/** One command for the player on the music server's JSON-RPC, as Lyrion's apps send it: rejected unless it answers 200. */
async function serverCommand(
  endpoint: ReceiverEndpoint,
  settings: ReceiverSettings,
  command: string[],
  signal: AbortSignal,
): Promise<void> {
  const response = await fetch(`http://${endpoint.host}:${endpoint.port}/jsonrpc.js`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: 1, method: 'slim.request', params: [macOf(settings.playerId), command] }),
    signal,
  });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`the music server answered its JSON-RPC with HTTP ${response.status}`);
}

/**
 * Slimproto has no message from the player for either, so both go to the music server: a volume changed here as the
 * player's `mixer volume` (0..100), which the server's and its apps' sliders then show and which it sends the player
 * as a gain (`audg`, reported back as an echo); a pause as `pause 1`.
 */
const serverRemote: SenderRemote = {
  setVolume: (endpoint, settings, level, signal) =>
    serverCommand(
      endpoint,
      settings,
      ['mixer', 'volume', String(Math.round(Math.min(1, Math.max(0, level)) * 100))],
      signal,
    ),
  pause: (endpoint, settings, signal) => serverCommand(endpoint, settings, ['pause', '1'], signal),
};

/** The Squeezelite receiver; a server whose JSON-RPC is on another port than Lyrion's (tests) names it. */
export const squeezeliteReceiver = (serverHttpPort = SERVER_HTTP_PORT): ReceiverKind<'squeezelite'> => ({
  kind: 'squeezelite',
  displayName: 'Squeezelite',
  takesServer: true,
  program: 'squeezelite',
  debianPackage: 'squeezelite',
  launch(settings: ReceiverSettings): Launch {
    if (/[\0\r\n]/.test(settings.name)) throw new Error('a receiver name cannot contain a line break or NUL');
    const output =
      settings.output.kind === 'fifo'
        ? // `-o -`: PCM on stdout, 16-bit little-endian; squeezelite writes as fast as the FIFO's reader takes it.
          ['-o', '-', '-a', '16']
        : ['-o', settings.output.device];
    return {
      args: [
        ...output,
        // The FIFO's format is 44.1 kHz: a 48 kHz stream is resampled to it, with no attenuation (squeezelite's
        // resampler takes 1 dB off unless told otherwise), and only when its rate is not 44.1 kHz already. A bare
        // `-r 44100` is only a maximum: squeezelite would then play 48 kHz at 24 kHz, the rate it divides into.
        '-r',
        '44100-44100',
        '-R',
        'hLE::0',
        '-n',
        settings.name,
        '-m',
        macOf(settings.playerId),
        ...(settings.server ? ['-s', settings.server] : []),
        // slimproto at debug level is the level that logs `audg` (the server's volume) and each STAT event.
        '-d',
        'slimproto=debug',
      ],
      pcm: settings.output.kind === 'fifo' ? 'stdout' : 'self',
    };
  },
  parser: () => new SqueezeliteLog(serverHttpPort),
  volume: { toLevel: levelOfGain, fromLevel: gainOfLevel },
  remote: serverRemote,
});

export const squeezelite: ReceiverKind<'squeezelite'> = squeezeliteReceiver();
