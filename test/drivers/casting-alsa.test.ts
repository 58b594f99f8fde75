// Casting into a stream player whose output is an ALSA device: while a receiver runs the daemon holds the device (one
// aplay on alsa-lib's `null` PCM, which needs no sound card), the player's MPD is moved to its private FIFO, and the
// switch passes MPD's PCM or the cast's, one at a time; switched off, aplay ends before MPD gets the device back.
// Debian's squeezelite casts from a stand-in slimproto server; the test writes PCM into the private FIFO as MPD would.
// Without alsa-utils a stand-in named aplay checks the arguments it is given and plays through SoX's ALSA output.

import { randomUUID } from 'node:crypto';
import { constants, openSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { Socket } from 'node:net';
import path from 'node:path';
import t, { type Test } from 'tap';
import { Casting } from '../../daemon/domain/playback/casting.js';
import type { ReceiverRunState } from '../../daemon/domain/playback/receiver-runtime.js';
import type { StreamOutput } from '../../daemon/domain/shared/index.js';
import { createLogger } from '../../daemon/log.js';
import { castFifo, playerFiles } from '../../drivers/mpd/config.js';
import { aplaySearchPath } from '../helpers/aplay-stand-in.js';
import { tempDir } from '../helpers/daemon.js';
import { soxTone } from '../helpers/receiver-checks.js';
import { SlimprotoServer, UNITY_GAIN } from '../helpers/slimproto-server.js';
import { Changes, waitFor } from '../helpers/wait-for.js';

/** One second of PCM (44.1 kHz, 16-bit, stereo): more than a pipe holds, so aplay read what went past it. */
const SECOND = 44_100 * 4;

/** Whether the process `pid` is there. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A stream player on ALSA's null device, a slimproto server playing a tone, and the casting runtime with recording
 * stand-ins for the playlist's pause, the group volume and MPD's move; `mpdWrite` writes PCM where MPD plays now.
 */
async function rig(t: Test, options: { searchPath?: string } = {}) {
  const dir = tempDir('azc-casting-alsa-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const tone = path.join(dir, 'tone.flac');
  soxTone(tone, 10);
  const server = await SlimprotoServer.start(tone);
  t.teardown(() => server.close());
  const playerId = randomUUID();
  const player: { name: string; output: StreamOutput } = { name: 'Kitchen', output: { kind: 'alsa', device: 'null' } };
  const privateFifo = castFifo(playerFiles(dir, playerId));
  const changes = new Changes();
  const pauses: number[] = [];
  /** Each move of MPD: where to, and whether an aplay still ran when it was asked. */
  const routes: Array<{ output: StreamOutput | null; aplayRan: boolean }> = [];
  /** Squeezelite's state each time a change was told. */
  const told: ReceiverRunState[] = [];
  /** What the runtime and aplay's keeper logged, a JSON line each. */
  const logged: string[] = [];
  let writer: Socket | undefined;
  t.teardown(() => writer?.destroy());
  const searchPath = options.searchPath ?? aplaySearchPath(t);
  const casting: Casting = new Casting({
    stateDir: dir,
    listenHost: '127.0.0.1',
    player: (id) => (id === playerId ? player : undefined),
    pauseMpd: async () => {
      pauses.push(Date.now());
      changes.notify();
    },
    setGroupVolume: async () => undefined,
    routeMpd: async (id, output) => {
      t.equal(id, playerId, 'the MPD moved is the player’s');
      const pid = lastPid;
      routes.push({ output, aplayRan: pid !== undefined && alive(pid) });
      changes.notify();
    },
    onChange: (id, kind) => {
      if (id === playerId && kind === 'squeezelite') told.push(casting.state(id, kind));
      changes.notify();
    },
    timing: { restartFirstMs: 50 },
    searchPath,
    log: createLogger('debug', { write: (line: string) => void logged.push(line) }),
  });
  t.teardown(() => casting.stop());
  let lastPid: number | undefined;
  const device = () => {
    const out = casting.deviceOutput(playerId);
    if (out?.pid !== undefined) lastPid = out.pid;
    return out;
  };
  const counts = (source: 'mpd' | 'squeezelite') => casting.pcmCounts(playerId, source) ?? { forwarded: 0, seen: 0 };
  const until = <T>(what: string, condition: () => T) => waitFor(condition, undefined, { what, changes });
  /** Writes `bytes` of PCM into the private FIFO, as the player's MPD does while receivers run. */
  const mpdWrite = (bytes: number) => {
    if (!writer) {
      const fd = openSync(privateFifo, constants.O_WRONLY | constants.O_NONBLOCK);
      writer = new Socket({ fd, readable: false, writable: true });
    }
    const pcm = Buffer.alloc(bytes);
    for (let i = 0; i + 1 < bytes; i += 2) pcm.writeInt16LE(1000, i);
    writer.write(pcm);
  };
  const apply = async () => {
    await casting.apply(playerId, [{ kind: 'squeezelite', server: server.address }]);
    device();
  };
  const state = () => casting.state(playerId, 'squeezelite');
  return {
    casting,
    server,
    player,
    playerId,
    privateFifo,
    pauses,
    routes,
    told,
    logged,
    counts,
    until,
    mpdWrite,
    apply,
    state,
    device,
  };
}

t.test("switched on, a receiver moves the player's MPD to its private FIFO and aplay plays the device", async (t) => {
  const r = await rig(t);
  await r.apply();
  t.same(
    r.routes,
    [{ output: { kind: 'fifo', path: r.privateFifo }, aplayRan: false }],
    'MPD was moved before aplay opened the device',
  );
  t.equal(statSync(r.privateFifo).mode & 0o777, 0o600, 'the private FIFO is the daemon user’s alone');
  t.ok(statSync(r.privateFifo).isFIFO());
  const pid = r.device()?.pid;
  t.ok(pid !== undefined && alive(pid), 'aplay runs');
  t.equal(r.state().phase, 'running', 'squeezelite runs');
  r.mpdWrite(2 * SECOND);
  await waitFor(() => r.counts('mpd').forwarded >= 2 * SECOND, undefined, { what: "MPD's PCM let through" });
  await waitFor(() => (r.device()?.written ?? 0) >= 2 * SECOND, undefined, { what: "MPD's PCM taken by aplay" });
  t.equal(r.counts('squeezelite').forwarded, 0, 'nothing of the idle receiver reached the device');
});

t.test("a cast takes the device from MPD, MPD's PCM is dropped meanwhile, and MPD gets it back", async (t) => {
  const r = await rig(t);
  await r.apply();
  await r.server.hello();
  r.server.volume(UNITY_GAIN, false);
  r.server.play();
  await r.until('the playlist paused for the cast', () => r.pauses.length === 1);
  await waitFor(() => r.counts('squeezelite').forwarded >= SECOND, undefined, { what: "the cast's PCM let through" });
  const taken = r.counts('squeezelite').forwarded;
  await waitFor(() => (r.device()?.written ?? 0) >= taken, undefined, { what: "the cast's PCM taken by aplay" });
  // MPD writes while the cast holds the device (as a paused MPD may still flush): read, dropped, not passed.
  const mpdSeen = r.counts('mpd').seen;
  r.mpdWrite(SECOND / 4);
  await waitFor(() => r.counts('mpd').seen >= mpdSeen + SECOND / 4, undefined, { what: "MPD's PCM read" });
  t.equal(r.counts('mpd').forwarded, 0, "none of MPD's PCM reached the device during the cast");
  await r.casting.mpdStarted(r.playerId);
  const cast = r.counts('squeezelite').forwarded;
  r.mpdWrite(SECOND);
  await waitFor(() => r.counts('mpd').forwarded >= SECOND, undefined, { what: "MPD's PCM let through again" });
  await waitFor(() => (r.device()?.written ?? 0) >= cast + SECOND, undefined, { what: 'both taken by aplay' });
  t.equal(r.counts('squeezelite').forwarded, cast, "none of the cast's PCM passed once MPD took the device");
});

t.test('switched off, aplay ends before the player’s MPD is given its device back', async (t) => {
  const r = await rig(t);
  await r.apply();
  const pid = r.device()!.pid!;
  await r.casting.apply(r.playerId, []);
  t.same(r.routes.at(-1), { output: null, aplayRan: false }, 'MPD moved back once aplay had ended');
  t.equal(r.routes.length, 2);
  t.notOk(alive(pid), 'aplay is gone');
  t.same(
    r.logged.filter((line) => line.includes('killing it')),
    [],
    'it ended on its stop, waiting for PCM as it was, not killed at the bound',
  );
  t.equal(r.casting.deviceOutput(r.playerId), undefined, 'the daemon holds no device');
  t.same(r.state(), { phase: 'stopped', cast: 'idle', detail: null });
});

t.test(
  'a killed aplay is restarted, the receiver saying why meanwhile, and the switch feeds the new one',
  async (t) => {
    const r = await rig(t);
    await r.apply();
    // Squeezelite connected and its report heard (the same list again waits for the runtime's earlier work): from
    // here on nothing but aplay's own change tells the receiver's state.
    await r.server.hello();
    await r.apply();
    const pid = r.device()!.pid!;
    process.kill(pid, 'SIGKILL');
    const down = await r.until('aplay’s exit told', () => r.told.find((s) => s.detail !== null));
    t.match(down, { phase: 'running', detail: /^aplay on null was killed by SIGKILL.*; restarting in 50 ms$/ });
    await r.until('aplay back told', () => r.told.at(-1)?.detail === null);
    const restarted = await waitFor(
      () => {
        const now = r.device()?.pid;
        return now !== undefined && now !== pid ? now : undefined;
      },
      undefined,
      { what: 'a new aplay' },
    );
    t.ok(alive(restarted), 'the new aplay runs');
    const written = r.device()!.written;
    r.mpdWrite(2 * SECOND);
    await waitFor(() => r.device()!.written >= written + SECOND, undefined, {
      what: "MPD's PCM taken by the new aplay",
    });
    t.equal(r.routes.length, 1, 'MPD was not moved again');
  },
);

t.test('without aplay, the receiver says to install alsa-utils and MPD keeps the device', async (t) => {
  // squeezelite alone in the search path.
  const bin = tempDir('azc-no-aplay-');
  t.teardown(() => rmSync(bin, { recursive: true, force: true }));
  symlinkSync('/usr/bin/squeezelite', path.join(bin, 'squeezelite'));
  const r = await rig(t, { searchPath: bin });
  await r.apply();
  t.match(r.state(), {
    phase: 'stopped',
    detail: /aplay is not installed.*apt-get install --no-install-recommends alsa-utils/,
  });
  t.same(r.routes, [], 'MPD was not moved');
  t.equal(r.casting.deviceOutput(r.playerId), undefined);
});
