// Names people give are shown everywhere (dashboard, MQTT, Home Assistant, M3U files): control characters, line
// breaks and bidi overrides are refused with a 400 naming the field, and scene names that read the same are one name.

import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { loadConfig } from '../../daemon/config.js';
import { startDaemon, startTestDaemon, tempDir } from '../helpers/daemon.js';
import { injectClient } from '../helpers/inject.js';

const BAD: Array<[string, string, RegExp]> = [
  ['NUL', 'Kitchen\u0000', /control character or line break \(U\+0000 at position \d+\)/],
  ['a line break', 'Kit\nchen', /control character or line break \(U\+000A/],
  ['a C1 control', 'Kit\u0085chen', /U\+0085/],
  ['a right-to-left override', 'Kitchen\u202Etxt.exe', /bidirectional override or isolate \(U\+202E/],
  ['a directional isolate', '\u2066Kitchen\u2069', /bidirectional override or isolate \(U\+2066/],
  ['a lone surrogate', 'Kitchen\ud800', /lone surrogate/],
];

t.test(
  'every name a person gives refuses control characters, line breaks and bidi overrides, naming the field',
  async (t) => {
    const d = await startTestDaemon(t);
    const api = injectClient(d.daemon, d.adminKey);
    const zone = ((await api.get('/api/zones')).body as Array<{ id: string }>)[0]!.id;
    const playlist = (await api.post('/api/playlists', { name: 'Fine' })).body.id as string;
    const targets: Array<[string, (bad: string) => Promise<{ status: number; body: any }>, string]> = [
      ['player name', (bad) => api.post('/api/players', { name: bad, input: { channel: 3 } }), 'name'],
      ['zone rename', (bad) => api.put(`/api/zones/${zone}`, { name: bad }), 'name'],
      ['scene name', (bad) => api.post('/api/scenes', { name: bad, zoneIds: [zone] }), 'name'],
      ['playlist name', (bad) => api.post('/api/playlists', { name: bad }), 'name'],
      [
        'track title',
        (bad) => api.post(`/api/playlists/${playlist}/tracks`, { tracks: [{ title: bad, uri: 'file:///a.flac' }] }),
        'tracks.0.title',
      ],
      [
        'track uri',
        (bad) => api.post(`/api/playlists/${playlist}/tracks`, { tracks: [{ title: 'A', uri: `file:///${bad}` }] }),
        'tracks.0.uri',
      ],
      ['input device name', (bad) => api.post('/api/input-devices', { name: bad, input: { channel: 6 } }), 'name'],
      [
        'input device kind',
        (bad) => api.post('/api/input-devices', { name: 'Tape', kind: bad, input: { channel: 6 } }),
        'kind',
      ],
    ];
    for (const [what, send, field] of targets) {
      for (const [kind, bad, why] of BAD) {
        const res = await send(bad);
        t.equal(res.status, 400, `${what} with ${kind}`);
        t.match(res.body.errors?.[field], [why], `${what} with ${kind}: "${field}" says why`);
      }
    }
    t.equal((await api.get(`/api/playlists/${playlist}`)).body.tracks.length, 0, 'nothing was added');
    t.ok(((await api.get('/api/players')).body as unknown[]).length === 0, 'no player was created');
  },
);

t.test(
  'scene names that read the same are the same name: width, invisible characters and letter case aside',
  async (t) => {
    const d = await startTestDaemon(t);
    const api = injectClient(d.daemon, d.adminKey);
    const zone = ((await api.get('/api/zones')).body as Array<{ id: string }>)[0]!.id;
    t.equal((await api.post('/api/scenes', { name: 'Dinner Party', zoneIds: [zone] })).status, 201);
    for (const lookalike of [
      'Ｄｉｎｎｅｒ Ｐａｒｔｙ',
      'Din\u200Bner Party',
      'DINNER PARTY',
      'Dinner\u00A0Party',
      'Dinner\u00ADParty'.replace('\u00AD', '\u00AD '),
    ]) {
      const res = await api.post('/api/scenes', { name: lookalike, zoneIds: [zone] });
      t.equal(res.status, 409, JSON.stringify(lookalike));
    }
    t.equal((await api.post('/api/scenes', { name: 'Café', zoneIds: [zone] })).status, 201);
    t.equal(
      (await api.post('/api/scenes', { name: 'Cafe\u0301', zoneIds: [zone] })).status,
      409,
      'a composed and a decomposed é are one',
    );
    t.equal(
      (await api.post('/api/scenes', { name: 'Cafe', zoneIds: [zone] })).status,
      201,
      'without the accent it is another name',
    );
  },
);

t.test('names stored before these rules are cleaned when the database is upgraded', async (t) => {
  const parent = tempDir();
  t.teardown(() => import('node:fs').then((fs) => fs.rmSync(parent, { recursive: true, force: true })));
  const stateDir = path.join(parent, 'state');
  const first = await startDaemon({ stateDir });
  const api = injectClient(first.daemon, first.adminKey);
  const zone = ((await api.get('/api/zones')).body as Array<{ id: string }>)[0]!.id;
  t.equal((await api.post('/api/scenes', { name: 'Night', zoneIds: [zone] })).status, 201);
  t.equal((await api.post('/api/scenes', { name: 'Morning', zoneIds: [zone] })).status, 201);
  const playlist = (await api.post('/api/playlists', { name: 'P', tracks: [{ title: 'T', uri: 'file:///t.flac' }] }))
    .body.id as string;
  await first.stop();
  // What an older azcd let in, written as it would have stored it, then the schema set back before migration 5.
  const db = new Database(path.join(stateDir, 'azc.db'));
  db.transaction(() => {
    db.prepare('UPDATE zones SET name = ? WHERE id = ?').run('Kitchen\u202E\nx', zone);
    // Made in the same millisecond as "Night" (as two quick POSTs can be): the one stored first keeps its name.
    db.prepare(
      `UPDATE scenes SET name = ?, created_at = (SELECT created_at FROM scenes WHERE name = 'Night') WHERE name = 'Morning'`,
    ).run('ＮＩＧＨＴ');
    db.prepare('UPDATE tracks SET title = ? WHERE playlist_id = ?').run('\u0000', playlist);
    db.exec(
      'DROP INDEX playlists_order; ALTER TABLE playlists DROP COLUMN track_count; ALTER TABLE playlists DROP COLUMN duration_ms',
    );
    // And what the migrations after 5 added (6: stream players' outputs), since they run again too.
    db.exec(
      'DROP INDEX players_output; ALTER TABLE players DROP COLUMN output_kind; ALTER TABLE players DROP COLUMN output_target',
    );
    // 7: tone controls.
    for (const table of ['zones', 'scene_zones']) {
      for (const column of ['tone_bass', 'tone_treble', 'tone_balance', 'tone_loudness'])
        db.exec(`ALTER TABLE ${table} DROP COLUMN ${column}`);
    }
    // 8: receivers.
    db.exec('DROP TABLE player_receivers');
    // 9: cast settings.
    db.exec('DROP TABLE player_cast_wake_zones; DROP TABLE player_cast_settings');
  })();
  db.pragma('user_version = 4');
  db.close();

  const second = await startDaemon({ stateDir });
  t.teardown(() => second.stop());
  const api2 = injectClient(second.daemon, second.adminKey);
  t.equal(
    (await api2.get(`/api/zones/${zone}`)).body.name,
    'Kitchen x',
    'the override went, the line break became a space',
  );
  t.same(
    ((await api2.get('/api/scenes')).body as Array<{ name: string }>).map((s) => s.name).sort(),
    ['Night', 'ＮＩＧＨＴ (2)'],
    'scene names unique again',
  );
  t.equal(
    (await api2.get(`/api/playlists/${playlist}`)).body.tracks[0].title,
    'Untitled',
    'a title left empty gets one',
  );
  t.match(
    (await api2.get('/api/playlists')).body,
    [{ id: playlist, trackCount: 1 }],
    'the playlist sizes were counted',
  );
  t.equal(
    (await api2.post('/api/restore', { backup: (await api2.get('/api/backup')).body })).status,
    200,
    'and its backup restores',
  );
});

t.test('the friendly name and amplifier names in the configuration follow the same rule', async (t) => {
  t.throws(
    () => loadConfig(['--friendly-name', 'Living\u202ERoom'], {}),
    /^flag --friendly-name: must not hold a bidirectional override/,
  );
  t.equal(loadConfig(['--friendly-name', 'Wohnzimmer – Küche'], {}).config.friendlyName, 'Wohnzimmer – Küche');
});
