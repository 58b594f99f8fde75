// What a player's MPD leaves private and reachable on the real MPD: file modes, sockets, outputs, stop, leftovers.

import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { MpdConnection } from '../../drivers/mpd/connection.js';
import { systemClock } from '../../drivers/mpd/engine.js';
import { createPlaybackEngine } from '../../drivers/mpd/index.js';
import { concurrently } from '../helpers/concurrency.js';
import { MPD, musicFolder, startEngine, TRACKS } from '../helpers/mpd-rig.js';
import { freePort } from '../helpers/sockets.js';
import { WAIT_MS, waitFor, within } from '../helpers/wait-for.js';

concurrently(t, 3);
const music = musicFolder(t);
const mode = (file: string) => statSync(file).mode & 0o777;

/** The inodes of the process's sockets that are TCP or UDP sockets (from /proc/<pid>/net/*). */
function networkSockets(pid: number): string[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    const link = (() => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return '';
      }
    })();
    const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
    if (inode) inodes.add(inode);
  }
  const found: string[] = [];
  for (const table of ['tcp', 'tcp6', 'udp', 'udp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length > 9 && inodes.has(fields[9]!)) found.push(`${table} ${fields[1]}`);
    }
  }
  return found;
}

t.test("the player's folder, config and database are private whatever the umask", async (t) => {
  const old = process.umask(0);
  t.teardown(() => void process.umask(old));
  const rig = await startEngine(t, music);
  const dir = path.join(rig.stateDir, 'players', 'player-1');
  t.equal(mode(path.join(rig.stateDir, 'players')), 0o700);
  t.equal(mode(dir), 0o700);
  t.equal(mode(path.join(dir, 'mpd.conf')), 0o600);
  await waitFor(() => existsSync(path.join(dir, 'database')), undefined, { what: 'the database file' });
  t.equal(mode(path.join(dir, 'database')), 0o600);
  // MPD opens its socket to everyone (0666) on purpose: the 0700 folder around it is what keeps others out.
  t.ok(statSync(path.join(dir, 'socket')).isSocket(), 'the control socket lives in that folder');
});

t.test("a player's MPD listens on no network port", async (t) => {
  const rig = await startEngine(t, music);
  t.same(networkSockets(rig.engine.pid!), []);
  const conf = readFileSync(path.join(rig.stateDir, 'players/player-1/mpd.conf'), 'utf8');
  t.match(conf, /^zeroconf_enabled "no"$/m, 'and announces nothing');
});

t.test('with a listen address, MPD also answers MPD clients on that loopback port', async (t) => {
  const port = await freePort();
  const rig = await startEngine(t, music, { listen: { host: '127.0.0.1', port } });
  const connection = await MpdConnection.connect(
    { host: '127.0.0.1', port },
    { clock: systemClock, timeoutMs: 10_000 },
  );
  t.teardown(() => connection.close());
  t.match(connection.version, /^0\.\d+/);
  t.match(networkSockets(rig.engine.pid!), [/^tcp 0100007F:/]);
});

t.test('stopping the engine ends its mpd', async (t) => {
  const rig = await startEngine(t, music);
  const pid = rig.engine.pid!;
  await rig.engine.stop();
  t.throws(() => process.kill(pid, 0), { code: 'ESRCH' });
  t.equal(rig.engine.up, false);
  await t.rejects(rig.engine.playUri(`file:${TRACKS.a}`), { code: 'engine-down', message: /not running/ });
});

t.test('an mpd left running by a daemon that died is killed when the player starts again', async (t) => {
  const rig = await startEngine(t, music);
  await rig.engine.stop();
  // What a daemon killed with SIGKILL leaves behind: its mpd running on the player's config, named in the pid file.
  const files = path.join(rig.stateDir, 'players/player-1');
  const orphan = spawn(MPD, ['--no-daemon', path.join(files, 'mpd.conf')], { stdio: 'ignore' });
  const gone = new Promise((resolve) => orphan.once('exit', resolve));
  t.teardown(() => {
    orphan.kill('SIGKILL');
    return gone;
  });
  writeFileSync(path.join(files, 'mpd.pid'), `${orphan.pid}\n`);
  const again = createPlaybackEngine({
    id: 'player-1',
    stateDir: rig.stateDir,
    musicDir: music,
    output: { kind: 'null' },
    mpdPath: MPD,
  });
  t.teardown(() => again.stop());
  await again.start();
  await within(gone, WAIT_MS, 'the old mpd to be killed');
  t.not(again.pid, orphan.pid);
  t.equal(again.up, true);
});

t.test('a null output plays in real time: the position moves and tracks end', async (t) => {
  const rig = await startEngine(t, music, { output: { kind: 'null' } });
  await rig.engine.playQueue([`file:${TRACKS.a}`, `file:${TRACKS.b}`]);
  await rig.next((e) => e.type === 'position' && e.positionMs > 0, 'a position tick');
  await rig.until((s) => s.index === 1, 'the second track');
});

t.test('a pipe output hands the PCM to its command', async (t) => {
  // The command runs under mpd's confinement (drivers/mpd/process.ts): /dev/shm is among the places it may write.
  const dir = mkdtempSync('/dev/shm/azc-pipe-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const sink = path.join(dir, 'out.pcm');
  const rig = await startEngine(t, music, { output: { kind: 'pipe', command: `cat >> '${sink}'` } });
  await rig.engine.playUri(`file:${TRACKS.long}`);
  await waitFor(() => existsSync(sink) && statSync(sink).size >= 176_400, undefined, {
    what: 'a second of PCM through the command',
  });
});

t.test('an output that cannot open is a fault, not a skipped track, and the playback does not go on', async (t) => {
  const rig = await startEngine(t, music, { output: { kind: 'alsa', device: 'hw:CARD=NoSuchCard' } });
  await rig.engine.playUri(`file:${TRACKS.long}`);
  const fault = await rig.next((e) => e.type === 'fault', 'the fault');
  t.match(fault, { type: 'fault', detail: /ALSA device "hw:CARD=NoSuchCard"/ });
  await rig.until((s) => s.state !== 'playing', 'the playback to stop going on');
  t.notOk(
    rig.events.some((e) => e.type === 'skipped'),
    'no track is blamed',
  );
});
