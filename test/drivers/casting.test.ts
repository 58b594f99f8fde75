// The casting runtime (daemon/domain/playback/casting.ts) with Debian's squeezelite against a stand-in slimproto
// server on loopback and a real FIFO: a cast pauses the playlist before its PCM reaches the FIFO, MPD or an
// announcement takes the output from it, the server's volume becomes the player's group volume, and the receiver
// follows the player's switches, name and life.

import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { Casting, type CastingDeps } from '../../daemon/domain/playback/casting.js';
import type { ReceiverRunState } from '../../daemon/domain/playback/receiver-runtime.js';
import type { StreamOutput } from '../../daemon/domain/shared/index.js';
import { createLogger } from '../../daemon/log.js';
import { macOf, squeezelite, squeezeliteReceiver } from '../../drivers/receivers/squeezelite.js';
import { tempDir } from '../helpers/daemon.js';
import { PcmReader } from '../helpers/pcm-reader.js';
import { receiverFolders, soxTone } from '../helpers/receiver-checks.js';
import { SlimprotoServer, UNITY_GAIN } from '../helpers/slimproto-server.js';
import { Changes, waitFor } from '../helpers/wait-for.js';

/** The tone's amplitude: a sine at half of full scale, so 16-bit samples peak at 16 384. */
const TONE_PEAK = 16384;
/** 3840 is what Lyrion sends for volume 50. */
const HALF_GAIN = 3840;

/**
 * The pid of the squeezelite playing as `playerId`: the one running in that player's folder (squeezelite cuts its
 * own command line into pieces as it reads it, so the MAC there is no longer whole).
 */
function squeezelitePid(playerId: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const program = readFileSync(`/proc/${entry}/cmdline`, 'latin1').split('\0')[0] ?? '';
      if (path.basename(program) === 'squeezelite' && readlinkSync(`/proc/${entry}/cwd`).includes(playerId))
        return Number(entry);
    } catch {
      // It ended while /proc was read, or is not ours to look at.
    }
  }
  return undefined;
}

/**
 * A stream player with a FIFO output read by the test, a slimproto server playing a tone, and the casting runtime
 * with recording stand-ins for the playlist's pause, the group volume and the change events. `holdPause`: the
 * playlist's pause does not finish until the test says; `serverVolume`: the receiver finds the server's JSON-RPC;
 * `toneSeconds`: the tone's length (10 s), which the FIFO's reader takes faster than real time.
 */
async function rig(
  t: Test,
  options: { holdPause?: boolean; kinds?: CastingDeps['kinds']; serverVolume?: boolean; toneSeconds?: number } = {},
) {
  const { dir, fifo } = receiverFolders(t, 'azc-casting');
  const tone = path.join(dir, 'tone.flac');
  soxTone(tone, options.toneSeconds ?? 10);
  const server = await SlimprotoServer.start(tone);
  t.teardown(() => server.close());
  const reader = new PcmReader(fifo);
  t.teardown(() => reader.close());
  const playerId = randomUUID();
  const player: { name: string; output: StreamOutput } = { name: 'Kitchen', output: { kind: 'fifo', path: fifo } };
  const changes = new Changes();
  /** Each pause of the playlist, with what had reached the FIFO and been set as volume when it was asked. */
  const pauses: Array<{ bytesOnFifo: number; volumes: number }> = [];
  const volumes: number[] = [];
  const told: ReceiverRunState[] = [];
  /** What the runtime and its supervisors logged, a JSON line each. */
  const logged: string[] = [];
  let release: () => void = () => undefined;
  const paused = new Promise<void>((resolve) => {
    release = resolve;
  });
  const casting = new Casting({
    stateDir: dir,
    listenHost: '127.0.0.1',
    player: (id) => (id === playerId ? player : undefined),
    pauseMpd: async (id) => {
      t.equal(id, playerId, 'the playlist paused is the player’s');
      pauses.push({ bytesOnFifo: reader.bytes, volumes: volumes.length });
      changes.notify();
      if (options.holdPause) await paused;
    },
    setGroupVolume: async (id, level) => {
      t.equal(id, playerId, 'the volume set is the player’s');
      volumes.push(level);
      changes.notify();
    },
    onChange: (id, kind) => {
      if (id === playerId && kind === 'squeezelite') told.push(casting.state(id, kind));
      changes.notify();
    },
    timing: { restartFirstMs: 50 },
    kinds: {
      // The stand-in's JSON-RPC is on its own port, not Lyrion's 9000.
      ...(options.serverVolume ? { squeezelite: squeezeliteReceiver(server.httpPort) } : {}),
      ...options.kinds,
    },
    log: createLogger('debug', { write: (line: string) => void logged.push(line) }),
  });
  t.teardown(() => casting.stop());
  const until = <T>(what: string, condition: () => T) => waitFor(condition, undefined, { what, changes });
  const counts = () => casting.pcmCounts(playerId, 'squeezelite') ?? { forwarded: 0, seen: 0 };
  /** Waits until `bytes` more of squeezelite's PCM were read than now. */
  const readMore = (bytes: number, what: string) => {
    const goal = counts().seen + bytes;
    return waitFor(() => counts().seen >= goal, undefined, { what });
  };
  const state = () => casting.state(playerId, 'squeezelite');
  const apply = () => casting.apply(playerId, [{ kind: 'squeezelite', server: server.address }]);
  /** Switches squeezelite on and plays the tone to it: resolves once its PCM is on the FIFO. */
  const cast = async () => {
    await apply();
    await server.hello();
    // With `-o -` squeezelite plays silence until the server's first volume, which a server sends on connection.
    server.volume(UNITY_GAIN, false);
    server.play();
    await reader.tone(TONE_PEAK - 2, 'the tone on the FIFO');
  };
  return {
    casting,
    fifo,
    tone,
    server,
    reader,
    player,
    playerId,
    pauses,
    volumes,
    told,
    logged,
    release,
    until,
    counts,
    readMore,
    state,
    apply,
    cast,
  };
}

t.test('a cast that begins pauses the playlist before any of its PCM reaches the FIFO, then plays', async (t) => {
  const r = await rig(t, { holdPause: true });
  await r.apply();
  t.equal(r.state().phase, 'running', 'squeezelite runs once switched on');
  await r.server.hello();
  r.server.volume(UNITY_GAIN, false);
  r.server.play();
  await r.until('the playlist to be paused', () => r.pauses.length === 1);
  t.equal(r.pauses[0]!.bytesOnFifo, 0, 'nothing had reached the FIFO when the pause was asked');
  // While the pause has not finished, the cast's PCM is read and dropped, none of it written to the FIFO.
  await r.readMore(1 << 17, "squeezelite's PCM read while the playlist pauses");
  t.equal(r.counts().forwarded, 0, 'none of it was let through');
  t.equal(r.reader.bytes, 0, 'the FIFO got nothing');
  r.release();
  await r.reader.tone(TONE_PEAK - 2, 'the tone on the FIFO once the playlist paused');
  t.equal(r.state().cast, 'playing');
  t.equal(r.casting.holder(r.playerId), 'squeezelite', 'the cast holds the output');
  t.equal(r.pauses.length, 1, 'one pause');
});

t.test('a playlist started by a person takes the output: the cast’s PCM no longer reaches the FIFO', async (t) => {
  const r = await rig(t);
  await r.cast();
  await r.casting.mpdStarted(r.playerId);
  const forwarded = r.counts().forwarded;
  await waitFor(() => r.reader.bytes >= forwarded, undefined, { what: 'what was let through before, on the FIFO' });
  await r.readMore(1 << 18, "squeezelite's PCM read after the playlist started");
  t.equal(r.counts().forwarded, forwarded, 'none of it was let through');
  t.equal(r.reader.bytes, forwarded, 'the FIFO got nothing more');
  t.equal(r.state().cast, 'idle', 'the dropped cast reads as idle');
  t.equal(r.casting.holder(r.playerId), 'mpd');
});

t.test('a cast that begins again after the playlist took over gets the output back', async (t) => {
  const r = await rig(t);
  await r.cast();
  await r.casting.mpdStarted(r.playerId);
  const forwarded = r.counts().forwarded;
  // The server stops and plays again: squeezelite, read and dropped meanwhile, reports the new track.
  const stats = r.server.stats.length;
  r.server.command('q');
  await r.server.stat('STMf', stats);
  r.server.play();
  await r.until('the playlist to be paused again', () => r.pauses.length === 2);
  await waitFor(() => r.counts().forwarded > forwarded, undefined, { what: 'the cast’s PCM let through again' });
  await waitFor(() => r.reader.bytes > forwarded, undefined, { what: 'the cast’s PCM on the FIFO again' });
  t.equal(r.state().cast, 'playing');
  t.equal(r.casting.holder(r.playerId), 'squeezelite');
});

t.test('an announcement holds the output during a cast, and gives it back to the cast after', async (t) => {
  const r = await rig(t);
  await r.cast();
  await r.casting.announcementStarted(r.playerId);
  t.equal(r.casting.holder(r.playerId), 'announcement');
  const forwarded = r.counts().forwarded;
  await waitFor(() => r.reader.bytes >= forwarded, undefined, { what: 'what was let through before, on the FIFO' });
  await r.readMore(1 << 18, "squeezelite's PCM read during the announcement");
  t.equal(r.counts().forwarded, forwarded, 'none of it was let through');
  t.equal(r.reader.bytes, forwarded, 'the FIFO got nothing from the cast');
  await r.casting.announcementEnded(r.playerId);
  await waitFor(() => r.reader.bytes > forwarded, undefined, { what: 'the cast’s PCM on the FIFO after' });
  t.equal(r.casting.holder(r.playerId), 'squeezelite');
  t.equal(r.pauses.length, 1, 'the playlist was paused once, when the cast began');
});

t.test(
  'the server’s volume sets the player’s group volume once the cast plays, and an echo sets nothing',
  async (t) => {
    const r = await rig(t);
    await r.cast();
    t.equal(r.pauses[0]!.volumes, 0, 'the volume the server sent on connection waited for the cast');
    await r.until('the volume of the cast', () => r.volumes.length === 1);
    r.server.volume(HALF_GAIN, false);
    await r.until('volume 50', () => r.volumes.length === 2);
    r.server.volume(HALF_GAIN, false);
    // 0x8000 is −6 dB: volume 88 on the server's curve.
    r.server.volume(0x8000, false);
    await r.until('volume 88', () => r.volumes.length === 3);
    t.same(r.volumes, [1, 0.5, 0.88], 'each level once; the repeated 50 set nothing');
  },
);

t.test(
  'a volume changed on this side goes to the music server while the cast holds the output, and its echo sets nothing',
  async (t) => {
    // A minute of tone: the cast goes on holding the output while the server's answers come back.
    const r = await rig(t, { serverVolume: true, toneSeconds: 60 });
    await r.apply();
    await r.server.hello();
    t.notOk(r.casting.groupVolumeChanged(r.playerId, 0.3), 'nothing is given while no cast holds the output');
    await r.cast();
    await r.until('the volume of the cast', () => r.volumes.length === 1);
    t.notOk(r.casting.groupVolumeChanged(r.playerId, 1), 'the volume the server has already is not given again');
    // A slider dragged here gives several levels before the server's first answer comes back.
    for (const level of [0.42, 0.2, 0.3, 0.35])
      t.ok(r.casting.groupVolumeChanged(r.playerId, level), `level ${level} is given`);
    await waitFor(() => r.server.mixer.at(-1)?.volume === 35, undefined, {
      what: 'the last level of the drag at the server',
      changes: r.server.changes,
    });
    t.same(r.server.mixer[0], { mac: macOf(r.playerId), volume: 42 }, "as the player's mixer volume, 0..100");
    // The server's own change after them: reports come in order, so once it moved the rooms every echo was heard.
    r.server.volume(HALF_GAIN, false);
    await r.until('volume 50 from the server', () => r.volumes.length === 2);
    t.same(r.volumes, [1, 0.5], 'no echo of a volume given from here moved the rooms');
    t.equal(r.casting.holder(r.playerId), 'squeezelite', 'the cast held the output all along');
  },
);

t.test('a playlist started during a cast pauses the cast at its music server', async (t) => {
  const r = await rig(t, { serverVolume: true, toneSeconds: 60 });
  await r.cast();
  await r.casting.mpdStarted(r.playerId);
  await waitFor(() => r.server.pauses.length === 1, undefined, {
    what: 'the pause asked of the server',
    changes: r.server.changes,
  });
  t.same(r.server.pauses, [macOf(r.playerId)], "the player's own");
  await r.server.stat('STMp');
  await r.until('the cast paused', () => r.state().cast === 'paused');
  t.equal(r.casting.holder(r.playerId), 'mpd', 'the playlist holds the output');
});

t.test('a second cast takes the output from the first, whose PCM is then dropped', async (t) => {
  // A second squeezelite stands in for another kind of receiver: the runtime treats every kind alike.
  const r = await rig(t, { kinds: { airplay: { ...squeezelite, kind: 'airplay' } } });
  const second = await SlimprotoServer.start(r.tone);
  t.teardown(() => second.close());
  await r.casting.apply(r.playerId, [
    { kind: 'squeezelite', server: r.server.address },
    { kind: 'airplay', server: second.address },
  ]);
  await r.server.hello();
  r.server.volume(UNITY_GAIN, false);
  r.server.play();
  await r.reader.tone(TONE_PEAK - 2, 'the first cast on the FIFO');
  // Paused by its sender, the first cast keeps the output (before its tone could end by itself).
  r.server.command('p');
  await r.server.stat('STMp');
  await r.until('the first cast paused', () => r.state().cast === 'paused');
  t.equal(r.casting.holder(r.playerId), 'squeezelite', 'the paused cast holds the output');
  await second.hello();
  second.volume(UNITY_GAIN, false);
  second.play();
  await r.until('the second cast to begin', () => r.pauses.length === 2);
  const airplay = () => r.casting.pcmCounts(r.playerId, 'airplay')!;
  await waitFor(() => airplay().forwarded > 0, undefined, { what: 'the second cast let through' });
  t.equal(r.casting.holder(r.playerId), 'airplay');
  t.equal(r.state().cast, 'idle', 'the first cast reads as idle');
  const forwarded = r.counts().forwarded;
  await r.readMore(1 << 18, "the first squeezelite's PCM read after the second cast began");
  t.equal(r.counts().forwarded, forwarded, 'none of the first cast’s PCM was let through');
});

t.test('switched off, squeezelite ends and the FIFO is free', async (t) => {
  const r = await rig(t);
  await r.cast();
  const pid = squeezelitePid(r.playerId);
  t.ok(pid, 'squeezelite runs');
  await r.casting.apply(r.playerId, []);
  t.same(r.state(), { phase: 'stopped', cast: 'idle', detail: null });
  t.throws(() => process.kill(pid!, 0), { code: 'ESRCH' }, 'the process is gone');
  await waitFor(() => r.reader.atEnd, undefined, { what: 'end of file on the FIFO: no writer holds it' });
  t.equal(r.casting.holder(r.playerId), null, 'nobody holds the output');
  t.same(r.told.at(-1), r.state(), 'the stop was told');
});

t.test('switched off while nobody reads the FIFO, squeezelite ends on its SIGTERM', async (t) => {
  const r = await rig(t);
  await r.cast();
  r.reader.close();
  // The FIFO (64 KiB) full: nothing more goes into it, so the switch holds squeezelite back from here on. (More
  // than the FIFO and the switch's 16 KiB together is not always reached: where the last write stops depends on
  // how squeezelite's writes were cut into chunks.)
  await waitFor(() => r.counts().forwarded - r.reader.bytes >= 64 << 10, undefined, { what: 'the output full' });
  const pid = squeezelitePid(r.playerId);
  await r.casting.apply(r.playerId, []);
  t.throws(() => process.kill(pid!, 0), { code: 'ESRCH' }, 'the process is gone');
  t.same(
    r.logged.filter((line) => line.includes('killing it')),
    [],
    'it was not killed for outliving its stop',
  );
});

t.test('a killed squeezelite is restarted, and each phase is told', async (t) => {
  const r = await rig(t);
  await r.apply();
  await r.server.hello();
  const pid = squeezelitePid(r.playerId)!;
  process.kill(pid, 'SIGKILL');
  const down = await r.until('the restarting phase told', () => r.told.find((s) => s.phase === 'restarting'));
  t.match(down.detail, /^squeezelite was killed by SIGKILL.*; restarting in 50 ms$/);
  await r.server.hello(2);
  await r.until('the running phase told again', () => r.told.at(-1)?.phase === 'running');
  t.not(squeezelitePid(r.playerId), pid, 'a new process');
  t.same(r.state(), { phase: 'running', cast: 'idle', detail: null });
});

t.test('a renamed player’s squeezelite restarts under the new name', async (t) => {
  const r = await rig(t);
  await r.apply();
  await r.server.hello();
  t.equal(await r.server.name(), 'Kitchen');
  r.player.name = 'Living Room';
  await r.casting.playerChanged(r.playerId);
  await r.server.hello(2);
  t.equal(await r.server.name(), 'Living Room');
  t.equal(r.state().phase, 'running');
});

t.test('a player given another FIFO lets go of the first and casts into the new one', async (t) => {
  const r = await rig(t);
  await r.cast();
  const other = path.join(path.dirname(r.fifo), 'other.pcm');
  execFileSync('mkfifo', ['-m', '600', other]);
  const reader = new PcmReader(other);
  t.teardown(() => reader.close());
  r.player.output = { kind: 'fifo', path: other };
  await r.casting.playerChanged(r.playerId);
  await waitFor(() => r.reader.atEnd, undefined, { what: 'end of file on the first FIFO: no writer holds it' });
  await r.server.hello(2);
  r.server.volume(UNITY_GAIN, false);
  r.server.play();
  await reader.tone(TONE_PEAK - 2, 'the tone on the new FIFO');
});

t.test('a kind whose program is missing is named with its package', async (t) => {
  const empty = tempDir('azc-no-receivers-');
  t.teardown(() => rmSync(empty, { recursive: true, force: true }));
  const casting = new Casting({
    stateDir: empty,
    listenHost: '127.0.0.1',
    player: () => undefined,
    pauseMpd: async () => undefined,
    setGroupVolume: async () => undefined,
    onChange: () => undefined,
    searchPath: empty,
  });
  t.equal(
    casting.missing('squeezelite'),
    'squeezelite is not installed: the squeezelite receiver runs it (install it with: apt-get install --no-install-recommends squeezelite)',
  );
});
