// Debian's squeezelite run by the receiver supervisor, against a stand-in slimproto server on loopback: it joins as
// the player, its PCM reaches the FIFO, the server's volume is the sender's volume (the samples stay at full scale
// unless the server asks for a digital volume), a killed one comes back with back-off, a stopped one lets go of the
// FIFO, and a machine without it is told which package to install.
import { rmSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { macOf, squeezelite } from '../../drivers/receivers/squeezelite.js';
import { type ReceiverEvent, ReceiverSupervisor } from '../../drivers/receivers/supervisor.js';
import { tempDir } from '../helpers/daemon.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { PcmReader } from '../helpers/pcm-reader.js';
import {
  isDown,
  isUp,
  receiverFolders,
  refusedWithoutProgram,
  restartsWithBackOff,
  soxTone,
  stopsAndLetsGo,
} from '../helpers/receiver-checks.js';
import { SlimprotoServer, UNITY_GAIN } from '../helpers/slimproto-server.js';
import { Changes, waitFor } from '../helpers/wait-for.js';

/** The tone's amplitude: a sine at half of full scale, so 16-bit samples peak at 16 384. */
const TONE_PEAK = 16384;

async function rig(
  t: Test,
  options: { clock?: ManualClock; searchPath?: string; rate?: number; seconds?: number } = {},
) {
  const { dir, fifo } = receiverFolders(t, 'azc-receiver');
  const tone = path.join(dir, 'tone.flac');
  // squeezelite writes to the FIFO as fast as it is read: the tone is long enough that the stream still plays whenever
  // a test reads the state, however busy the machine (a 2 s tone had ended, and the receiver read idle, before one
  // such read under load). A test that counts the frames asks for a length of its own.
  soxTone(tone, options.seconds ?? 30, options.rate);
  const server = await SlimprotoServer.start(tone);
  t.teardown(() => server.close());
  const reader = new PcmReader(fifo);
  t.teardown(() => reader.close());
  const events: ReceiverEvent[] = [];
  const changes = new Changes();
  const supervisor = new ReceiverSupervisor({
    kind: squeezelite,
    stateDir: dir,
    settings: {
      playerId: 'kitchen',
      name: 'Kitchen',
      output: { kind: 'fifo', path: fifo },
      listenHost: '127.0.0.1',
      server: server.address,
    },
    clock: options.clock,
    searchPath: options.searchPath ?? process.env.PATH,
  });
  supervisor.onEvent((event) => {
    events.push(event);
    changes.notify();
  });
  t.teardown(() => supervisor.stop());
  const event = <T extends ReceiverEvent>(what: string, match: (e: ReceiverEvent) => e is T, since = 0) =>
    waitFor(() => events.slice(since).find(match), undefined, { what, changes });
  return { supervisor, server, reader, events, event, fifo };
}

const isVolume = (e: ReceiverEvent): e is Extract<ReceiverEvent, { type: 'volume' }> => e.type === 'volume';
const isPlaying = (e: ReceiverEvent): e is Extract<ReceiverEvent, { type: 'state' }> =>
  e.type === 'state' && e.state === 'playing';

t.test('squeezelite joins the server as the player and the stream it is sent arrives on the FIFO', async (t) => {
  const { supervisor, server, reader, event } = await rig(t);
  await supervisor.start();
  const hello = await server.hello();
  t.equal(hello.mac, macOf('kitchen'), 'the server knows the player by the MAC made from its id');
  // With `-o -` squeezelite's gain is 0 until the first audg: a server sends one when a player connects.
  server.volume(UNITY_GAIN, false);
  server.play();
  await reader.tone(TONE_PEAK - 2, 'the tone on the FIFO');
  await event('the playing state', isPlaying);
  t.equal(supervisor.status().state, 'playing');
});

t.test('the server volume is reported as the sender volume, the samples staying at full scale', async (t) => {
  const { supervisor, server, reader, event } = await rig(t);
  await supervisor.start();
  await server.hello();
  // A server whose player volume is fixed at 100% still sends its volume, with `adjust` off: 3840 (−24.6 dB) is
  // what Lyrion sends for volume 50 (its dBToFixed of 50·(50−100)/101 dB).
  server.volume(3840, false);
  const volume = await event('the sender volume', isVolume);
  t.equal(volume.volume, 0.5, 'volume 50 on the server is 0.5');
  t.equal(supervisor.status().volume, 0.5);
  server.play();
  await reader.tone(TONE_PEAK - 2, 'the tone at full scale on the FIFO');
  await event('the playing state', isPlaying);
  // The stream ran out and a mebibyte of silence followed it: every sample of the tone was read.
  await server.stat('STMu');
  await reader.more(1 << 20, 'the silence after the tone');
  t.ok(reader.peak <= TONE_PEAK + 1, `nothing louder than the tone arrived (${reader.peak})`);
});

t.test(
  'a server that asks for digital volume gets attenuated samples: why the player must be fixed at 100%',
  async (t) => {
    const { supervisor, server, reader, event } = await rig(t);
    await supervisor.start();
    await server.hello();
    // 0x8000 is half the amplitude (−6 dB): what Lyrion sends with its default digital volume control on.
    server.volume(0x8000, true);
    await event('the sender volume', isVolume);
    server.play();
    await server.stat('STMu');
    await reader.more(1 << 20, 'the silence after the tone');
    t.ok(
      reader.peak > TONE_PEAK / 2 - 16 && reader.peak < TONE_PEAK / 2 + 16,
      `the samples peak at half the tone (${reader.peak})`,
    );
  },
);

t.test('a 48 kHz stream reaches the FIFO resampled to 44.1 kHz, at full scale', async (t) => {
  const { supervisor, server, reader } = await rig(t, { rate: 48_000, seconds: 2 });
  await supervisor.start();
  await server.hello();
  server.volume(UNITY_GAIN, false);
  server.play();
  await server.stat('STMu');
  await reader.more(1 << 20, 'the silence after the tone');
  // Two seconds of tone are 88 200 frames at 44.1 kHz (96 000 at 48 kHz, 48 000 at 24 kHz); the resampler's
  // filter adds a few frames of ringing at each end.
  t.ok(Math.abs(reader.soundFrames - 88_200) < 500, `two seconds at 44.1 kHz (${reader.soundFrames} frames)`);
  t.ok(reader.peak >= TONE_PEAK - 2, `no attenuation (${reader.peak})`);
});

t.test('a killed squeezelite is restarted after 1 s, then after 2 s', async (t) => {
  const clock = new ManualClock(1_000_000);
  const { supervisor, server, events, event } = await rig(t, { clock });
  await supervisor.start();
  await restartsWithBackOff(t, { supervisor, clock, events, event }, 'squeezelite', async (run) => {
    await server.hello(run);
  });
});

t.test('a receiver stopped while it waits to restart stays stopped', async (t) => {
  const clock = new ManualClock(1_000_000);
  const { supervisor, server, events, event } = await rig(t, { clock });
  await supervisor.start();
  await server.hello(1);
  process.kill(supervisor.pid!, 'SIGKILL');
  await event('the exit', isDown);
  await supervisor.stop();
  const seen = events.length;
  clock.advance(60_000);
  t.equal(supervisor.phase, 'stopped');
  t.equal(supervisor.reason, null);
  t.same(events.slice(seen).filter(isUp), [], 'no restart came');
  t.equal(clock.pending, 0, 'no timer left');
});

t.test('stopping squeezelite ends it and lets go of the FIFO', async (t) => {
  const { supervisor, server, reader } = await rig(t);
  await supervisor.start();
  await server.hello();
  server.volume(UNITY_GAIN, false);
  server.play();
  await reader.tone(TONE_PEAK - 2, 'the tone on the FIFO');
  await stopsAndLetsGo(t, supervisor, reader);
});

t.test('without squeezelite in PATH, starting is refused naming the Debian package', async (t) => {
  const empty = tempDir('azc-no-squeezelite-');
  t.teardown(() => rmSync(empty, { recursive: true, force: true }));
  const { supervisor, server } = await rig(t, { searchPath: `${empty}:/nonexistent` });
  await refusedWithoutProgram(t, supervisor, {
    program: 'squeezelite',
    kind: 'squeezelite',
    debianPackage: 'squeezelite',
  });
  t.equal(server.hellos.length, 0, 'nothing connected');
});
