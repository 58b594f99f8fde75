// The music folder on the real MPD: listings paginated with tags, rescans, and nothing outside the folder plays.

import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { concurrently } from '../helpers/concurrency.js';
import { tempDir } from '../helpers/daemon.js';
import { musicFolder, startEngine, TRACKS, tone } from '../helpers/mpd-rig.js';

concurrently(t, 3);
const music = musicFolder(t);
const outside = tempDir('azc-outside-');
t.teardown(() => rmSync(outside, { recursive: true, force: true }));
tone(path.join(outside, 'secret.flac'), 1, 700, { title: 'Outside' });
symlinkSync(path.join(outside, 'secret.flac'), path.join(music, 'tones/link-out.flac'));
symlinkSync(outside, path.join(music, 'folder-out'));
symlinkSync(path.join(music, TRACKS.a), path.join(music, 'alias.flac'));

t.test('the top of the music folder lists its folders first, then its tracks, each by name', async (t) => {
  const rig = await startEngine(t, music);
  const page = await rig.engine.library.list('', { offset: 0, limit: 50 });
  t.match(page, { folder: '', offset: 0, limit: 50 });
  t.same(
    page.entries.map((e) => [e.kind, e.uri]),
    [
      ['folder', 'long'],
      ['folder', 'tones'],
      ['track', 'file:alias.flac'],
    ],
    'no folder or track that leads outside',
  );
  t.equal(page.total, 3);
});

t.test('a folder lists its tracks with the tags MPD read, a page at a time', async (t) => {
  const rig = await startEngine(t, music);
  const first = await rig.engine.library.list('tones', { offset: 0, limit: 2 });
  t.equal(first.total, 4, 'four playable tracks (the link that leads out is left out)');
  t.match(first.entries, [
    {
      kind: 'track',
      uri: 'file:tones/a.flac',
      name: 'a.flac',
      title: 'Tone A',
      artist: 'Sine Band',
      album: 'Tones',
      durationMs: 3000,
    },
    { kind: 'track', uri: 'file:tones/b.ogg', title: 'Tone B' },
  ]);
  const second = await rig.engine.library.list('tones', { offset: 2, limit: 2 });
  t.match(second.entries, [
    { uri: 'file:tones/c.wav', title: null },
    { uri: 'file:tones/d.mp3', title: 'Tone D', artist: 'Mp3 Band' },
  ]);
  const past = await rig.engine.library.list('tones', { offset: 4, limit: 2 });
  t.same(past.entries, []);
  t.equal(past.total, 4);
});

t.test('a listing page out of range is refused', async (t) => {
  const rig = await startEngine(t, music);
  await t.rejects(rig.engine.library.list('', { offset: -1, limit: 10 }), { code: 'bad-request', message: /offset/ });
  await t.rejects(rig.engine.library.list('', { offset: 0, limit: 0 }), { code: 'bad-request', message: /limit/ });
  await t.rejects(rig.engine.library.list('', { offset: 0, limit: 501 }), { code: 'bad-request', message: /1 to 500/ });
});

t.test('a folder outside the music folder cannot be listed: "..", absolute, or a symlink that leads out', async (t) => {
  const rig = await startEngine(t, music);
  await t.rejects(rig.engine.library.list('../', { offset: 0, limit: 10 }), { code: 'bad-uri', message: /"\.\."/ });
  await t.rejects(rig.engine.library.list('/etc', { offset: 0, limit: 10 }), { code: 'bad-uri', message: /absolute/ });
  await t.rejects(rig.engine.library.list('folder-out', { offset: 0, limit: 10 }), {
    code: 'bad-uri',
    message: /outside the music folder/,
  });
  await t.rejects(rig.engine.library.list('no-such-folder', { offset: 0, limit: 10 }), { code: 'not-found' });
});

t.test('a rescan brings a new folder into the listing, with library events at both ends', async (t) => {
  // A music folder of its own: the other tests list theirs side by side.
  const mine = tempDir('azc-music-rescan-');
  t.teardown(() => rmSync(mine, { recursive: true, force: true }));
  tone(path.join(mine, 'first.flac'), 1, 600);
  const rig = await startEngine(t, mine);
  const own = path.join(mine, 'zz-new');
  mkdirSync(own);
  tone(path.join(own, 'later.flac'), 1, 800, { title: 'Later' });
  await t.rejects(rig.engine.library.list('zz-new', { offset: 0, limit: 10 }), {
    code: 'not-found',
    message: /rescan/,
  });
  const from = rig.events.length;
  await rig.engine.library.rescan();
  t.same(
    rig.events.slice(from).filter((e) => e.type === 'library'),
    [
      { type: 'library', scanning: true },
      { type: 'library', scanning: false },
    ],
  );
  const page = await rig.engine.library.list('zz-new', { offset: 0, limit: 10 });
  t.match(page.entries, [{ uri: 'file:zz-new/later.flac', title: 'Later' }]);
});

t.test('file: URIs that lead outside the music folder are refused and the playback goes on', async (t) => {
  const rig = await startEngine(t, music);
  await rig.engine.playQueue([`file:${TRACKS.long}`]);
  const refused = [
    'file:../secret.flac',
    `file:${path.join(outside, 'secret.flac')}`,
    'file:tones/link-out.flac',
    'file:folder-out/secret.flac',
  ];
  for (const uri of refused) {
    await t.rejects(rig.engine.playUri(uri), { code: 'bad-uri' }, uri);
  }
  await t.rejects(rig.engine.playQueue([`file:${TRACKS.a}`, 'file:../x.flac', 'ftp://host/x.mp3']), {
    code: 'bad-uri',
    problems: [{ index: 1 }, { index: 2 }],
  });
  t.match(rig.engine.status(), { state: 'playing', uri: `file:${TRACKS.long}`, queueLength: 1 });
});

t.test('resolving a track URI gives the real file inside the music folder, and refuses what leads out', async (t) => {
  const rig = await startEngine(t, music);
  const { library } = rig.engine;
  t.same(await library.resolve('file:alias.flac'), {
    kind: 'file',
    uri: 'file:alias.flac',
    relative: TRACKS.a,
    exists: true,
  });
  t.same(await library.resolve('file:tones/later.flac'), {
    kind: 'file',
    uri: 'file:tones/later.flac',
    relative: 'tones/later.flac',
    exists: false,
  });
  t.same(await library.resolve('https://radio.example/live'), { kind: 'stream', url: 'https://radio.example/live' });
  await t.rejects(library.resolve('file:tones/link-out.flac'), {
    code: 'bad-uri',
    message: /outside the music folder/,
  });
  await t.rejects(library.resolve('file:../x.flac'), { code: 'bad-uri' });
});

t.test('a symlink inside the music folder to a track inside it plays', async (t) => {
  const rig = await startEngine(t, music);
  await rig.engine.playUri('file:alias.flac');
  t.match(rig.engine.status(), { state: 'playing', uri: 'file:alias.flac', title: 'Tone A' });
});
