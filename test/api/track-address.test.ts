// One track address everywhere: what the README and the docs teach is a URI stream players play, and adding a track
// they would refuse at Play is answered with a warning that names the form they play (the track is kept).

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { defaultConfig } from '../../daemon/config.js';
import { parseTrackUri } from '../../drivers/playback.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { injectClient } from '../helpers/inject.js';
import { ROOT } from '../helpers/paths.js';

t.test('every track URI the README and the docs teach is one a stream player plays', async (t) => {
  const files = [
    'README.md',
    ...readdirSync(path.join(ROOT, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
  ];
  const taught: string[] = [];
  for (const file of files) {
    for (const line of readFileSync(path.join(ROOT, file), 'utf8').split('\n')) {
      // A line that shows a refusal on purpose says so: `# 400`.
      if (/#\s*400\b/.test(line)) continue;
      // Track bodies as the docs write them, in JSON and shell-quoted JSON alike: "uri":"…" (with or without a space).
      for (const [, uri] of line.matchAll(/\\?"uri\\?":\s*\\?"([^"\\]+)\\?"/g)) taught.push(`${file}: ${uri}`);
    }
  }
  t.ok(
    taught.some((entry) => entry.startsWith('README.md: file:')),
    'the README teaches a file track',
  );
  for (const entry of taught) {
    const uri = entry.slice(entry.indexOf(': ') + 2);
    t.doesNotThrow(() => parseTrackUri(uri), entry);
  }
});

t.test(
  'adding tracks stream players cannot play answers with one warning each, naming the form they play, and keeps them',
  async (t) => {
    const d = await startTestDaemon(t);
    const api = injectClient(d.daemon, d.adminKey);
    const created = await api.post('/api/playlists', {
      name: 'Mixed forms',
      tracks: [
        { title: 'Absolute', uri: 'file:///music/1.flac' },
        { title: 'Relative', uri: 'file:albums/evening/1.flac' },
        { title: 'Radio', uri: 'https://radio.example/live.ogg' },
        { title: 'Elsewhere', uri: 'spotify:track:42' },
      ],
    });
    t.equal(created.status, 201);
    t.equal(created.body.tracks.length, 4, 'every track is kept');
    t.equal(
      created.body.warnings.length,
      2,
      `one warning per track stream players refuse: ${JSON.stringify(created.body.warnings)}`,
    );
    t.match(
      created.body.warnings[0],
      /^track "Absolute" cannot play on stream players: .*absolute.*file:albums\/track\.flac/,
    );
    t.match(
      created.body.warnings[1],
      /^track "Elsewhere" cannot play on stream players: .*unsupported scheme.*file:<path in the music folder>/,
    );

    const added = await api.post(`/api/playlists/${created.body.id}/tracks`, {
      tracks: [{ title: 'Old form', uri: 'file:///music/2.flac' }],
    });
    t.equal(added.status, 200);
    t.equal(added.body.tracks.at(-1).uri, 'file:///music/2.flac', 'the track is appended');
    t.same(added.body.warnings.length, 1);
    t.match(added.body.warnings[0], /^track "Old form" cannot play on stream players/);

    const playable = await api.post(`/api/playlists/${created.body.id}/tracks`, {
      tracks: [{ title: 'Two', uri: 'file:albums/evening/2.flac' }],
    });
    t.same(playable.body.warnings, [], 'none when every track added can play');
  },
);

t.test(
  'a stream from a place stream players may not fetch is warned about when added, unless playback.streamHosts names it',
  async (t) => {
    const d = await startTestDaemon(t, {
      config: { playback: { ...defaultConfig().playback, streamHosts: ['radio.lan:9999'] } },
    });
    const api = injectClient(d.daemon, d.adminKey);
    const created = await api.post('/api/playlists', {
      name: 'Streams',
      tracks: [
        { title: 'Router page', uri: 'http://router.lan:22/' },
        { title: 'This appliance', uri: 'http://127.0.0.1/' },
        { title: 'Allowed', uri: 'http://radio.lan:9999/live' },
        { title: 'Usual port', uri: 'https://radio.example:8000/live.ogg' },
      ],
    });
    t.equal(created.status, 201);
    t.equal(created.body.tracks.length, 4, 'every track is kept');
    t.equal(created.body.warnings.length, 2, JSON.stringify(created.body.warnings));
    t.match(created.body.warnings[0], /^track "Router page" cannot play on stream players: .*port 22/);
    t.match(created.body.warnings[1], /^track "This appliance" cannot play on stream players/);
  },
);
