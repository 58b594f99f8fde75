// Metadata from outside — a radio's icy-name, a stream's or a file's title, artist and album tags — is cleaned by
// the names' rule where MPD's status is read: no bidi overrides, line separators or control characters reach the
// API, the dashboard or MQTT. Real MPD playing a loopback radio station, and MPD's replies read directly.

import { rmSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { createPlaybackEngine } from '../../drivers/mpd/index.js';
import { parseStatus } from '../../drivers/mpd/status.js';
import { tempDir } from '../helpers/daemon.js';
import { MPD, musicFolder, radioStation, startEngine, tone } from '../helpers/mpd-rig.js';
import { Changes, waitFor } from '../helpers/wait-for.js';

const HOSTILE = {
  title: 'Evil\u202Etxt.exe\u2028second line',
  artist: 'Band\u2029\u202Dname',
  album: 'Album\u2066inside\u2069',
};

t.test("a radio's icy-name and its stream's tags come out without bidi overrides or line separators", async (t) => {
  const music = musicFolder(t);
  const ogg = path.join(music, 'hostile/tagged.ogg');
  tone(ogg, 3, 440, HOSTILE);
  // A header carries bytes: the name's UTF-8, as a station sends it.
  const radio = await radioStation(t, ogg, Buffer.from('Jazz\u202EFM\u2028Live', 'utf8').toString('latin1'));
  const stateDir = tempDir('azc-mpd-');
  const engine = createPlaybackEngine({
    id: 'player-1',
    stateDir,
    musicDir: music,
    output: { kind: 'null' },
    mpdPath: MPD,
    streamHosts: ['127.0.0.1'],
  });
  const changes = new Changes();
  engine.onEvent(() => changes.notify());
  t.teardown(async () => {
    await engine.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });
  await engine.start();
  await engine.playQueue([radio.url]);
  const status = await waitFor(
    () => {
      const now = engine.status();
      return now.name !== null && now.title !== null ? now : undefined;
    },
    undefined,
    { what: 'the station name and the title to be read', changes },
  );
  t.equal(status.name, 'JazzFM Live', 'the override goes, the line separator becomes a space');
  t.equal(status.title, 'Eviltxt.exe second line');
  t.equal(status.artist, 'Band name');
  t.equal(status.album, 'Albuminside');
});

t.test(
  'control characters and line separators in MPD tags become spaces; a tag of nothing but them is no tag',
  async (t) => {
    const s = parseStatus(
      [
        ['state', 'play'],
        ['songid', '1'],
      ],
      [
        ['file', 'http://radio.example/live'],
        ['Title', 'One\u0007Two\u001bThree\u0085Four'],
        ['Artist', '\u202E\u2028\u0000'],
        ['Album', 'Plain'],
        ['Name', 'Radio\rName'],
      ],
    );
    t.same(s.tags, { title: 'One Two Three Four', artist: null, album: 'Plain', name: 'Radio Name' });
  },
);

t.test("a library listing shows a file's name and tags cleaned, and keeps its URI exact to play it by", async (t) => {
  const music = musicFolder(t);
  const name = 'evil\u202Egalf.ogg';
  tone(path.join(music, 'hostile', name), 1, 440, HOSTILE);
  const rig = await startEngine(t, music);
  const page = await rig.engine.library.list('hostile', { offset: 0, limit: 10 });
  t.match(page.entries, [
    {
      kind: 'track',
      uri: `file:hostile/${name}`,
      name: 'evilgalf.ogg',
      title: 'Eviltxt.exe second line',
      artist: 'Band name',
      album: 'Albuminside',
    },
  ]);
});
