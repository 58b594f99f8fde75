// Which AirPlay the receiver runs, asked of the installed shairport-sync once at each start (`-V`) and of nqptp's
// shared memory: Debian's 3.3.8 runs as AirPlay 1; an AirPlay 2 build runs as AirPlay 2 while nqptp runs, as AirPlay 1
// without it where it can be told to (5.1 on), and is refused naming nqptp where it cannot (4.x). Neither an AirPlay 2
// build nor nqptp can be installed here (Debian ships neither): those builds are a stand-in program that prints
// their `-V` line and then waits, and nqptp is a file of the test's own named as the kind's `nqptpShm`.
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { Casting } from '../../daemon/domain/playback/casting.js';
import { airplayDeviceId, airplayKind } from '../../drivers/receivers/shairport.js';
import { parseVersion, probeShairport } from '../../drivers/receivers/shairport-build.js';
import { findProgram, type ReceiverEvent, ReceiverSupervisor } from '../../drivers/receivers/supervisor.js';
import { tempDir } from '../helpers/daemon.js';
import { isDown, isUp, receiverFolders } from '../helpers/receiver-checks.js';
import { Changes, waitFor } from '../helpers/wait-for.js';

const DEBIAN_LINE =
  '3.3.8-libdaemon-OpenSSL-Avahi-ALSA-jack-pa-dummy-stdout-pipe-soxr-convolution-metadata-mqtt-dbus-mpris-sysconfdir:/etc';
/** What shairport-sync 4.3.7 and 5.2.1 built with AirPlay 2 print for `-V`. */
const AIRPLAY2_4 = '4.3.7-AirPlay2-smi10-OpenSSL-Avahi-ALSA-stdout-pipe-soxr-metadata-sysconfdir:/etc';
const AIRPLAY2_5 = '5.2.1-AirPlay2-smi10-FFmpeg-OpenSSL-Avahi-ALSA-stdout-pipe-soxr-metadata-sysconfdir:/etc';

/**
 * A folder holding a stand-in `shairport-sync` that prints `line` for `-V` (counting each time in `asked`) and
 * otherwise waits until it is stopped; and a place for nqptp's shared memory, there once `nqptp()` was called.
 */
function standIn(t: Test, line: string) {
  const dir = tempDir('azc-airplay-build-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const asked = path.join(dir, 'asked');
  const script = [
    '#!/bin/sh',
    '# Stands in for a shairport-sync built with AirPlay 2, which Debian does not ship.',
    `if [ "$1" = "-V" ]; then echo . >> '${asked}'; echo '${line}'; exit 0; fi`,
    'exec sleep 600',
    '',
  ].join('\n');
  writeFileSync(path.join(dir, 'shairport-sync'), script, { mode: 0o700 });
  const shm = path.join(dir, 'nqptp-shm');
  return {
    dir,
    shm,
    kind: airplayKind({ nqptpShm: shm }),
    /** nqptp "runs": its shared memory is there. */
    nqptp: () => writeFileSync(shm, Buffer.alloc(64), { mode: 0o644 }),
    /** How many times `-V` was asked. */
    asked: () => (existsSync(asked) ? readFileSync(asked, 'utf8').split('\n').filter(Boolean).length : 0),
  };
}

/** The stand-in under the receiver supervisor, its PCM on a FIFO; each event it gives goes to `events`. */
function supervised(t: Test, program: ReturnType<typeof standIn>, playerId = 'kitchen') {
  const { dir, fifo } = receiverFolders(t, 'azc-airplay-build-state');
  const events: ReceiverEvent[] = [];
  const changes = new Changes();
  const supervisor = new ReceiverSupervisor({
    kind: program.kind,
    stateDir: dir,
    settings: { playerId, name: 'Kitchen', output: { kind: 'fifo', path: fifo }, listenHost: '127.0.0.1' },
    searchPath: program.dir,
    timing: { restartFirstMs: 10 },
  });
  supervisor.onEvent((event) => {
    events.push(event);
    changes.notify();
  });
  t.teardown(() => supervisor.stop());
  const conf = () => readFileSync(path.join(dir, 'players', playerId, 'airplay', 'shairport-sync.conf'), 'utf8');
  return { supervisor, events, changes, conf, stateDir: dir };
}

t.test('the -V line gives the version and the build flags, a version built from git included', async (t) => {
  t.same(parseVersion(`${DEBIAN_LINE}\n`), {
    version: '3.3.8',
    major: 3,
    minor: 3,
    features: DEBIAN_LINE.split('-').slice(1),
  });
  const git = parseVersion('4.3.8-dev-12-g1a2b3c4-AirPlay2-smi10-OpenSSL-Avahi');
  t.equal(git.version, '4.3.8');
  t.ok(git.features.includes('AirPlay2'), 'AirPlay2 among the flags');
  t.throws(() => parseVersion('shairport-sync: unknown option'), /it printed no version/);
});

t.test('Debian’s shairport-sync runs as AirPlay 1, nqptp or not', async (t) => {
  let program: string;
  try {
    program = findProgram(airplayKind());
  } catch {
    t.comment('shairport-sync is not installed here: Debian’s build goes unchecked');
    return;
  }
  const { shm, nqptp } = standIn(t, DEBIAN_LINE);
  const without = await probeShairport(program, shm);
  t.equal(without.variant, 'AirPlay 1');
  t.match(without.version, /^3\./, 'Debian 12’s 3.3.8');
  t.notOk(without.features.includes('AirPlay2'), 'built without AirPlay 2');
  nqptp();
  t.equal((await probeShairport(program, shm)).variant, 'AirPlay 1', 'a build without AirPlay 2 ignores nqptp');
});

t.test('an AirPlay 2 build with nqptp running runs as AirPlay 2 under a device id of the player', async (t) => {
  const program = standIn(t, AIRPLAY2_4);
  program.nqptp();
  const playerId = randomUUID();
  const r = supervised(t, program, playerId);
  await r.supervisor.start();
  t.equal(r.supervisor.phase, 'running');
  t.equal(r.supervisor.variant, 'AirPlay 2');
  const conf = r.conf();
  t.match(conf, `  airplay_device_id = ${airplayDeviceId(playerId)};\n`, 'its own device id');
  t.match(airplayDeviceId(playerId), /^0x[0-9A-F]{12}L$/, 'a 48-bit id as a libconfig 64-bit integer');
  t.notMatch(conf, 'service_type', 'shairport-sync 4 has no service_type');
  t.notMatch(conf, 'stdout = {', 'shairport-sync 4 writes 44.1 kHz 16-bit to stdout without being told');
});

t.test('an AirPlay 2 build of shairport-sync 4 without nqptp is refused, naming nqptp', async (t) => {
  const program = standIn(t, AIRPLAY2_4);
  const r = supervised(t, program);
  await t.rejects(r.supervisor.start(), {
    name: 'PlaybackError',
    code: 'engine-missing',
    message:
      'shairport-sync 4.3.7 is built for AirPlay 2 and needs nqptp running (not in Debian: build it from ' +
      `https://github.com/mikebrady/nqptp and enable its service); ${program.shm}, which nqptp makes, is missing or unreadable`,
  });
  t.equal(r.supervisor.phase, 'stopped');
  t.same(r.events, [], 'it was never started');
});

t.test('an AirPlay 2 build of shairport-sync 5 runs as AirPlay 1 without nqptp and as AirPlay 2 with it', async (t) => {
  const program = standIn(t, AIRPLAY2_5);
  const r = supervised(t, program);
  await r.supervisor.start();
  t.equal(r.supervisor.variant, 'AirPlay 1');
  t.match(r.conf(), '  service_type = "classic";\n', 'told to run as AirPlay 1');
  t.notMatch(r.conf(), 'airplay_device_id', 'AirPlay 1 has no device id');
  t.match(
    r.conf(),
    'stdout = {\n  output_rate = 44100;\n  output_format = "S16_LE";\n  output_channels = 2;\n};\n',
    'the FIFO’s format asked for',
  );
  await r.supervisor.stop();
  program.nqptp();
  await r.supervisor.start();
  t.equal(r.supervisor.variant, 'AirPlay 2', 'asked again at the next start');
  t.match(r.conf(), '  service_type = "airplay2";\n');
  t.match(r.conf(), 'output_format = "S16_LE";', 'AirPlay 2’s 32-bit default is not taken');
});

t.test('the program is asked once a start: not again at a restart', async (t) => {
  const program = standIn(t, AIRPLAY2_4);
  program.nqptp();
  const r = supervised(t, program);
  await r.supervisor.start();
  t.equal(program.asked(), 1);
  process.kill(r.supervisor.pid!, 'SIGKILL');
  await waitFor(() => r.events.some(isDown), undefined, { what: 'the exit', changes: r.changes });
  await waitFor(() => r.events.filter(isUp).length === 2, undefined, { what: 'the restart', changes: r.changes });
  t.equal(program.asked(), 1, 'the restart reused what the start found');
  t.equal(r.supervisor.variant, 'AirPlay 2');
  await r.supervisor.stop();
  await r.supervisor.start();
  t.equal(program.asked(), 2, 'a new start asks again');
});

t.test('the casting runtime shows which AirPlay runs, and why an AirPlay 2 build without nqptp does not', async (t) => {
  const program = standIn(t, AIRPLAY2_4);
  const { dir, fifo } = receiverFolders(t, 'azc-airplay-build-casting');
  const playerId = randomUUID();
  const changes = new Changes();
  const casting = new Casting({
    stateDir: dir,
    listenHost: '127.0.0.1',
    player: (id) => (id === playerId ? { name: 'Kitchen', output: { kind: 'fifo', path: fifo } } : undefined),
    pauseMpd: async () => undefined,
    setGroupVolume: async () => undefined,
    onChange: () => changes.notify(),
    kinds: { airplay: program.kind },
    searchPath: program.dir,
  });
  t.teardown(() => casting.stop());
  const airplay = [{ kind: 'airplay' as const, server: null }];
  await casting.apply(playerId, airplay);
  t.same(casting.state(playerId, 'airplay'), {
    phase: 'stopped',
    cast: 'idle',
    detail:
      'shairport-sync 4.3.7 is built for AirPlay 2 and needs nqptp running (not in Debian: build it from ' +
      `https://github.com/mikebrady/nqptp and enable its service); ${program.shm}, which nqptp makes, is missing or unreadable`,
  });
  program.nqptp();
  await casting.apply(playerId, []);
  await casting.apply(playerId, airplay);
  t.same(casting.state(playerId, 'airplay'), { phase: 'running', cast: 'idle', detail: null, variant: 'AirPlay 2' });
});
