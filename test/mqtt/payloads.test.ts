// The wire format of values and the command topics the bridge accepts, without a broker.
import t from 'tap';
import {
  minutesLeft,
  NOTHING_PLAYING,
  type NowPlayingFields,
  nowPlaying,
  parseMinutes,
  parseOnOff,
  parsePercent,
  parseToneStep,
  percent,
  sourceLabels,
  toneStep,
} from '../../daemon/mqtt/payloads.js';
import { Topics } from '../../daemon/mqtt/topics.js';

const ID = '0b8e7c1a-5a4e-4f55-9a55-0d5c3e2e9f01';

t.test('volumes are percentages with at most one decimal, and commands accept exactly 0 to 100', async (t) => {
  t.equal(percent(0.5), '50');
  t.equal(percent(1 / 3), '33.3');
  t.same(parsePercent('42.5'), { ok: true, value: 0.425 });
  for (const bad of ['', '-1', '100.1', '1e2', '0x10', 'NaN', ' ', '50%', '{"v":1}'])
    t.equal(parsePercent(bad).ok, false, bad);
});

t.test(
  'a tone is the native step from flat, each side over its own steps, and a step command maps back exactly',
  async (t) => {
    const xantechBalance = { down: 32, up: 31 };
    t.equal(toneStep(-1, xantechBalance), '-32', 'full left');
    t.equal(toneStep(1, xantechBalance), '31', 'full right');
    t.equal(toneStep(-0.01, { down: 7, up: 7 }), '0', 'a hair below flat is flat');
    t.equal(toneStep(0.5, { down: 7, up: 7 }), '4', 'between two steps: the one the amplifier plays');
    t.same(parseToneStep('-16', xantechBalance, 'balance'), { ok: true, value: -0.5 });
    t.same(parseToneStep('31', xantechBalance, 'balance'), { ok: true, value: 1 });
    for (let step = -32; step <= 31; step++)
      t.equal(
        toneStep((parseToneStep(String(step), xantechBalance, 'balance') as { value: number }).value, xantechBalance),
        String(step),
        `step ${step} round-trips`,
      );
    for (const bad of ['32', '-33', '', '1e1', 'ON'])
      t.equal(parseToneStep(bad, xantechBalance, 'balance').ok, false, bad);
    t.match(parseToneStep('8', { down: 7, up: 7 }, 'bass'), {
      ok: false,
      reason: 'bass must be a number from -7 to 7, got "8"',
    });
  },
);

t.test('switch commands are ON or OFF in any letter case and nothing else', async (t) => {
  t.same(parseOnOff('on'), { ok: true, value: true });
  t.same(parseOnOff('OFF'), { ok: true, value: false });
  for (const bad of ['1', 'true', 'ONN', '']) t.equal(parseOnOff(bad).ok, false, bad);
});

/** A player view as the labels need it: only the id and name matter. */
const player = (id: string, name: string) => ({
  id,
  name,
  volume: 0,
  zoneIds: [],
  input: { amplifier: 'simulated', driver: 'simulated', channel: 1 },
  output: null,
  state: 'idle' as const,
  available: true,
  unavailableReason: null,
});

t.test('players sharing a name, or named like the "none" option, get distinct labels', async (t) => {
  const labels = sourceLabels([
    player('aaaaaaaa-1', 'Den'),
    player('bbbbbbbb-2', 'Den'),
    player('cccccccc-3', 'None'),
    player('dddddddd-4', 'Hall'),
  ]);
  t.same([...labels.values()], ['Den (aaaaaaaa)', 'Den (bbbbbbbb)', 'None (cccccccc)', 'Hall']);
  // Home Assistant takes "none" in any letter case for "no option" and ignores blank states.
  const odd = sourceLabels([
    player('eeeeeeee-5', 'none'),
    player('ffffffff-6', 'NONE'),
    player('11111111-7', '  '),
    player('22222222-8', 'No player'),
  ]);
  t.same([...odd.values()], ['none (eeeeeeee)', 'NONE (ffffffff)', 'Player (11111111)', 'No player (22222222)']);
});

t.test('a player named like another player’s label still gets a label of its own', async (t) => {
  const labels = sourceLabels([
    player('aaaaaaaa-1', 'Den'),
    player('bbbbbbbb-2', 'Den'),
    player('cccccccc-3', 'Den (aaaaaaaa)'),
  ]);
  t.equal(new Set(labels.values()).size, 3, `three labels: ${[...labels.values()].join(' | ')}`);
});

t.test('sleep timers: minutes left round up, commands take 0 to the maximum', async (t) => {
  const now = Date.parse('2024-05-01T20:00:00Z');
  t.equal(minutesLeft(null, now), 0);
  t.equal(minutesLeft('2024-05-01T20:30:00.000Z', now), 30);
  t.equal(minutesLeft('2024-05-01T20:00:10.000Z', now), 1, 'ten seconds left still shows a minute');
  t.equal(minutesLeft('2024-05-01T19:59:00.000Z', now), 0, 'a timer past due shows 0');
  t.same(parseMinutes('90', 1440), { ok: true, value: 90 });
  t.same(parseMinutes('2.5', 1440), { ok: true, value: 2.5 });
  for (const bad of ['', '-1', '1441', 'soon', '1e3']) t.equal(parseMinutes(bad, 1440).ok, false, bad);
});

t.test('only command topics under the base topic with a UUID and a known field are commands', async (t) => {
  const topics = new Topics('azc/test', 'homeassistant');
  t.same(topics.parseCommand(`azc/test/zone/${ID}/volume/set`), { kind: 'zone', id: ID, field: 'volume' });
  t.same(topics.parseCommand(`azc/test/player/${ID}/volume/set`), { kind: 'player', id: ID, field: 'volume' });
  t.same(topics.parseCommand('azc/test/all_off/set'), { kind: 'all-off' });
  t.same(topics.parseCommand(`azc/test/scene/${ID}/set`), { kind: 'scene', id: ID });
  t.same(topics.parseCommand(`azc/test/zone/${ID}/sleep/set`), { kind: 'zone', id: ID, field: 'sleep' });
  for (const bad of [
    `azc/test/zone/${ID}/volume`,
    `azc/test/zone/${ID}/colour/set`,
    `azc/test/player/${ID}/power/set`,
    'azc/test/zone/x/volume/set',
    `azc/other/zone/${ID}/volume/set`,
    `azc/test/zone/${ID}/volume/set/set`,
    'azc/test/scene/x/set',
    `azc/test/scene/${ID}/volume/set`,
  ]) {
    t.equal(topics.parseCommand(bad), undefined, bad);
  }
});

t.test(
  "a stream player's now-playing line: artist and title, a title, a station's name, or the file's name, never past 255 characters",
  async (t) => {
    const playback = (fields: Partial<NowPlayingFields>): NowPlayingFields => ({
      uri: 'file:albums/x/01 Intro.flac',
      title: null,
      artist: null,
      name: null,
      ...fields,
    });
    t.equal(nowPlaying(playback({ title: 'Blue Train', artist: 'John Coltrane' })), 'John Coltrane – Blue Train');
    t.equal(nowPlaying(playback({ title: 'Blue Train' })), 'Blue Train');
    t.equal(nowPlaying(playback({ uri: 'http://radio.example/live', name: 'Jazz FM' })), 'Jazz FM');
    t.equal(nowPlaying(playback({})), '01 Intro.flac');
    t.equal(
      nowPlaying(playback({ uri: 'http://radio.example/' })),
      'http://radio.example/',
      'a URL without a last segment shows whole',
    );
    t.equal(nowPlaying(playback({ uri: null })), NOTHING_PLAYING);
    const long = nowPlaying(playback({ title: 'x'.repeat(400) }));
    t.equal(long.length, 255);
    t.ok(long.endsWith('…'));
  },
);

t.test(
  "a cast's now-playing line: the sender's artist and title, or which receiver casts when it gives none",
  async (t) => {
    const cast = (fields: Partial<NowPlayingFields>): NowPlayingFields => ({
      uri: null,
      title: null,
      artist: null,
      name: null,
      source: 'airplay',
      ...fields,
    });
    t.equal(nowPlaying(cast({ title: 'So What', artist: 'Miles Davis' })), 'Miles Davis – So What');
    t.equal(nowPlaying(cast({})), 'AirPlay cast', 'a cast without titles is still something playing');
    t.equal(nowPlaying(cast({ source: 'upnp' })), 'UPnP/DLNA cast');
    t.equal(nowPlaying(cast({ source: 'squeezelite' })), 'Squeezelite cast');
    t.equal(nowPlaying(cast({ source: 'mpd' })), NOTHING_PLAYING, 'the playlist engine with nothing current');
  },
);

t.test(
  'a long now-playing line is cut by code points, as Home Assistant counts them, never inside an emoji',
  async (t) => {
    // 253 letters, then emoji: the 254th code point is the first emoji, whose second half is UTF-16 unit 255.
    const title = `${'x'.repeat(253)}${'🎷'.repeat(10)}`;
    const line = nowPlaying({ uri: 'http://radio.example/live', title, artist: null, name: null });
    t.equal([...line].length, 255, '255 code points');
    t.equal(line, `${'x'.repeat(253)}🎷…`, 'the cut falls between two emoji');
    t.notOk(
      /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(line),
      'no lone surrogate goes out',
    );
  },
);

t.test(
  "a stream player's switch and buttons are command topics; its now-playing and availability are not",
  async (t) => {
    const topics = new Topics('azc/x', 'homeassistant');
    for (const field of ['playing', 'next', 'previous'])
      t.same(topics.parseCommand(`azc/x/player/${ID}/${field}/set`), { kind: 'player', id: ID, field });
    for (const field of ['now_playing', 'availability', 'playback'])
      t.equal(topics.parseCommand(`azc/x/player/${ID}/${field}/set`), undefined, field);
  },
);
