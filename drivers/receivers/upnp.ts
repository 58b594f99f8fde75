// The UPnP/DLNA receiver: Debian's gmediarender (gmrender-resurrect) as a media renderer named after the stream
// player; state, titles and the sender's volume from the state variables it logs, the samples kept at full scale.
import { createHash } from 'node:crypto';
import { ArtworkFetcher, type LateMetadata } from './artwork-fetch.js';
import type {
  CastMetadata,
  CastState,
  Launch,
  LogParser,
  ReceiverEndpoint,
  ReceiverKind,
  ReceiverReport,
  ReceiverSettings,
  SenderRemote,
} from './receiver.js';

/** The FIFO's format: what any stream is converted and resampled to. */
const PCM_CAPS = 'audio/x-raw,format=S16LE,rate=44100,channels=2';

/**
 * gmediarender sets the sender's RenderingControl volume on GStreamer's playbin, which applies it to the samples
 * through the first stream-volume element it finds in the sink: unless there is one, it adds its own before the
 * sink. So the sink has one of its own, on a branch of a tee that ends in a fakesink: the volume and mute land
 * there, and the branch that feeds the output stays at full scale.
 */
function sinkPipeline(sink: string): string {
  return `tee name=t ! queue ! audioconvert ! audioresample ! ${PCM_CAPS} ! ${sink} t. ! queue ! volume ! fakesink`;
}

/**
 * A stable UUID for the player (control points know a renderer by it): the same player id gives the same renderer
 * after a restart, and two players never share one. Name-based (version 5 layout) from the player id.
 */
export function uuidOf(playerId: string): string {
  const bytes = createHash('sha256').update(`azcd upnp ${playerId}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The port libupnp serves the player's description and control on. gmediarender's default (49494) is one for every
 * renderer, and libupnp retries a taken port instead of moving on (port 0 takes 49152, the same for all): so each
 * player gets its own, from its id, within the dynamic range. Two players collide once in 16 384 pairs.
 */
export function portOf(playerId: string): number {
  return 49152 + (createHash('sha256').update(`azcd upnp port ${playerId}`).digest().readUInt16BE(0) % 16384);
}

/** An ALSA device name as GStreamer's pipeline syntax takes it unquoted. */
const ALSA_DEVICE = /^[A-Za-z0-9_:,=.-]+$/;

/** The volume scale of RenderingControl: 0..100. */
const levelOfVolume = (volume: number) => Math.round(Math.min(100, Math.max(0, volume))) / 100;
const volumeOfLevel = (level: number) => Math.round(Math.min(1, Math.max(0, level)) * 100);

/** A log line: `INFO  [2026-12-07 07:36:48.010665 | transport] TransportState: PLAYING`. */
const LOG_LINE = /^[A-Z]+\s+\[[^|\]]*\|\s*([a-z]+)\]\s?(.*)$/;
/** The transport states of AVTransport and what they mean here; TRANSITIONING says nothing yet. */
const STATES: Record<string, CastState> = {
  PLAYING: 'playing',
  PAUSED_PLAYBACK: 'paused',
  STOPPED: 'idle',
  NO_MEDIA_PRESENT: 'idle',
};

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
function unescapeXml(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
      return Number.isInteger(code) && code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[name] ?? whole;
  });
}

/** The first element `tag` (with any namespace prefix bound to it) of a DIDL-Lite item, as text. */
function element(didl: string, ...tags: string[]): string | null {
  for (const tag of tags) {
    const found = new RegExp(`<${tag}(?:\\s[^>]*)?>([^<]*)</${tag}>`).exec(didl);
    const text = found ? unescapeXml(found[1]!).trim() : '';
    if (text) return text;
  }
  return null;
}

/** What a DIDL-Lite item says: the titles, and the URL of its cover (fetched only under ArtworkFetcher's rule). */
export type DidlMetadata = Omit<CastMetadata, 'artwork'> & { artworkUrl: string | null };

/** Title, artist, album and cover URL from the DIDL-Lite a control point set with the URI; empty metadata is all null. */
export function didlMetadata(didl: string): DidlMetadata {
  return {
    title: element(didl, 'dc:title'),
    artist: element(didl, 'upnp:artist', 'dc:creator'),
    album: element(didl, 'upnp:album'),
    artworkUrl: element(didl, 'upnp:albumArtURI'),
  };
}

/**
 * gmediarender logs each state variable as it changes (`<service>] <Name>: <value>`), a value holding line breaks
 * going on over the next lines. Read: AVTransport's TransportState and CurrentTrackMetaData (the DIDL-Lite of what
 * plays: SetAVTransportURI's, then SetNextAVTransportURI's once that track starts), RenderingControl's Volume and
 * Mute (a muted sender reads as volume 0).
 */
class GmediarenderLog implements LogParser {
  /** A CurrentTrackMetaData value until the next log line shows it has ended. */
  private didl: string[] | undefined;
  private volume: number | undefined;
  private muted = false;
  /** The covers the tracks' DIDL-Lite name, fetched from the media server the renderer plays from. */
  private readonly art = new ArtworkFetcher();
  /**
   * The last DIDL-Lite's titles and cover URL, and whether they were told since the transport was last stopped:
   * gmediarender logs a value only when it changes, so a sender that plays the same track again after a stop sets
   * no new CurrentTrackMetaData, while the supervisor forgot the titles when the cast went idle.
   */
  private current: { titles: Omit<CastMetadata, 'artwork'>; artworkUrl: string | null } | undefined;
  private toldSinceStop = false;

  line(line: string, from: 'log' | 'metadata'): ReceiverReport[] {
    if (from !== 'log') return [];
    const logged = LOG_LINE.exec(line);
    if (!logged) {
      this.didl?.push(line);
      return [];
    }
    const reports = this.endDidl();
    const [service, text] = [logged[1]!, logged[2]!];
    // libupnp's address and port: where RenderingControl is reached to give the sender a volume changed here.
    const registered = service === 'upnp' && /^Registered IP=([0-9a-f.:]+) port=(\d+)/i.exec(text);
    if (registered) {
      reports.push({ type: 'endpoint', endpoint: { host: registered[1]!, port: Number(registered[2]) } });
      return reports;
    }
    const variable = /^(\w+): ?(.*)$/.exec(text);
    if (!variable) return reports;
    const [name, value] = [variable[1]!, variable[2]!];
    if (service === 'transport') {
      if (name === 'TransportState') {
        const state = STATES[value];
        if (state) reports.push({ type: 'state', state });
        if (state === 'idle') this.toldSinceStop = false;
        else if (state && !this.toldSinceStop && this.current) reports.push(this.told(this.current));
      } else if (name === 'CurrentTrackMetaData') {
        this.didl = [value];
      } else if (name === 'CurrentTrackURI') {
        // Logged before the track's DIDL-Lite: the host its cover may be fetched from.
        this.art.trackUri = value;
      }
    } else if (service === 'control') {
      if (name === 'Volume' && /^\d+$/.test(value)) {
        this.volume = Number(value);
        if (!this.muted) reports.push({ type: 'volume', volume: levelOfVolume(this.volume) });
      } else if (name === 'Mute' && (value === '0' || value === '1')) {
        const muted = value === '1';
        if (muted !== this.muted && this.volume !== undefined) {
          reports.push({ type: 'volume', volume: muted ? 0 : levelOfVolume(this.volume) });
        }
        this.muted = muted;
      }
    }
    return reports;
  }

  private endDidl(): ReceiverReport[] {
    if (!this.didl) return [];
    const didl = this.didl.join('\n');
    this.didl = undefined;
    const { artworkUrl, ...titles } = didlMetadata(didl);
    this.current = { titles, artworkUrl };
    return [this.told(this.current)];
  }

  private told(current: NonNullable<GmediarenderLog['current']>): ReceiverReport {
    this.toldSinceStop = true;
    // The last track's cover is gone at once; this one's follows once fetched.
    this.art.track(current.artworkUrl);
    return { type: 'metadata', metadata: { ...current.titles, artwork: null } };
  }

  later(late: LateMetadata): void {
    this.art.listen(late);
  }

  close(): void {
    this.art.close();
  }
}

/** The services this side calls on gmediarender, with their control URLs in its description (`--dump-devicedesc`). */
const SERVICES = {
  RenderingControl: {
    type: 'urn:schemas-upnp-org:service:RenderingControl:1',
    control: '/upnp/control/rendercontrol1',
  },
  AVTransport: { type: 'urn:schemas-upnp-org:service:AVTransport:1', control: '/upnp/control/rendertransport1' },
};

/** One action on the renderer's own control URL, as a control point calls it: rejected unless it answers 200. */
async function soap(
  endpoint: ReceiverEndpoint,
  service: keyof typeof SERVICES,
  action: string,
  args: Record<string, string>,
  signal: AbortSignal,
): Promise<void> {
  const { type, control } = SERVICES[service];
  const fields = Object.entries(args)
    .map(([name, value]) => `<${name}>${value}</${name}>`)
    .join('');
  const body =
    '<?xml version="1.0" encoding="utf-8"?>' +
    '<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/" s:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/">' +
    `<s:Body><u:${action} xmlns:u="${type}">${fields}</u:${action}></s:Body></s:Envelope>`;
  const host = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
  const response = await fetch(`http://${host}:${endpoint.port}${control}`, {
    method: 'POST',
    headers: { 'content-type': 'text/xml; charset="utf-8"', soapaction: `"${type}#${action}"` },
    body,
    signal,
  });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`the renderer answered ${action} with HTTP ${response.status}`);
}

/**
 * The renderer is this side's own: a volume changed here goes to its RenderingControl's Volume, a pause to its
 * AVTransport. gmediarender events both to the control points subscribed to it (BubbleUPnP, Home
 * Assistant, Music Assistant), whose sliders and buttons then show them; the volume lands on its decoy volume
 * element only, so the samples stay at full scale.
 */
const rendererRemote: SenderRemote = {
  async setVolume(endpoint, _settings, level, signal) {
    // gmediarender unmutes on SetVolume itself (the driver test shows it).
    const args = { InstanceID: '0', Channel: 'Master', DesiredVolume: String(volumeOfLevel(level)) };
    await soap(endpoint, 'RenderingControl', 'SetVolume', args, signal);
  },
  pause: (endpoint, _settings, signal) => soap(endpoint, 'AVTransport', 'Pause', { InstanceID: '0' }, signal),
};

export const upnp: ReceiverKind<'upnp'> = {
  kind: 'upnp',
  displayName: 'UPnP/DLNA',
  takesServer: false,
  program: 'gmediarender',
  debianPackage: 'gmediarender',
  launch(settings: ReceiverSettings): Launch {
    if (/[\0\r\n]/.test(settings.name)) throw new Error('a receiver name cannot contain a line break or NUL');
    let pipeline: string;
    if (settings.output.kind === 'fifo') {
      // PCM on stdout, which the supervisor points at the FIFO: GStreamer writes as fast as the FIFO is read.
      pipeline = sinkPipeline('fdsink fd=1');
    } else {
      const { device } = settings.output;
      if (!ALSA_DEVICE.test(device))
        throw new Error(`the ALSA device "${device}" has characters GStreamer cannot take`);
      pipeline = sinkPipeline(`alsasink device=${device}`);
    }
    return {
      args: [
        '--friendly-name',
        settings.name,
        '--uuid',
        uuidOf(settings.playerId),
        // libupnp serves on this interface's address only (it refuses loopback); unset, it takes the first one up.
        ...(settings.listenInterface ? ['--interface-name', settings.listenInterface] : []),
        '--port',
        String(portOf(settings.playerId)),
        '--gstout-audiopipe',
        pipeline,
        // The log is where the state variables are read from: at info level, each change is logged.
        '--logfile',
        'stderr',
      ],
      pcm: settings.output.kind === 'fifo' ? 'stdout' : 'self',
      // gmediarender never calls setlocale: GLib reads its options as ASCII, refusing a name such as "Küche",
      // unless CHARSET names the encoding.
      env: { CHARSET: 'UTF-8' },
    };
  },
  parser: () => new GmediarenderLog(),
  volume: { toLevel: levelOfVolume, fromLevel: volumeOfLevel },
  remote: rendererRemote,
};
