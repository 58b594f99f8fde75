// Debian's gmediarender run by the receiver supervisor in a network namespace the test makes (libupnp refuses the
// loopback interface), driven by a small UPnP control point in the test (plain SOAP to the control URLs of the
// device description): a WAV served from the test's side of the veth pair reaches the FIFO at full scale, the
// sender's volume, titles and state come out of the supervisor, a killed one comes back with back-off, a stopped one
// lets go of the FIFO, and a machine without it is told which package to install.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { type ReceiverEvent, ReceiverSupervisor } from '../../drivers/receivers/supervisor.js';
import { portOf, upnp, uuidOf } from '../../drivers/receivers/upnp.js';
import { tempDir } from '../helpers/daemon.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { PcmReader } from '../helpers/pcm-reader.js';
import { refusedWithoutProgram, restartsWithBackOff, stopsAndLetsGo } from '../helpers/receiver-checks.js';
import {
  ControlPoint,
  gmediarenderMissing,
  mediaServer,
  rendererLocations,
  TONE_FRAMES,
} from '../helpers/upnp-control-point.js';
import { vethNetwork } from '../helpers/veth-network.js';
import { Changes, waitFor } from '../helpers/wait-for.js';

/** The tone's amplitude: a sine at half of full scale, so 16-bit samples peak at 16 384. */
const TONE_PEAK = 16384;

const missing = gmediarenderMissing();

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
  /** Every line the supervisors logged. */
  const logged: string[] = [];
  /**
   * A renderer for player `playerId` in the namespace, playing into `output`, and a control point for each of its
   * runs, found from what its supervisor logged (rendererLocations).
   */
  const renderer = (playerId: string, name: string, output: string, clock?: ManualClock) => {
    const lines: string[] = [];
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
        lines.push(message);
        changes.notify();
      },
    });
    t.teardown(() => supervisor.stop());
    /** A control point for gmediarender's `run`-th run (1: the first), once that run is ready. */
    const controlPoint = async (run = 1) =>
      ControlPoint.open(
        await waitFor(() => rendererLocations(lines)[run - 1], undefined, {
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
  ) => cp.cast(uri, tags);
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

test('a volume and a pause given from this side reach the renderer, whose control points see them', async (t, {
  supervisor,
  changes,
  event,
  events,
  castSecond,
}) => {
  const cp = await castSecond();
  /** A state variable as the renderer answers a control point that asks for it. */
  const asked = async (service: string, action: string, variable: string) => {
    const answer = await cp.call(service, action, { InstanceID: '0', Channel: 'Master' });
    return new RegExp(`<${variable}>([^<]*)</${variable}>`).exec(answer)?.[1];
  };
  // A sender that muted reads as volume 0; a volume given from here unmutes it.
  await cp.call('RenderingControl', 'SetVolume', { Channel: 'Master', DesiredVolume: '60' });
  await waitFor(() => supervisor.status().volume === 0.6, undefined, { what: 'the sender volume 0.6', changes });
  await cp.call('RenderingControl', 'SetMute', { Channel: 'Master', DesiredMute: '1' });
  await waitFor(() => supervisor.status().volume === 0, undefined, { what: 'the muted sender as volume 0', changes });
  t.ok(supervisor.sendVolume(0.42), 'the volume is given');
  await waitFor(() => supervisor.status().volume === 0.42, undefined, { what: 'the volume reported back', changes });
  t.equal(await asked('RenderingControl', 'GetVolume', 'CurrentVolume'), '42', "the control point's volume");
  t.equal(await asked('RenderingControl', 'GetMute', 'CurrentMute'), '0', 'no longer muted');
  const seen = events.length;
  t.ok(supervisor.pauseSender(), 'the pause is asked');
  await event('the paused state', isState('paused'), seen);
  t.equal(await asked('AVTransport', 'GetTransportInfo', 'CurrentTransportState'), 'PAUSED_PLAYBACK');
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

test('a sender that plays the same track again after a stop shows its titles again', async (t, {
  supervisor,
  event,
  events,
  changes,
  castSecond,
  cast,
}) => {
  const cp = await castSecond();
  await waitFor(() => supervisor.status().metadata.title, undefined, { what: 'the title', changes });
  let seen = events.length;
  await cp.call('AVTransport', 'Stop');
  await event('the idle state', isState('idle'), seen);
  t.equal(supervisor.status().metadata.title, null, 'a stopped cast has no titles');
  seen = events.length;
  // The same URI and DIDL-Lite: gmediarender logs no new CurrentTrackMetaData for them.
  await cast(cp);
  await event('the playing state again', isState('playing'), seen);
  await waitFor(() => supervisor.status().metadata.title, undefined, { what: 'the title again', changes });
  t.match(supervisor.status().metadata, { title: 'Blue Tone', artist: 'Sox Combo', album: 'Loopback' });
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
