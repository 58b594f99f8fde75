// The library cannot be turned against the players: a listing too long for MPD leaves the transport alone, rescans
// run one at a time for those who may ask (never more often than a minute), and a scan ends with the player it ran on.

import { linkSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { tempDir } from '../helpers/daemon.js';
import { fakeMpdProgram } from '../helpers/fake-mpd-program.js';
import type { Client } from '../helpers/inject.js';
import { createUser, injectClient } from '../helpers/inject.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { musicFolder, TRACKS, tone } from '../helpers/mpd-rig.js';
import { type StreamRig, startStreamDaemon } from '../helpers/stream-rig.js';
import { waitFor } from '../helpers/wait-for.js';

/** Tracks in the big folder: each lists with three 1000-character tags, so the folder's listing passes MPD's 8 MiB. */
const BIG_FOLDER_TRACKS = 3500;

/** The sox tones, and a folder `big` of BIG_FOLDER_TRACKS hard links to one short tone with long tags. */
function bigMusicFolder(t: Test): string {
  const music = musicFolder(t);
  const long = 'x'.repeat(1000);
  const source = path.join(music, 'tagged.flac');
  tone(source, 0.05, 440, { title: long, artist: long, album: long });
  mkdirSync(path.join(music, 'big'));
  for (let i = 1; i <= BIG_FOLDER_TRACKS; i++) linkSync(source, path.join(music, 'big', `track-${i}.flac`));
  return music;
}

/** Pauses and resumes the player, one command after the other, until `until` settles; every status, in order. */
async function commandUntil(api: Client, playerId: string, until: Promise<unknown>): Promise<number[]> {
  let settled = false;
  void until.finally(() => (settled = true));
  const statuses: number[] = [];
  do {
    statuses.push((await api.post(`/api/players/${playerId}/pause`)).status);
    statuses.push((await api.post(`/api/players/${playerId}/resume`)).status);
  } while (!settled);
  return statuses;
}

t.test(
  'a viewer listing a folder too long for MPD is told to split it, and the transport answers every command meanwhile',
  async (t) => {
    const rig = await startStreamDaemon(t, { music: bigMusicFolder(t) });
    const player = await rig.fifoPlayer('Kitchen', 1);
    player.reader();
    t.equal((await rig.api.post(`/api/players/${player.id}/play`, { uri: `file:${TRACKS.long}` })).status, 200);
    const viewer = injectClient(rig.d.daemon, (await createUser(rig.api, 'listener', 'Viewer')).apiKey);
    for (let round = 0; round < 3; round++) {
      const listing = viewer.get('/api/library?folder=big&limit=10');
      const statuses = await commandUntil(rig.api, player.id, listing);
      const listed = await listing;
      t.equal(listed.status, 409, 'the listing is refused');
      t.match(listed.body.detail, /holds more than one listing can carry .*split it into smaller folders/);
      t.same(new Set(statuses), new Set([200]), `every transport command during listing ${round + 1} succeeded`);
    }
    t.match(
      (await rig.api.get('/api/library?folder=tones')).body,
      [{ uri: `file:${TRACKS.a}` }],
      'a folder of usual size still lists',
    );
  },
);

t.test(
  'a folder listed again after a rescan shows what the rescan found (its pages are not kept past a change)',
  async (t) => {
    const rig = await startStreamDaemon(t);
    await rig.fifoPlayer('Reader', 1);
    const names = async () =>
      (await rig.api.get('/api/library?folder=tones')).body.map((e: { name: string }) => e.name);
    t.same(await names(), ['a.flac', 'b.ogg', 'c.wav', 'd.mp3']);
    t.same(await names(), ['a.flac', 'b.ogg', 'c.wav', 'd.mp3'], 'the same page again');
    tone(path.join(rig.music, 'tones', 'b2.flac'), 1, 880);
    const from = rig.events.length;
    t.equal((await rig.api.post('/api/library/rescan')).status, 202);
    await rig.next('library.scanChanged', (e) => e.payload.scanning === false, from);
    t.same(await names(), ['a.flac', 'b.ogg', 'b2.flac', 'c.wav', 'd.mp3']);
  },
);

/** Writes of `update` each player's stand-in MPD took. */
function updates(rig: StreamRig, playerId: string): string[] {
  try {
    return readFileSync(path.join(rig.d.stateDir, 'players', playerId, 'updates.log'), 'utf8')
      .split('\n')
      .filter(Boolean);
  } catch {
    return [];
  }
}

/** The pid of a player's (stand-in) MPD. */
function mpdPid(rig: StreamRig, playerId: string): number {
  const engine = rig.d.daemon.services.playback.engines.engineOf(playerId) as { pid?: number } | undefined;
  if (engine?.pid === undefined) throw new Error(`player ${playerId} has no running MPD`);
  return engine.pid;
}

/** Ends the scan a player's stand-in MPD holds. */
function finishScan(rig: StreamRig, playerId: string): void {
  process.kill(mpdPid(rig, playerId), 'SIGUSR1');
}

/** A daemon whose stream players run the stand-in MPD that holds each scan until told, on a clock the test moves. */
async function heldScanDaemon(t: Test) {
  const dir = tempDir('azc-held-scan-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const clock = new ManualClock(1_000_000);
  const rig = await startStreamDaemon(t, { clock, playback: { mpdPath: fakeMpdProgram(dir, 'held-scan') } });
  return { rig, clock };
}

const scanEvents = (rig: StreamRig, from: number) =>
  rig.events
    .slice(from)
    .filter((e) => e.type === 'library.scanChanged')
    .map((e) => (e.payload as { scanning: boolean }).scanning);

t.test('a rescan scans each stream player in turn, and one asked meanwhile joins it', async (t) => {
  const { rig } = await heldScanDaemon(t);
  const first = await rig.fifoPlayer('First', 1);
  const second = await rig.fifoPlayer('Second', 2);
  const from = rig.events.length;
  const [a, b] = await Promise.all([rig.api.post('/api/library/rescan'), rig.api.post('/api/library/rescan')]);
  t.same([a.status, a.body, b.status, b.body], [202, { scanning: true }, 202, { scanning: true }]);
  const scanner = await waitFor(() => [first.id, second.id].find((id) => updates(rig, id).length > 0), undefined, {
    what: 'a player to scan',
  });
  const other = scanner === first.id ? second.id : first.id;
  t.same(updates(rig, other), [], 'the other player waits its turn');
  const c = await rig.api.post('/api/library/rescan');
  t.same([c.status, c.body], [202, { scanning: true }], 'asked while it runs: it joins');
  finishScan(rig, scanner);
  await waitFor(() => updates(rig, other).length > 0, undefined, { what: 'the second player to scan' });
  finishScan(rig, other);
  await rig.next('library.scanChanged', (e) => e.payload.scanning === false, from);
  t.same(
    [updates(rig, scanner).length, updates(rig, other).length],
    [1, 1],
    'one scan on each, however often it was asked',
  );
  t.same(scanEvents(rig, from), [true, false], 'one scan, from its start to its end');
});

t.test('a new rescan may start a minute after the last began: earlier ones answer 429 with Retry-After', async (t) => {
  const { rig, clock } = await heldScanDaemon(t);
  const player = await rig.fifoPlayer('Kitchen', 1);
  const from = rig.events.length;
  t.equal((await rig.api.post('/api/library/rescan')).status, 202);
  await waitFor(() => updates(rig, player.id).length === 1, undefined, { what: 'the scan to start' });
  finishScan(rig, player.id);
  await rig.next('library.scanChanged', (e) => e.payload.scanning === false, from);
  clock.advance(59_000);
  const early = await rig.api.post('/api/library/rescan');
  t.equal(early.status, 429);
  t.equal(early.headers.get('retry-after'), '1');
  t.match(early.body.detail, /the last rescan of the music folder began less than 60 s ago: ask again in 1 s/);
  t.equal(updates(rig, player.id).length, 1, 'nothing was queued');
  clock.advance(1_000);
  t.equal((await rig.api.post('/api/library/rescan')).status, 202);
  await waitFor(() => updates(rig, player.id).length === 2, undefined, { what: 'the second scan to start' });
});

t.test('a rescan is for admins and for operators assigned a stream player', async (t) => {
  const { rig } = await heldScanDaemon(t);
  const player = await rig.fifoPlayer('Kitchen', 1);
  const plain = await rig.api.post('/api/players', { name: 'Turntable', input: { channel: 2 } });
  const client = async (name: string, role: 'Operator' | 'Viewer', playerIds: string[]) =>
    injectClient(rig.d.daemon, (await createUser(rig.api, name, role, { playerIds, zoneIds: [] })).apiKey);
  const unassigned = await client('nobody', 'Operator', []);
  const turntable = await client('turntable', 'Operator', [plain.body.id]);
  const viewer = await client('viewer', 'Viewer', [player.id]);
  const kitchen = await client('kitchen', 'Operator', [player.id]);
  for (const [who, caller] of [
    ['an operator assigned nothing', unassigned],
    ['an operator assigned no stream player', turntable],
    ['a viewer', viewer],
  ] as const) {
    const res = await caller.post('/api/library/rescan');
    t.equal(res.status, 403, who);
    t.equal(res.headers.get('content-type'), 'application/problem+json');
  }
  t.same(updates(rig, player.id), [], 'no refused rescan scanned');
  t.equal((await kitchen.post('/api/library/rescan')).status, 202, 'the operator of the stream player');
  await waitFor(() => updates(rig, player.id).length === 1, undefined, { what: 'the scan to start' });
});

t.test('a scan ends, with its event, when the player whose MPD scans is deleted', async (t) => {
  const { rig } = await heldScanDaemon(t);
  const player = await rig.fifoPlayer('Kitchen', 1);
  const from = rig.events.length;
  t.equal((await rig.api.post('/api/library/rescan')).status, 202);
  await rig.next('library.scanChanged', (e) => e.payload.scanning === true, from);
  await waitFor(() => updates(rig, player.id).length === 1, undefined, { what: 'the scan to start' });
  t.equal((await rig.api.del(`/api/players/${player.id}`)).status, 204);
  await rig.next('library.scanChanged', (e) => e.payload.scanning === false, from);
  t.same(scanEvents(rig, from), [true, false]);
});

t.test('a scan ends, with its event, when the MPD that scans exits', async (t) => {
  const { rig } = await heldScanDaemon(t);
  const player = await rig.fifoPlayer('Kitchen', 1);
  const from = rig.events.length;
  t.equal((await rig.api.post('/api/library/rescan')).status, 202);
  await waitFor(() => updates(rig, player.id).length === 1, undefined, { what: 'the scan to start' });
  process.kill(mpdPid(rig, player.id), 'SIGKILL');
  await rig.next('library.scanChanged', (e) => e.payload.scanning === false, from);
  t.same(scanEvents(rig, from), [true, false]);
});
