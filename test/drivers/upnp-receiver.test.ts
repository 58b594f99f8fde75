// Debian's gmediarender run by the receiver supervisor in a network namespace the test makes (libupnp refuses the
// loopback interface), driven by a small UPnP control point in the test (plain SOAP to the control URLs of the
// device description): a WAV served from the test's side of the veth pair reaches the FIFO at full scale, the
// sender's volume, titles and state come out of the supervisor, a killed one comes back with back-off, a stopped one
// lets go of the FIFO, and a machine without it is told which package to install.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import t, { type Test } from 'tap';
import { type ReceiverEvent, ReceiverSupervisor } from '../../drivers/receivers/supervisor.js';
import { portOf, upnp, uuidOf } from '../../drivers/receivers/upnp.js';
import { tempDir } from '../helpers/daemon.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { PcmReader } from '../helpers/pcm-reader.js';
import { refusedWithoutProgram, restartsWithBackOff, soxTone, stopsAndLetsGo } from '../helpers/receiver-checks.js';
import { vethNetwork } from '../helpers/veth-network.js';
import { Changes, waitFor } from '../helpers/wait-for.js';

/** The tone's amplitude: a sine at half of full scale, so 16-bit samples peak at 16 384. */
const TONE_PEAK = 16384;
/** One second of the tone, in stereo frames (4 bytes each): what the test's server sends of a WAV whose header
 * promises a minute, and what gmediarender writes of it, with no silence around it. */
const TONE_FRAMES = 44_100;

/**
 * Why gmediarender cannot run here, if it cannot: it aborts at start without GStreamer's playbin, which Debian's
 * package only recommends (gstreamer1.0-plugins-base and -good).
 */
function gmediarenderMissing(): string | undefined {
  const run = spawnSync('gmediarender', ['--dump-devicedesc'], { encoding: 'utf8' });
  if (run.error) return `gmediarender cannot be run (${run.error.message}): install gmediarender`;
  if (run.status === 0) return undefined;
  const said = run.stderr.trim().split('\n').pop();
  return `gmediarender aborts at start (${said}): install gstreamer1.0-plugins-base and gstreamer1.0-plugins-good`;
}
const missing = gmediarenderMissing();

/**
 * A WAV served as a sender's media server would, from the test's side of the veth pair: its header promises a
 * minute, one second of the tone follows and the response stays open, so the renderer plays until it is stopped.
 */
async function mediaServer(t: Test, host: string, dir: string) {
  const file = path.join(dir, 'tone.wav');
  soxTone(file, 1);
  const wav = readFileSync(file);
  // A minute's length in the header's RIFF and data sizes (sox writes a plain 44-byte header).
  const promised = 60 * TONE_FRAMES * 4;
  wav.writeUInt32LE(promised + 36, 4);
  wav.writeUInt32LE(promised, 40);
  const held = new Set<ServerResponse>();
  const size = promised + 44;
  const server = createServer((req, res) => {
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
    held.add(res);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const res of held) res.destroy();
        server.close(() => resolve());
      }),
  );
  return `http://${host}:${(server.address() as AddressInfo).port}/tone.wav`;
}

/** Text as XML element content or an attribute value. */
const xmlText = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** A UPnP control point reduced to what a sender does: the device description, then SOAP actions. */
class ControlPoint {
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
}

/**
 * DIDL-Lite as a control point sends it: the resource with its DLNA flags and the cover's URL come before the
 * album, making a line of the renderer's log longer than the 500 characters kept of a line to explain an exit.
 */
function didl(uri: string, tags: { title: string; artist: string; album: string }): string {
  return [
    '<DIDL-Lite xmlns="urn:schemas-upnp-org:metadata-1-0/DIDL-Lite/" xmlns:dc="http://purl.org/dc/elements/1.1/"',
    ' xmlns:upnp="urn:schemas-upnp-org:metadata-1-0/upnp/" xmlns:dlna="urn:schemas-dlna-org:metadata-1-0/">',
    '<item id="tone-1" parentID="album-7" restricted="1">',
    `<res protocolInfo="http-get:*:audio/wav:DLNA.ORG_PN=LPCM;DLNA.ORG_OP=01;DLNA.ORG_CI=0;DLNA.ORG_FLAGS=01700000000000000000000000000000" duration="0:01:00.000" size="10584044" bitsPerSample="16" sampleFrequency="44100" nrAudioChannels="2">${xmlText(uri)}</res>`,
    `<upnp:albumArtURI dlna:profileID="JPEG_TN">${xmlText(uri.replace(/tone\.wav$/, 'covers/album-7/front-cover-320x320.jpg'))}</upnp:albumArtURI>`,
    `<dc:title>${xmlText(tags.title)}</dc:title>`,
    `<upnp:artist role="Performer">${xmlText(tags.artist)}</upnp:artist>`,
    `<dc:creator>${xmlText(tags.artist)}</dc:creator>`,
    `<upnp:album>${xmlText(tags.album)}</upnp:album>`,
    '<upnp:class>object.item.audioItem.musicTrack</upnp:class>',
    '</item></DIDL-Lite>',
  ].join('');
}

async function rig(t: Test, options: { clock?: ManualClock; name?: string } = {}) {
  const net = vethNetwork(t, 'up', 242);
  if (!net.ok) return { ok: false as const, why: net.why };
  const dir = tempDir('azc-upnp-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const fifo = path.join(dir, 'out.pcm');
  execFileSync('mkfifo', ['-m', '600', fifo]);
  const media = await mediaServer(t, net.hostAddress, dir);
  const reader = new PcmReader(fifo);
  t.teardown(() => reader.close());
  const events: ReceiverEvent[] = [];
  const changes = new Changes();
  /**
   * A renderer for player `playerId` in the namespace, playing into `output`, and a control point for each of its
   * runs: libupnp's address and port come from the log line `Registered IP=<address> port=<port>`, used once
   * gmediarender says it is ready (only then does it log the state variables a control point changes).
   */
  /** Every line the supervisors logged. */
  const logged: string[] = [];
  const renderer = (playerId: string, name: string, output: string, clock?: ManualClock) => {
    const locations: string[] = [];
    let registered: string | undefined;
    const supervisor = new ReceiverSupervisor({
      kind: upnp,
      stateDir: path.join(dir, 'state'),
      settings: {
        playerId,
        name,
        output: { kind: 'fifo', path: output },
        listenHost: net.address,
        listenInterface: net.nsIf,
      },
      clock,
      prefix: ['ip', 'netns', 'exec', net.ns],
      log: (_level, message) => {
        logged.push(message);
        const where = /^gmediarender: .*\| upnp\] Registered IP=([\d.]+) port=(\d+)/.exec(message);
        if (where) registered = `http://${where[1]}:${where[2]}/description.xml`;
        if (registered && /^gmediarender: .*\| main\] Ready for rendering\.$/.test(message)) locations.push(registered);
        changes.notify();
      },
    });
    t.teardown(() => supervisor.stop());
    /** A control point for gmediarender's `run`-th run (1: the first), once that run is ready. */
    const controlPoint = async (run = 1) =>
      ControlPoint.open(
        await waitFor(() => locations[run - 1], undefined, {
          what: `${name}'s renderer to be ready (run ${run})`,
          changes,
        }),
      );
    return { supervisor, controlPoint };
  };
  const { supervisor, controlPoint } = renderer('kitchen', options.name ?? 'Kitchen', fifo, options.clock);
  supervisor.onEvent((event) => {
    events.push(event);
    changes.notify();
  });
  const event = <T extends ReceiverEvent>(what: string, match: (e: ReceiverEvent) => e is T, since = 0) =>
    waitFor(() => events.slice(since).find(match), undefined, { what, changes });
  /** Sets the URI with its DIDL-Lite and plays it. */
  const cast = async (
    cp: ControlPoint,
    tags = { title: 'Blue Tone', artist: 'Sox Combo', album: 'Loopback' },
    uri = media,
  ) => {
    await cp.call('AVTransport', 'SetAVTransportURI', { CurrentURI: uri, CurrentURIMetaData: didl(uri, tags) });
    await cp.call('AVTransport', 'Play', { Speed: '1' });
  };
  /** The renderer started, a sender casting to it, and the second of tone on the FIFO: the control point. */
  const castSecond = async (): Promise<ControlPoint> => {
    await supervisor.start();
    const cp = await controlPoint();
    await cast(cp);
    await waitFor(() => reader.bytes >= TONE_FRAMES * 4, undefined, {
      what: 'the second of tone on the FIFO',
      changes: reader.changes,
    });
    return cp;
  };
  return {
    ok: true as const,
    supervisor,
    reader,
    castSecond,
    events,
    event,
    changes,
    controlPoint,
    cast,
    renderer,
    dir,
    media,
    logged,
  };
}

const isState =
  (state: string) =>
  (e: ReceiverEvent): e is Extract<ReceiverEvent, { type: 'state' }> =>
    e.type === 'state' && e.state === state;
/** Runs `body` with the rig, or says why gmediarender goes unverified here. */
function test(
  name: string,
  body: (t: Test, r: Extract<Awaited<ReturnType<typeof rig>>, { ok: true }>) => Promise<void>,
  options: { clock?: ManualClock; name?: string } = {},
) {
  t.test(name, async (t) => {
    if (missing) {
      t.comment(`${missing}: the UPnP receiver goes unverified`);
      return;
    }
    const r = await rig(t, options);
    if (!r.ok) {
      t.comment(
        `network namespaces cannot be made here (${r.why}; they need root and ip netns): the UPnP receiver goes unverified`,
      );
      return;
    }
    await body(t, r);
  });
}

test(
  'gmediarender is described under the player name, with a UUID made from the player id',
  async (t, { supervisor, controlPoint }) => {
    await supervisor.start();
    const cp = await controlPoint();
    t.match(cp.description, '<friendlyName>Küche</friendlyName>', 'a name that is not ASCII, as given');
    t.match(cp.description, `<UDN>uuid:${uuidOf('kitchen')}</UDN>`);
    t.not(uuidOf('kitchen'), uuidOf('garden'), 'another player another one');
  },
  { name: 'Küche' },
);

test('two players run their renderers side by side on one address, each on a port of its own', async (t, r) => {
  const garden = r.renderer('garden', 'Garden', path.join(r.dir, 'garden.pcm'));
  await Promise.all([r.supervisor.start(), garden.supervisor.start()]);
  const [kitchen, other] = await Promise.all([r.controlPoint(), garden.controlPoint()]);
  t.match(kitchen.description, '<friendlyName>Kitchen</friendlyName>');
  t.match(other.description, '<friendlyName>Garden</friendlyName>');
  t.equal(new URL(kitchen.location).port, String(portOf('kitchen')), "the kitchen's port");
  t.equal(new URL(other.location).port, String(portOf('garden')), "the garden's port");
});

test('a cast reaches the FIFO and plays until the sender stops it', async (t, {
  supervisor,
  reader,
  event,
  events,
  controlPoint,
  cast,
}) => {
  await supervisor.start();
  const cp = await controlPoint();
  await cast(cp);
  await event('the playing state', isState('playing'));
  await waitFor(() => reader.bytes >= TONE_FRAMES * 4, undefined, {
    what: 'the second of tone on the FIFO',
    changes: reader.changes,
  });
  t.equal(supervisor.status().state, 'playing', 'still playing: the server holds the rest of the minute');
  const seen = events.length;
  await cp.call('AVTransport', 'Stop');
  await event('the idle state', isState('idle'), seen);
  t.equal(supervisor.status().state, 'idle');
});

test("a sender's pause and resume are reported", async (t, { supervisor, event, events, castSecond }) => {
  const cp = await castSecond();
  let seen = events.length;
  await cp.call('AVTransport', 'Pause');
  await event('the paused state', isState('paused'), seen);
  seen = events.length;
  await cp.call('AVTransport', 'Play', { Speed: '1' });
  await event('the playing state again', isState('playing'), seen);
  t.equal(supervisor.status().state, 'playing');
});

test('the sender volume is reported on 0..1 while the samples stay at full scale', async (t, {
  supervisor,
  reader,
  changes,
  event,
  controlPoint,
  cast,
}) => {
  await supervisor.start();
  const cp = await controlPoint();
  // gmediarender's curve makes volume 50 −20 dB: played on its own, the tone would peak at a tenth.
  await cp.call('RenderingControl', 'SetVolume', { Channel: 'Master', DesiredVolume: '50' });
  await waitFor(() => supervisor.status().volume === 0.5, undefined, {
    what: 'the sender volume 0.5',
    changes,
  });
  await cast(cp);
  await waitFor(() => reader.bytes >= TONE_FRAMES * 4, undefined, {
    what: 'the second of tone on the FIFO',
    changes: reader.changes,
  });
  t.ok(reader.peak >= TONE_PEAK - 2 && reader.peak <= TONE_PEAK + 1, `the tone at full scale (${reader.peak})`);
  await cp.call('RenderingControl', 'SetVolume', { Channel: 'Master', DesiredVolume: '0' });
  await event(
    'the sender volume 0',
    (e): e is Extract<ReceiverEvent, { type: 'volume' }> => e.type === 'volume' && e.volume === 0,
  );
  await cp.call('RenderingControl', 'SetVolume', { Channel: 'Master', DesiredVolume: '73' });
  await waitFor(() => supervisor.status().volume === 0.73, undefined, {
    what: 'the sender volume 0.73',
    changes,
  });
  t.equal(supervisor.status().volume, 0.73, 'UPnP volume 0 is 0 and 73 is 0.73');
});

test('the titles a sender sets with the URI come out of the supervisor', async (t, {
  supervisor,
  event,
  changes,
  controlPoint,
  cast,
}) => {
  await supervisor.start();
  const cp = await controlPoint();
  await cast(cp, { title: 'Blue & Tone', artist: 'Sox <Combo>', album: 'Loopback, Vol. 2' });
  await event('the playing state', isState('playing'));
  await waitFor(() => supervisor.status().metadata.album, undefined, { what: 'the album', changes });
  t.same(supervisor.status().metadata, {
    title: 'Blue & Tone',
    artist: 'Sox <Combo>',
    album: 'Loopback, Vol. 2',
    artwork: null,
  });
});

test('a token in the URL a sender casts stays out of what the supervisor logs', async (t, r) => {
  await r.supervisor.start();
  await r.cast(await r.controlPoint(), undefined, `${r.media}?token=s3cret-token&n=1`);
  await r.event('the playing state', isState('playing'));
  t.ok(
    r.logged.some((line) => line.includes(`AVTransportURI: ${r.media}?[redacted]`)),
    'the URI is logged without its query',
  );
  t.same(
    r.logged.filter((line) => line.includes('s3cret')),
    [],
    'no line holds the token',
  );
});

const clock = new ManualClock(1_000_000);
test(
  'a killed gmediarender is restarted after 1 s, then after 2 s, as the same renderer',
  async (t, { supervisor, events, event, controlPoint }) => {
    await supervisor.start();
    const udns: Array<string | undefined> = [];
    await restartsWithBackOff(t, { supervisor, clock, events, event }, 'gmediarender', async (run) => {
      udns.push(/<UDN>([^<]+)<\/UDN>/.exec((await controlPoint(run)).description)?.[1]);
    });
    t.equal(udns[1], udns[0], 'the restarted one is the same renderer to control points');
  },
  { clock },
);

test('stopping gmediarender ends it and lets go of the FIFO', async (t, { supervisor, reader, castSecond }) => {
  await castSecond();
  await stopsAndLetsGo(t, supervisor, reader);
});

t.test('without gmediarender in PATH, starting is refused naming the Debian package', async (t) => {
  const dir = tempDir('azc-no-gmediarender-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const supervisor = new ReceiverSupervisor({
    kind: upnp,
    stateDir: dir,
    settings: {
      playerId: 'kitchen',
      name: 'Kitchen',
      output: { kind: 'fifo', path: path.join(dir, 'out.pcm') },
      listenHost: '127.0.0.1',
    },
    searchPath: `${dir}:/nonexistent`,
  });
  await refusedWithoutProgram(t, supervisor, { program: 'gmediarender', kind: 'upnp', debianPackage: 'gmediarender' });
});
