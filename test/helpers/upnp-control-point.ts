// What a UPnP sender is to the gmediarender tests: a control point (the device description, then SOAP actions), the
// DIDL-Lite it sets with a URI, and a media server serving a WAV from the test's side of a veth pair; and where a
// control point finds a renderer, read from gmediarender's log.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Test } from 'tap';
import { soxTone } from './receiver-checks.js';

/** One second of the tone, in stereo frames (4 bytes each): what the media server sends of a WAV whose header
 * promises a minute, and what gmediarender writes of it, with no silence around it. */
export const TONE_FRAMES = 44_100;

/**
 * Why gmediarender cannot run here, if it cannot: it aborts at start without GStreamer's playbin, which Debian's
 * package only recommends (gstreamer1.0-plugins-base and -good).
 */
export function gmediarenderMissing(): string | undefined {
  const run = spawnSync('gmediarender', ['--dump-devicedesc'], { encoding: 'utf8' });
  if (run.error) return `gmediarender cannot be run (${run.error.message}): install gmediarender`;
  if (run.status === 0) return undefined;
  const said = run.stderr.trim().split('\n').pop();
  return `gmediarender aborts at start (${said}): install gstreamer1.0-plugins-base and gstreamer1.0-plugins-good`;
}

/**
 * The description URL of each run of gmediarender that became ready, in order, read from its log `lines` (as the
 * supervisor logs them, `gmediarender: <line>`, alone or inside a JSON log line): libupnp's address and port come
 * from `Registered IP=<address> port=<port>`, used once gmediarender says it is ready (only then does it log the
 * state variables a control point changes).
 */
export function rendererLocations(lines: readonly string[]): string[] {
  const locations: string[] = [];
  let registered: string | undefined;
  for (const line of lines) {
    const where = /gmediarender: .*\| upnp\] Registered IP=([\d.]+) port=(\d+)/.exec(line);
    if (where) registered = `http://${where[1]}:${where[2]}/description.xml`;
    if (registered && /gmediarender: .*\| main\] Ready for rendering\./.test(line)) locations.push(registered);
  }
  return locations;
}

/**
 * A WAV served as a sender's media server would, on `host` (the test's side of the veth pair): its header promises
 * a minute, one second of the tone follows and the response stays open, so the renderer plays until it is stopped.
 * Given a `cover` (a JPEG), it serves it too, at the path didl() names. Resolves with its URL; closed in teardown.
 */
export async function mediaServer(t: Test, host: string, dir: string, cover?: Buffer): Promise<string> {
  const file = path.join(dir, 'tone.wav');
  soxTone(file, 1);
  const wav = readFileSync(file);
  // A minute's length in the header's RIFF and data sizes (sox writes a plain 44-byte header).
  const promised = 60 * TONE_FRAMES * 4;
  wav.writeUInt32LE(promised + 36, 4);
  wav.writeUInt32LE(promised, 40);
  const size = promised + 44;
  const server = createServer((req, res) => {
    if (cover && new URL(req.url ?? '/', 'http://x').pathname === COVER_PATH) {
      res.writeHead(200, { 'Content-Type': 'image/jpeg', 'Content-Length': String(cover.length) }).end(cover);
      return;
    }
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/tone.wav') {
      res.writeHead(404).end();
      return;
    }
    // GStreamer's HTTP source gives up on a response silent for 15 s and asks again from where it was: it gets
    // the rest of what was sent, then waits again.
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const from = range ? Math.min(Number(range[1]), size - 1) : 0;
    const headers = { 'Content-Type': 'audio/wav', 'Accept-Ranges': 'bytes', 'Content-Length': String(size - from) };
    if (range) res.writeHead(206, { ...headers, 'Content-Range': `bytes ${from}-${size - 1}/${size}` });
    else res.writeHead(200, headers);
    if (from < wav.length) res.write(wav.subarray(from));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  // Closed first, then every connection cut: a renderer still playing asks again at once when its response is cut,
  // and a server still listening would take that request and wait for it.
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return `http://${host}:${(server.address() as AddressInfo).port}/tone.wav`;
}

/** Where the media server serves its cover, and the cover's URL in didl() (beside the track's). */
export const COVER_PATH = '/covers/album-7/front-cover-320x320.jpg';

/** Text as XML element content or an attribute value. */
const xmlText = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** A UPnP control point reduced to what a sender does: the device description, then SOAP actions. */
export class ControlPoint {
  private constructor(
    readonly location: string,
    readonly description: string,
    private readonly controls: Map<string, string>,
  ) {}

  static async open(location: string): Promise<ControlPoint> {
    const description = await (await fetch(location)).text();
    const controls = new Map<string, string>();
    for (const service of description.matchAll(/<service>([\s\S]*?)<\/service>/g)) {
      const type = /<serviceType>urn:schemas-upnp-org:service:(\w+):1<\/serviceType>/.exec(service[1]!);
      const url = /<controlURL>([^<]+)<\/controlURL>/.exec(service[1]!);
      if (type && url) controls.set(type[1]!, new URL(url[1]!, location).href);
    }
    return new ControlPoint(location, description, controls);
  }

  /** Calls `action` of `service` with `args` (XML-escaped here); resolves with the response, or throws its fault. */
  async call(service: string, action: string, args: Record<string, string> = {}): Promise<string> {
    const url = this.controls.get(service);
    if (!url) throw new Error(`the device description has no ${service} service`);
    const body = Object.entries({ InstanceID: '0', ...args })
      .map(([name, value]) => `<${name}>${xmlText(value)}</${name}>`)
      .join('');
    const type = `urn:schemas-upnp-org:service:${service}:1`;
    const reply = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'text/xml; charset="utf-8"', SOAPACTION: `"${type}#${action}"` },
      body: `<?xml version="1.0"?><s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/" s:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/"><s:Body><u:${action} xmlns:u="${type}">${body}</u:${action}></s:Body></s:Envelope>`,
    });
    const text = await reply.text();
    if (!reply.ok) throw new Error(`${action} answered ${reply.status}: ${text}`);
    return text;
  }

  /** Sets `uri` with its DIDL-Lite (didl) and plays it, as a sender casting a track does. */
  async cast(uri: string, tags: { title: string; artist: string; album: string }): Promise<void> {
    await this.call('AVTransport', 'SetAVTransportURI', { CurrentURI: uri, CurrentURIMetaData: didl(uri, tags) });
    await this.call('AVTransport', 'Play', { Speed: '1' });
  }

  /** Sets the sender's RenderingControl volume, 0..100. */
  async volume(level: number): Promise<void> {
    await this.call('RenderingControl', 'SetVolume', { Channel: 'Master', DesiredVolume: String(level) });
  }
}

/**
 * DIDL-Lite as a control point sends it: the resource with its DLNA flags and the cover's URL come before the
 * album, making a line of the renderer's log longer than the 500 characters kept of a line to explain an exit.
 */
export function didl(uri: string, tags: { title: string; artist: string; album: string }): string {
  return [
    '<DIDL-Lite xmlns="urn:schemas-upnp-org:metadata-1-0/DIDL-Lite/" xmlns:dc="http://purl.org/dc/elements/1.1/"',
    ' xmlns:upnp="urn:schemas-upnp-org:metadata-1-0/upnp/" xmlns:dlna="urn:schemas-dlna-org:metadata-1-0/">',
    '<item id="tone-1" parentID="album-7" restricted="1">',
    `<res protocolInfo="http-get:*:audio/wav:DLNA.ORG_PN=LPCM;DLNA.ORG_OP=01;DLNA.ORG_CI=0;DLNA.ORG_FLAGS=01700000000000000000000000000000" duration="0:01:00.000" size="10584044" bitsPerSample="16" sampleFrequency="44100" nrAudioChannels="2">${xmlText(uri)}</res>`,
    `<upnp:albumArtURI dlna:profileID="JPEG_TN">${xmlText(uri.replace(/\/tone\.wav$/, COVER_PATH))}</upnp:albumArtURI>`,
    `<dc:title>${xmlText(tags.title)}</dc:title>`,
    `<upnp:artist role="Performer">${xmlText(tags.artist)}</upnp:artist>`,
    `<dc:creator>${xmlText(tags.artist)}</dc:creator>`,
    `<upnp:album>${xmlText(tags.album)}</upnp:album>`,
    '<upnp:class>object.item.audioItem.musicTrack</upnp:class>',
    '</item></DIDL-Lite>',
  ].join('');
}
