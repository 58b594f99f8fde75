// The AirPlay receiver: shairport-sync named after the stream player, PCM on its standard output, volume left at full
// scale; state, titles, artwork and the sender's volume from its metadata pipe, which also says how to reach the
// sender's remote control (DACP) for a volume changed here and a pause. Debian 12's is AirPlay 1; a build with
// AirPlay 2 runs as AirPlay 2 while nqptp runs (shairport-build.ts asks which at each start).

import { createHash } from 'node:crypto';
import type {
  CastMetadata,
  Launch,
  LogParser,
  ReceiverEndpoint,
  ReceiverKind,
  ReceiverReport,
  ReceiverSettings,
  SenderRemote,
} from './receiver.js';
import { choosesServiceType, NQPTP_SHM, probeShairport } from './shairport-build.js';
import { macOf } from './squeezelite.js';

/** The volume shairport-sync 3.3.8 starts with before any sender set one (its `config.airplay_volume`), in dB. */
const SHAIRPORT_DEFAULT_DB = -18;
/** The metadata FIFO's name in the receiver's private folder. */
export const METADATA_PIPE = 'metadata';
/** AirPlay's volume scale: −30 dB (quietest) to 0 dB, and −144 for mute. */
const AIRPLAY_MIN_DB = -30;
const AIRPLAY_MUTE_DB = -144;

function levelOfAirplay(db: number): number {
  if (!(db > AIRPLAY_MIN_DB)) return 0;
  return Math.round(Math.min(1, (db - AIRPLAY_MIN_DB) / -AIRPLAY_MIN_DB) * 100) / 100;
}

/**
 * 0..1 as AirPlay's dB, to hundredths, as shairport-sync reports a volume (`pvol`, `%.2f`): a sender given it that
 * sends it back is reported at exactly the level it stands for.
 */
function airplayOfLevel(level: number): number {
  if (!(level > 0)) return AIRPLAY_MUTE_DB;
  return Math.round(AIRPLAY_MIN_DB * (1 - Math.min(1, level)) * 100) / 100;
}

/** A libconfig string: quoted, with `\` and `"` escaped; no line breaks. */
function quoted(text: string, what: string): string {
  if (/[\0\r\n]/.test(text)) throw new Error(`${what} cannot contain a line break or NUL`);
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** The 8-hex-digit type and code of an item, as text: `ssnc`, `core`, `pvol`, … */
const fourcc = (hex: string) => Buffer.from(hex, 'hex').toString('latin1');
const ITEM = /^<item><type>([0-9a-f]{8})<\/type><code>([0-9a-f]{8})<\/code><length>(\d+)<\/length>(<\/item>)?$/;
const DATA_START = '<data encoding="base64">';
const DATA_END = '</data></item>';

function imageType(data: Buffer): string {
  if (data[0] === 0xff && data[1] === 0xd8) return 'image/jpeg';
  if (data.subarray(0, 4).toString('latin1') === '\x89PNG') return 'image/png';
  return 'application/octet-stream';
}

/** What a sender's SETUP said about its remote control (DACP), as the `daid` and `acre` items that precede `clip`. */
interface DacpSession {
  /** The sender's DACP-ID: its DACP server is advertised as `iTunes_Ctrl_<id>._dacp._tcp`. */
  id?: string;
  /** Its Active-Remote, which every DACP request carries. */
  token?: string;
}

/** An IP address as shairport-sync writes it (`inet_ntop`), an IPv4 one mapped into IPv6 as IPv4. */
function senderHost(text: string): string | undefined {
  const host = text.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  return process.getBuiltinModule('node:net').isIP(host) ? host : undefined;
}

/**
 * shairport-sync's metadata pipe: items of `<item><type>…</type><code>…</code><length>…</length>`, then, when
 * the length is not 0, a `<data encoding="base64">` line and the base64 ending in `</data></item>`.
 */
class ShairportMetadata implements LogParser {
  private item: { type: string; code: string } | undefined;
  private data = '';
  /** What the SETUP under way said so far (its `daid` and `acre` come before its `clip`). */
  private setup: DacpSession = {};
  /** The current session's sender and how to reach its DACP server; its port (`dapo`) comes later. */
  private sender: { host: string; token: string } | undefined;
  private dacpPort: number | undefined;
  private dacpId: string | undefined;
  /**
   * The volume shairport-sync holds (dB): the last it reported, or its default before any. When a stream begins
   * (`pbeg`) its player thread reports that held volume again, racing the sender's own volume of the new session
   * (its SET_PARAMETER): from the last session or the default, it is not the sender's. So the first report after
   * `pbeg` of the volume held then is not told, whichever side of the sender's it comes. Only the two reports after
   * `pbeg` are looked at: where the player thread read the sender's volume already, its report is the second.
   */
  private heldDb = SHAIRPORT_DEFAULT_DB;
  private stale: { db: number; reports: number } | undefined;

  line(line: string, from: 'log' | 'metadata'): ReceiverReport[] {
    if (from !== 'metadata') return [];
    const head = ITEM.exec(line);
    if (head) {
      const item = { type: fourcc(head[1]!), code: fourcc(head[2]!) };
      this.item = undefined;
      this.data = '';
      if (head[4] || head[3] === '0') return this.report(item, Buffer.alloc(0));
      this.item = item;
      return [];
    }
    if (!this.item || line === DATA_START) return [];
    this.data += line.endsWith(DATA_END) ? line.slice(0, -DATA_END.length) : line;
    if (!line.endsWith(DATA_END)) return [];
    const item = this.item;
    this.item = undefined;
    return this.report(item, Buffer.from(this.data, 'base64'));
  }

  private report(item: { type: string; code: string }, data: Buffer): ReceiverReport[] {
    const text = () => data.toString('utf8');
    const field = (name: keyof Omit<CastMetadata, 'artwork'>): ReceiverReport[] => [
      { type: 'metadata', metadata: { [name]: text() || null } },
    ];
    if (item.type === 'core') {
      if (item.code === 'minm') return field('title');
      if (item.code === 'asar') return field('artist');
      if (item.code === 'asal') return field('album');
      return [];
    }
    if (item.type !== 'ssnc') return [];
    switch (item.code) {
      case 'pvol': {
        // "airplay volume,volume in dB,lowest,highest": the first is the sender's slider on AirPlay's scale.
        const db = Number(text().split(',')[0]);
        if (!Number.isFinite(db)) return [];
        this.heldDb = db;
        const stale = this.stale;
        if (stale && (db === stale.db || ++stale.reports === 2)) this.stale = undefined;
        if (stale && db === stale.db) return [];
        return [{ type: 'volume', volume: levelOfAirplay(db) }];
      }
      case 'pbeg':
        this.stale = { db: this.heldDb, reports: 0 };
        return [{ type: 'state', state: 'playing' }];
      case 'prsm':
        return [{ type: 'state', state: 'playing' }];
      case 'pfls':
        return [{ type: 'state', state: 'paused' }];
      case 'pend':
        return [{ type: 'state', state: 'idle' }];
      case 'abeg':
        return [{ type: 'sender', connected: true }];
      case 'aend':
        return [{ type: 'sender', connected: false }];
      case 'PICT':
        return data.length ? [{ type: 'metadata', metadata: { artwork: { mime: imageType(data), data } } }] : [];
      // A SETUP gives the sender's Active-Remote and DACP-ID (when it has a remote control), then its address.
      case 'acre':
        this.setup.token = /^[\x21-\x7e]{1,64}$/.test(text()) ? text() : undefined;
        return [];
      case 'daid':
        this.setup.id = /^[0-9a-f]{1,16}$/i.test(text()) ? text() : undefined;
        return [];
      case 'clip':
        return this.session(senderHost(text()));
      // The port of the DACP server Avahi found for the session's DACP-ID.
      case 'dapo': {
        const port = Number(text());
        if (!Number.isInteger(port) || port < 1 || port > 65535) return [];
        this.dacpPort = port;
        return this.endpoint();
      }
      default:
        return [];
    }
  }

  /**
   * A new session from the sender at `host`: it is reached with what its SETUP said, at the port Avahi finds for its
   * DACP-ID. shairport-sync looks the port up again only for another DACP-ID, so the same sender keeps its port.
   */
  private session(host: string | undefined): ReceiverReport[] {
    const { id, token } = this.setup;
    this.setup = {};
    if (id !== this.dacpId) this.dacpPort = undefined;
    this.dacpId = id;
    this.sender = host && id && token ? { host, token } : undefined;
    return this.endpoint();
  }

  /** The session's sender as the supervisor reaches it, or null until (or unless) it can be. */
  private endpoint(): ReceiverReport[] {
    const { sender, dacpPort } = this;
    const endpoint = sender && dacpPort ? { host: sender.host, port: dacpPort, token: sender.token } : null;
    return [{ type: 'endpoint', endpoint }];
  }
}

/** Where a DACP request goes: a link-local IPv6 sender is reached on the interface the receiver listens on. */
function dacpHost(endpoint: ReceiverEndpoint, settings: ReceiverSettings): string {
  const linkLocal = /^fe[89ab][0-9a-f]:/i.test(endpoint.host);
  return linkLocal && settings.listenInterface ? `${endpoint.host}%${settings.listenInterface}` : endpoint.host;
}

/**
 * One DACP command, as shairport-sync sends its own: `GET /ctrl-int/1/<command>` with the session's Active-Remote;
 * rejected unless the sender answers 2xx (iTunes: 204). `what` names it in an error, which never holds the token.
 */
function dacpCommand(
  endpoint: ReceiverEndpoint,
  settings: ReceiverSettings,
  command: string,
  what: string,
  signal: AbortSignal,
): Promise<void> {
  const token = endpoint.token;
  if (token === undefined) return Promise.reject(new Error('the AirPlay sender gave no Active-Remote'));
  const host = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
  // node's HTTP client is loaded with the first remote command, not at start (ARCHITECTURE.md, "Memory").
  const { request } = process.getBuiltinModule('node:http');
  return new Promise<void>((resolve, reject) => {
    const req = request(
      {
        host: dacpHost(endpoint, settings),
        port: endpoint.port,
        path: `/ctrl-int/1/${command}`,
        headers: { host: `${host}:${endpoint.port}`, 'active-remote': token },
        // One connection per command: nothing stays open to the sender between two.
        agent: false,
        signal,
      },
      (response) => {
        const status = response.statusCode ?? 0;
        // The body says nothing needed: read and dropped, bounded by the signal.
        response.resume();
        response.once('error', reject);
        response.once('end', () => {
          if (status >= 200 && status < 300) resolve();
          else reject(new Error(`the AirPlay sender answered ${what} with HTTP ${status}`));
        });
      },
    );
    req.once('error', reject);
    req.end();
  });
}

/**
 * An AirPlay 1 sender (iTunes, Music, iOS) serves DACP, the remote control a receiver reaches it by: a volume changed
 * here becomes its device volume (`dmcp.device-volume`, AirPlay's dB), which it shows and sends back as its volume
 * (reported as `pvol`, an echo); a pause pauses its playback.
 */
const dacpRemote: SenderRemote = {
  setVolume: (endpoint, settings, level, signal) =>
    dacpCommand(
      endpoint,
      settings,
      `setproperty?dmcp.device-volume=${airplayOfLevel(level).toFixed(6)}`,
      'a volume',
      signal,
    ),
  pause: (endpoint, settings, signal) => dacpCommand(endpoint, settings, 'pause', 'a pause', signal),
};

/**
 * The player's RTSP port, the same across restarts: shairport-sync's default (5000 for AirPlay 1, 7000 for AirPlay 2)
 * is every player's, and a shairport-sync whose port is taken exits at start, so a second player's AirPlay would never
 * run. 49152 + a hash of the player id modulo 16384, as UPnP's (two players' ports collide once in 16 384 pairs).
 */
export function airplayPort(playerId: string): number {
  return 49152 + (createHash('sha256').update(`azcd airplay port ${playerId}`).digest().readUInt16BE(0) % 16384);
}

/**
 * A stable AirPlay 2 device id for the player (senders and the Home app know a speaker by it, by default the
 * machine's MAC): the player's made-up MAC, the one its Squeezelite has, as libconfig's 64-bit integer.
 */
export function airplayDeviceId(playerId: string): string {
  return `0x${macOf(playerId).replaceAll(':', '').toUpperCase()}L`;
}

/** shairport-sync.conf for one run: AirPlay 1 (Debian's 3.3.8) unless the probe found it runs as AirPlay 2. */
function configuration(settings: ReceiverSettings): string {
  const name = quoted(settings.name, 'a receiver name');
  const build = settings.build;
  const airplay2 = build?.variant === 'AirPlay 2';
  // An AirPlay 2 build of 5.1 on is told which it runs as (AirPlay 1 when nqptp is not running).
  const serviceType =
    build?.features.includes('AirPlay2') && choosesServiceType(build)
      ? [`  service_type = "${airplay2 ? 'airplay2' : 'classic'}";`]
      : [];
  const lines = [
    'general = {',
    `  name = ${name};`,
    ...serviceType,
    // Senders find the port through mDNS (the service's SRV record), so any port does.
    `  port = ${airplayPort(settings.playerId)};`,
    // PCM on stdout, which the supervisor points at the FIFO: 44.1 kHz 16-bit stereo, AirPlay's own format.
    '  output_backend = "stdout";',
    '  mdns_backend = "avahi";',
    ...(settings.listenInterface ? [`  interface = ${quoted(settings.listenInterface, 'an interface')};`] : []),
    // The sender's volume is reported (pvol) and moves the zones; the samples stay at full scale.
    '  ignore_volume_control = "yes";',
    ...(airplay2 ? [`  airplay_device_id = ${airplayDeviceId(settings.playerId)};`] : []),
    '};',
    // 5.0 on chooses the stdout format, 48 kHz 32-bit for AirPlay 2 unless told: the FIFO's is 44.1 kHz 16-bit.
    ...(build && Number(build.version.split('.')[0]) >= 5
      ? ['stdout = {', '  output_rate = 44100;', '  output_format = "S16_LE";', '  output_channels = 2;', '};']
      : []),
    'metadata = {',
    '  enabled = "yes";',
    '  include_cover_art = "yes";',
    `  pipe_name = ${quoted(`${settings.dir}/${METADATA_PIPE}`, 'the metadata pipe')};`,
    '};',
    'diagnostics = { log_verbosity = 0; };',
    '',
  ];
  return lines.join('\n');
}

/**
 * The AirPlay kind. `nqptpShm`: where nqptp's shared memory is looked for (tests name a file of their own; the
 * daemon's is /dev/shm/nqptp).
 */
export function airplayKind(options: { nqptpShm?: string } = {}): ReceiverKind<'airplay'> {
  const nqptpShm = options.nqptpShm ?? NQPTP_SHM;
  return {
    kind: 'airplay',
    displayName: 'AirPlay',
    takesServer: false,
    program: 'shairport-sync',
    debianPackage: 'shairport-sync',
    probe: (program) => probeShairport(program, nqptpShm),
    launch(settings: ReceiverSettings): Launch {
      if (settings.output.kind !== 'fifo')
        throw new Error('the AirPlay receiver plays into a FIFO output only, for now');
      return {
        args: ['-c', `${settings.dir}/shairport-sync.conf`, '-u'],
        pcm: 'stdout',
        files: [{ name: 'shairport-sync.conf', content: configuration(settings) }],
        metadataPipe: METADATA_PIPE,
      };
    },
    parser: () => new ShairportMetadata(),
    volume: { toLevel: levelOfAirplay, fromLevel: airplayOfLevel },
    remote: dacpRemote,
  };
}

export const shairport: ReceiverKind<'airplay'> = airplayKind();
