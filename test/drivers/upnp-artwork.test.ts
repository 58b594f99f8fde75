// UPnP cover art: the renderer's log parser reads DIDL-Lite's upnp:albumArtURI and the daemon fetches the cover only
// from the host and port of the URI the renderer was told to play (CurrentTrackURI), JPEG or PNG, at most 1 MiB, no
// redirect followed, the URL never logged with its query; the cover reaches the supervisor's metadata as AirPlay's
// does. The rules are checked on gmediarender's log lines as it writes them, against real HTTP servers on two
// loopback addresses (the sender's media server and another host), and through the supervisor with a shell script
// standing in for gmediarender; the last case runs the real gmediarender in a network namespace the test makes, a
// control point casting a track whose cover is on the test's media server across the veth pair.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import t, { type Test } from 'tap';
import { ARTWORK_MAX_BYTES } from '../../drivers/receivers/artwork-fetch.js';
import type { CastMetadata } from '../../drivers/receivers/receiver.js';
import { ReceiverSupervisor } from '../../drivers/receivers/supervisor.js';
import { upnp } from '../../drivers/receivers/upnp.js';
import { tempDir } from '../helpers/daemon.js';
import { PcmReader } from '../helpers/pcm-reader.js';
import { ControlPoint, gmediarenderMissing, mediaServer, rendererLocations } from '../helpers/upnp-control-point.js';
import { vethNetwork } from '../helpers/veth-network.js';
import { Changes, waitFor } from '../helpers/wait-for.js';

const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), randomBytes(2000), Buffer.from([0xff, 0xd9])]);
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(500)]);

/** A media server on `host`: the requests it got, and its base URL. `serve` answers each request. */
async function server(t: Test, host: string, serve: (req: IncomingMessage, res: ServerResponse) => void) {
  const requests: string[] = [];
  const http = createServer((req, res) => {
    requests.push(req.url ?? '');
    serve(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, host, resolve));
  t.teardown(() => new Promise<void>((resolve) => http.close(() => resolve())));
  return { requests, base: `http://${host}:${(http.address() as AddressInfo).port}` };
}

/** The sender's media server (127.0.0.1) with its covers, and another host (127.0.0.2) with one of its own. */
async function servers(t: Test) {
  const other = await server(t, '127.0.0.2', (_req, res) =>
    res.writeHead(200, { 'content-type': 'image/jpeg' }).end(JPEG),
  );
  const media = await server(t, '127.0.0.1', (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/covers/front.jpg') res.writeHead(200, { 'content-type': 'image/jpeg' }).end(JPEG);
    else if (path === '/covers/front.png') res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
    else if (path === '/covers/huge.jpg')
      res.writeHead(200, { 'content-type': 'image/jpeg' }).end(Buffer.concat([JPEG, Buffer.alloc(ARTWORK_MAX_BYTES)]));
    else if (path === '/covers/page.jpg') res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
    else if (path === '/covers/png-as-jpeg.jpg') res.writeHead(200, { 'content-type': 'image/jpeg' }).end(PNG);
    else if (path === '/covers/moved.jpg') res.writeHead(302, { location: `${other.base}/front.jpg` }).end();
    else res.writeHead(404).end();
  });
  return { media, other };
}

/** gmediarender's log line for a state variable. */
const logLine = (name: string, value: string) => `INFO  [2026-12-07 12:30:16.070162 | transport] ${name}: ${value}`;

/** The lines gmediarender logs when a sender casts `track` with DIDL-Lite naming the cover `art`. */
function castLines(track: string, art: string): string[] {
  const didl =
    '<DIDL-Lite xmlns="urn:schemas-upnp-org:metadata-1-0/DIDL-Lite/" xmlns:dc="http://purl.org/dc/elements/1.1/" ' +
    'xmlns:upnp="urn:schemas-upnp-org:metadata-1-0/upnp/"><item id="1" parentID="0" restricted="1">' +
    `<res protocolInfo="http-get:*:audio/wav:*">${track.replace(/&/g, '&amp;')}</res>` +
    `<upnp:albumArtURI>${art.replace(/&/g, '&amp;')}</upnp:albumArtURI>` +
    '<dc:title>Blue Tone</dc:title><upnp:class>object.item.audioItem.musicTrack</upnp:class></item></DIDL-Lite>';
  return [
    logLine('TransportState', 'PLAYING'),
    logLine('CurrentTrackURI', track),
    logLine('CurrentTrackMetaData', didl),
    // The next line ends the DIDL-Lite (a value may go on over several lines).
    logLine('CurrentTrackDuration', '0:01:00'),
  ];
}

/** A parser of gmediarender's log: what it reported at once, later, and logged. */
function parser() {
  const changes = new Changes();
  const reports: Array<Partial<CastMetadata>> = [];
  const late: Array<Partial<CastMetadata>> = [];
  const logged: string[] = [];
  const log = upnp.parser();
  log.later?.({
    metadata: (metadata) => {
      late.push(metadata);
      changes.notify();
    },
    log: (message) => {
      logged.push(message);
      changes.notify();
    },
  });
  const feed = (lines: string[]) => {
    for (const line of lines)
      for (const report of log.line(line, 'log')) if (report.type === 'metadata') reports.push(report.metadata);
  };
  const until = <T>(what: string, found: () => T) => waitFor(found, undefined, { what, changes });
  return { feed, reports, late, logged, until, close: () => log.close?.() };
}

t.test('a cover on the media server the renderer plays from is fetched and reported as artwork', async (t) => {
  const { media } = await servers(t);
  const p = parser();
  t.teardown(p.close);
  p.feed(castLines(`${media.base}/tone.wav?token=abc`, `${media.base}/covers/front.jpg?size=320`));
  t.match(p.reports, [{ title: 'Blue Tone', artwork: null }], "the titles at once, the last track's cover gone");
  const [cover] = await p.until('the cover', () => (p.late.length > 0 ? p.late : undefined));
  t.equal(cover!.artwork?.mime, 'image/jpeg');
  t.ok(cover!.artwork?.data.equals(JPEG), 'the bytes the server sent');
  t.same(media.requests, ['/covers/front.jpg?size=320'], 'one request, with its query');
});

t.test('a PNG cover is taken as image/png', async (t) => {
  const { media } = await servers(t);
  const p = parser();
  t.teardown(p.close);
  p.feed(castLines(`${media.base}/tone.wav`, `${media.base}/covers/front.png`));
  const [cover] = await p.until('the cover', () => (p.late.length > 0 ? p.late : undefined));
  t.equal(cover!.artwork?.mime, 'image/png');
  t.ok(cover!.artwork?.data.equals(PNG));
});

t.test('a cover on another host, or another port of the same host, is not fetched', async (t) => {
  const { media, other } = await servers(t);
  const elsewhere = [`${other.base}/front.jpg?sig=s3cret`, `http://127.0.0.1:1/front.jpg?sig=s3cret`];
  for (const art of elsewhere) {
    const p = parser();
    t.teardown(p.close);
    p.feed(castLines(`${media.base}/tone.wav`, art));
    const [line] = await p.until('the refusal logged', () => (p.logged.length > 0 ? p.logged : undefined));
    t.match(line, /is not fetched: it is not on the host and port of the URI the renderer plays/);
    t.notMatch(line, 's3cret', 'logged without its query');
    t.same(p.late, [], 'no cover reported');
  }
  t.same(other.requests, [], 'the other host got no request');
});

t.test(
  'a cover that is not http(s), carries a password, or is named before any URI to play, is not fetched',
  async (t) => {
    const { media } = await servers(t);
    const p = parser();
    t.teardown(p.close);
    p.feed(castLines(`${media.base}/tone.wav`, 'file:///etc/passwd'));
    await p.until('the refusal', () => p.logged.some((line) => /it is not an http\(s\) URL/.test(line)));
    const password = parser();
    t.teardown(password.close);
    password.feed(
      castLines(`${media.base}/tone.wav`, `${media.base.replace('//', '//user:s3cret@')}/covers/front.jpg`),
    );
    const [said] = await password.until('the refusal', () =>
      password.logged.length > 0 ? password.logged : undefined,
    );
    t.match(said, /it carries a user name or password/);
    t.notMatch(said, 's3cret', 'the password is not logged');
    const first = parser();
    t.teardown(first.close);
    first.feed(
      castLines(`${media.base}/tone.wav`, `${media.base}/covers/front.jpg`).filter((l) => !/CurrentTrackURI/.test(l)),
    );
    await first.until('the refusal', () => first.logged.some((line) => /was told no URI to play/.test(line)));
    t.same([...p.late, ...password.late, ...first.late], []);
    t.same(media.requests, [], 'nothing fetched');
  },
);

t.test('a cover over 1 MiB, not an image, with bytes of another type, or behind a redirect is refused', async (t) => {
  const { media, other } = await servers(t);
  const cases = [
    ['huge.jpg', /could not be fetched: it is over the 1048576 bytes taken|it is \d+ bytes, over the 1048576 taken/],
    ['page.jpg', /could not be fetched: it is text\/html, not image\/jpeg or image\/png/],
    ['png-as-jpeg.jpg', /could not be fetched: its bytes are not image\/jpeg/],
    ['moved.jpg', /could not be fetched: .*redirect/],
  ] as const;
  for (const [file, why] of cases) {
    const p = parser();
    t.teardown(p.close);
    p.feed(castLines(`${media.base}/tone.wav`, `${media.base}/covers/${file}?sig=s3cret`));
    const [line] = await p.until(`${file} refused`, () => (p.logged.length > 0 ? p.logged : undefined));
    t.match(line, why, file);
    t.notMatch(line, 's3cret', 'logged without its query');
    t.same(p.late, [], 'no cover reported');
  }
  t.same(other.requests, [], 'the redirect was not followed');
});

t.test(
  'the supervisor adds a fetched cover to the cast metadata, and drops it with the titles when the cast ends',
  async (t) => {
    const { media } = await servers(t);
    const dir = tempDir('azc-upnp-art-');
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    // The log lines on standard error, then a wait for the cast to be stopped: a STOPPED line when told on stdin.
    const lines = castLines(`${media.base}/tone.wav`, `${media.base}/covers/front.jpg`);
    const script = `printf '%s\\n' "$@" >&2; exec sleep 3600`;
    const changes = new Changes();
    const supervisor = new ReceiverSupervisor({
      kind: { ...upnp, program: 'sh', launch: () => ({ args: ['-c', script, 'sh', ...lines], pcm: 'self' }) },
      stateDir: dir,
      settings: {
        playerId: 'kitchen',
        name: 'Kitchen',
        output: { kind: 'fifo', path: `${dir}/out.pcm` },
        listenHost: '127.0.0.1',
      },
    });
    supervisor.onEvent(() => changes.notify());
    t.teardown(() => supervisor.stop());
    await supervisor.start();
    const metadata = await waitFor(
      () => supervisor.status().metadata.artwork && supervisor.status().metadata,
      undefined,
      {
        what: 'the cover in the metadata',
        changes,
      },
    );
    t.match(metadata, { title: 'Blue Tone', artwork: { mime: 'image/jpeg' } });
    t.ok(metadata.artwork?.data.equals(JPEG));
    await supervisor.stop();
    t.same(supervisor.status().metadata.artwork, null, 'gone once the receiver stopped');
  },
);

t.test('gmediarender in a network namespace: the cover a sender names is fetched from its media server', async (t) => {
  const missing = gmediarenderMissing();
  if (missing) {
    t.comment(`${missing}: the cover through gmediarender goes unverified`);
    return;
  }
  const net = vethNetwork(t, 'ua', 244);
  if (!net.ok) {
    t.comment(`network namespaces cannot be made here (${net.why}): the cover through gmediarender goes unverified`);
    return;
  }
  const dir = tempDir('azc-upnp-art-ns-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const fifo = path.join(dir, 'out.pcm');
  execFileSync('mkfifo', ['-m', '600', fifo]);
  const reader = new PcmReader(fifo);
  t.teardown(() => reader.close());
  const media = await mediaServer(t, net.hostAddress, dir, JPEG);
  const lines: string[] = [];
  const changes = new Changes();
  const supervisor = new ReceiverSupervisor({
    kind: upnp,
    stateDir: path.join(dir, 'state'),
    settings: {
      playerId: 'kitchen',
      name: 'Kitchen',
      output: { kind: 'fifo', path: fifo },
      listenHost: net.address,
      listenInterface: net.nsIf,
    },
    prefix: ['ip', 'netns', 'exec', net.ns],
    log: (_level, message) => {
      lines.push(message);
      changes.notify();
    },
  });
  supervisor.onEvent(() => changes.notify());
  t.teardown(() => supervisor.stop());
  await supervisor.start();
  const location = await waitFor(() => rendererLocations(lines)[0], undefined, { what: 'the renderer', changes });
  await (await ControlPoint.open(location)).cast(media, {
    title: 'Blue Tone',
    artist: 'Sox',
    album: 'Loop',
  });
  const artwork = await waitFor(() => supervisor.status().metadata.artwork, undefined, { what: 'the cover', changes });
  t.equal(artwork.mime, 'image/jpeg');
  t.ok(artwork.data.equals(JPEG), "the media server's cover, at the URL the DIDL-Lite named");
  t.match(supervisor.status().metadata, { title: 'Blue Tone', album: 'Loop' }, 'beside the titles');
});
