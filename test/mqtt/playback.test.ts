// Stream players in Home Assistant, through a real mosquitto and the real MPD: a now-playing sensor with its
// attributes, a position sensor, a play/pause switch and next and previous buttons, each following Home Assistant's
// rules and the bridge account's role and assignments; the entities follow the player's MPD and go with the player.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { defaultConfig } from '../../daemon/config.js';
import { createUser } from '../helpers/client.js';
import { MPD, musicFolder, TRACKS } from '../helpers/mpd-rig.js';
import { haViolations } from './ha-rules.js';
import { BASE, bridged, configTopic } from './setup.js';

const music = musicFolder(t);
const playerTopic = (id: string, field: string) => `${BASE}/player/${id}/${field}`;
const attributes = (id: string) => `${playerTopic(id, 'now_playing')}/attributes`;
const start = { config: { playback: { ...defaultConfig().playback, mpdPath: MPD, musicDir: music } } };
/** A stream player's entities: component and object id suffix. */
const ENTITIES = [
  ['sensor', 'now_playing'],
  ['sensor', 'position'],
  ['switch', 'playing'],
  ['button', 'next'],
  ['button', 'previous'],
] as const;

/** A bridge acting as `ha-bridge` (Operator unless said) assigned a stream player, a wired player and every zone. */
async function streamBridge(t: Parameters<typeof bridged>[0], role: 'Operator' | 'Viewer' = 'Operator') {
  const rig = await bridged(t, { account: 'ha-bridge', players: 0, start });
  const { admin, zones } = rig;
  const stream = (await admin.post('/api/players', { name: 'Pi DAC', input: { channel: 1 }, output: { kind: 'null' } }))
    .body;
  const wired = (await admin.post('/api/players', { name: 'Turntable', input: { channel: 2 } })).body;
  await createUser(admin, 'ha-bridge', role, { playerIds: [stream.id, wired.id], zoneIds: zones.map((z) => z.id) });
  const list = (
    await admin.post('/api/playlists', {
      name: 'Tones',
      tracks: [TRACKS.long, TRACKS.a].map((track) => ({ title: track, uri: `file:${track}` })),
    })
  ).body;
  await rig.hub.value(playerTopic(stream.id, 'availability'), 'online');
  return { ...rig, stream, wired, list };
}

t.test(
  'a stream player gets a now-playing sensor, a position sensor, a playing switch and next and previous buttons; a wired player none',
  async (t) => {
    const { hub, stream, wired, nodeId } = await streamBridge(t);
    t.equal(await hub.value(playerTopic(stream.id, 'now_playing'), 'Nothing playing'), 'Nothing playing');
    t.equal(await hub.value(playerTopic(stream.id, 'playing'), 'OFF'), 'OFF');
    t.equal(await hub.value(playerTopic(stream.id, 'position'), '0'), '0');
    for (const [component, object] of ENTITIES) {
      t.ok(
        hub.latest.has(configTopic(component, nodeId, `player_${stream.id}_${object}`)),
        `the stream player has its ${object} ${component}`,
      );
      t.notOk(
        hub.latest.has(configTopic(component, nodeId, `player_${wired.id}_${object}`)),
        `a wired player has no ${object} ${component}`,
      );
    }
    const engineUp = {
      topic: playerTopic(stream.id, 'availability'),
      payload_available: 'online',
      payload_not_available: 'offline',
    };
    t.match(hub.json(configTopic('sensor', nodeId, `player_${stream.id}_now_playing`)), {
      name: 'Pi DAC now playing',
      json_attributes_topic: attributes(stream.id),
      availability: [{ topic: `${BASE}/status` }, engineUp],
      availability_mode: 'all',
    });
    t.match(hub.json(configTopic('sensor', nodeId, `player_${stream.id}_position`)), {
      device_class: 'duration',
      unit_of_measurement: 's',
      enabled_by_default: false,
    });
    t.same(haViolations(hub.latest), [], 'every entity follows Home Assistant’s rules');
  },
);

t.test('now-playing, position and the playing switch follow a real play and pause', async (t) => {
  const { hub, admin, stream, list, nodeId } = await streamBridge(t);
  t.equal((await admin.post(`/api/players/${stream.id}/play`, { playlistId: list.id })).status, 200);
  t.equal(await hub.value(playerTopic(stream.id, 'now_playing'), 'Long Tone'), 'Long Tone');
  t.equal(await hub.value(playerTopic(stream.id, 'playing'), 'ON'), 'ON');
  // The attributes are a message of their own, which may come after the states above.
  await hub.value(attributes(stream.id), (p) => JSON.parse(p).state === 'playing');
  t.match(hub.json(attributes(stream.id)), {
    state: 'playing',
    title: 'Long Tone',
    duration_s: 30,
    playlist_id: list.id,
    track_id: list.tracks[0].id,
  });
  await hub.value(playerTopic(stream.id, 'position'), (p) => Number(p) >= 1);
  t.same(haViolations(hub.latest), [], 'every entity follows Home Assistant’s rules while playing');

  t.equal((await admin.post(`/api/players/${stream.id}/pause`)).status, 200);
  t.equal(await hub.value(playerTopic(stream.id, 'playing'), 'OFF'), 'OFF');
  await hub.value(attributes(stream.id), (p) => JSON.parse(p).state === 'paused');
  t.equal(hub.latest.get(playerTopic(stream.id, 'now_playing')), 'Long Tone', 'a paused track is still what plays');

  // The sensors' rules can fail: a state Home Assistant refuses, attributes it drops, a position that is no number.
  const nowPlaying = configTopic('sensor', nodeId, `player_${stream.id}_now_playing`);
  const position = configTopic('sensor', nodeId, `player_${stream.id}_position`);
  t.same(haViolations(new Map(hub.latest).set(playerTopic(stream.id, 'now_playing'), 'x'.repeat(256))), [
    `${nowPlaying}: state of 256 characters is longer than 255`,
  ]);
  t.same(haViolations(new Map(hub.latest).set(attributes(stream.id), '[1]')), [
    `${nowPlaying}: attributes on ${attributes(stream.id)} are not a JSON object`,
  ]);
  t.same(haViolations(new Map(hub.latest).set(playerTopic(stream.id, 'position'), '1:05')), [
    `${position}: state "1:05" is not a number (the sensor has a unit)`,
  ]);
});

t.test(
  'the playing switch pauses and resumes the player, and next and previous move through its playlist',
  async (t) => {
    const { hub, admin, stream, list } = await streamBridge(t);
    await admin.post(`/api/players/${stream.id}/play`, { playlistId: list.id });
    await hub.value(playerTopic(stream.id, 'playing'), 'ON');
    await hub.publish(`${playerTopic(stream.id, 'playing')}/set`, 'OFF');
    await hub.value(playerTopic(stream.id, 'playing'), 'OFF');
    t.equal((await admin.get(`/api/players/${stream.id}/playback`)).body.state, 'paused', 'OFF pauses');
    await hub.publish(`${playerTopic(stream.id, 'playing')}/set`, 'ON');
    await hub.value(playerTopic(stream.id, 'playing'), 'ON');
    t.equal((await admin.get(`/api/players/${stream.id}/playback`)).body.state, 'playing', 'ON resumes');
    await hub.publish(`${playerTopic(stream.id, 'next')}/set`, 'PRESS');
    await hub.value(playerTopic(stream.id, 'now_playing'), 'Sine Band – Tone A');
    t.equal(
      (await admin.get(`/api/players/${stream.id}/playback`)).body.trackId,
      list.tracks[1].id,
      'next went on to the second track',
    );
    await hub.publish(`${playerTopic(stream.id, 'previous')}/set`, 'PRESS');
    await hub.value(playerTopic(stream.id, 'now_playing'), 'Long Tone');
    t.equal(
      (await admin.get(`/api/players/${stream.id}/playback`)).body.trackId,
      list.tracks[0].id,
      'previous went back',
    );
  },
);

t.test(
  'a transport command for a wired player, an unknown player or a player outside the assignments is refused and changes nothing',
  async (t) => {
    const { hub, admin, d, stream, wired, nodeId } = await streamBridge(t);
    const theirs = (
      await admin.post('/api/players', { name: 'Theirs', input: { channel: 3 }, output: { kind: 'null' } })
    ).body;
    await admin.post(`/api/players/${theirs.id}/play`, { uri: `file:${TRACKS.long}` });
    t.notOk(
      hub.latest.has(configTopic('switch', nodeId, `player_${theirs.id}_playing`)),
      'no entity for a player the account may not see',
    );
    const unknown = randomUUID();
    const wiredBefore = (await admin.get(`/api/players/${wired.id}`)).body;

    await hub.publish(`${playerTopic(wired.id, 'playing')}/set`, 'ON');
    await d.untilLog(
      /"reason":"conflict: player \\"Turntable\\" is a device wired to input 2: the appliance does not play it.*"msg":"MQTT command ignored"/,
    );
    await hub.publish(`${playerTopic(unknown, 'next')}/set`, 'PRESS');
    await d.untilLog(new RegExp(`"reason":"not-found: no player with id ${unknown}".*"msg":"MQTT command ignored"`));
    await hub.publish(`${playerTopic(theirs.id, 'playing')}/set`, 'OFF');
    await d.untilLog(new RegExp(`"reason":"not-found: no player with id ${theirs.id}".*"msg":"MQTT command ignored"`));

    t.same((await admin.get(`/api/players/${wired.id}`)).body, wiredBefore, 'the wired player is as it was');
    t.equal(
      (await admin.get(`/api/players/${theirs.id}/playback`)).body.state,
      'playing',
      'the unassigned player still plays',
    );
    t.equal(
      (await admin.get(`/api/players/${stream.id}/playback`)).body.state,
      'stopped',
      'the bridged stream player was not touched',
    );
  },
);

t.test('a Viewer-backed bridge shows a stream player but its switch and buttons change nothing', async (t) => {
  const { hub, admin, d, stream, list } = await streamBridge(t, 'Viewer');
  await admin.post(`/api/players/${stream.id}/play`, { playlistId: list.id });
  await hub.value(playerTopic(stream.id, 'playing'), 'ON');
  await hub.publish(`${playerTopic(stream.id, 'playing')}/set`, 'OFF');
  await hub.publish(`${playerTopic(stream.id, 'next')}/set`, 'PRESS');
  const lines = await d.untilLog(/MQTT command ignored/, 2);
  t.ok(
    lines.every((line) => /Viewer can read but not change/.test(line)),
    'both refused for the role',
  );
  const playback = (await admin.get(`/api/players/${stream.id}/playback`)).body;
  t.match(playback, { state: 'playing', trackId: list.tracks[0].id }, 'still playing the first track');
});

t.test("a stream player's entities go when it becomes a wired player again, and when it is deleted", async (t) => {
  const { hub, admin, stream, nodeId } = await streamBridge(t);
  const gone = (object: string, component: string) =>
    !hub.latest.has(configTopic(component, nodeId, `player_${stream.id}_${object}`));
  t.equal((await admin.put(`/api/players/${stream.id}`, { output: null })).status, 200);
  // The retained states are cleared after the discovery configs, in messages of their own: waited for together.
  const fields = ['now_playing', 'position', 'playing', 'availability'];
  const left = () => fields.filter((field) => hub.latest.has(playerTopic(stream.id, field)));
  await hub.until(
    () => ENTITIES.every(([component, object]) => gone(object, component)) && left().length === 0,
    'the stream entities and their states cleared',
  );
  t.same(left(), [], 'its now_playing, position, playing and availability states cleared');
  t.ok(
    hub.latest.has(configTopic('number', nodeId, `player_${stream.id}_volume`)),
    'its volume stays: it is still a player',
  );

  t.equal((await admin.put(`/api/players/${stream.id}`, { output: { kind: 'null' } })).status, 200);
  await hub.value(playerTopic(stream.id, 'availability'), 'online');
  t.ok(
    ENTITIES.every(([component, object]) => !gone(object, component)),
    'a stream player again: its entities are back',
  );
  t.equal((await admin.del(`/api/players/${stream.id}`)).status, 204);
  await hub.until(
    () => ENTITIES.every(([component, object]) => gone(object, component)) && !hub.latest.has(attributes(stream.id)),
    'every entity of the deleted player cleared',
  );
  t.notOk(hub.latest.has(configTopic('number', nodeId, `player_${stream.id}_volume`)), 'its volume too');
});
