// The mpd.conf a player gets: private control socket, nothing on the network, volume untouched, the chosen output.
import t from 'tap';
import { playerFiles, renderConfig } from '../../drivers/mpd/config.js';
import type { PlaybackOutput } from '../../drivers/playback.js';

const files = playerFiles('/var/lib/azcd', 'p1');
const render = (output: PlaybackOutput, extra: Partial<Parameters<typeof renderConfig>[0]> = {}) =>
  renderConfig({ files, musicRoot: '/srv/music', output, logLevel: 'warning', ...extra });

t.test("a player's files live in its own folder under the state folder", async (t) => {
  t.same(files, {
    dir: '/var/lib/azcd/players/p1',
    conf: '/var/lib/azcd/players/p1/mpd.conf',
    socket: '/var/lib/azcd/players/p1/socket',
    database: '/var/lib/azcd/players/p1/database',
    pid: '/var/lib/azcd/players/p1/mpd.pid',
  });
});

t.test('the control socket is the only listener, and nothing is announced', async (t) => {
  const conf = render({ kind: 'null' });
  t.same(conf.match(/^bind_to_address .*$/gm), ['bind_to_address "/var/lib/azcd/players/p1/socket"']);
  t.notMatch(conf, /^port /m);
  t.match(conf, /^zeroconf_enabled "no"$/m);
});

t.test('a listen address adds a TCP listener on it', async (t) => {
  const conf = render({ kind: 'null' }, { listen: { host: '127.0.0.1', port: 6601 } });
  t.match(conf, /^bind_to_address "127\.0\.0\.1"$/m);
  t.match(conf, /^port "6601"$/m);
  t.throws(() => render({ kind: 'null' }, { listen: { host: '127.0.0.1', port: 70000 } }), {
    code: 'bad-request',
    message: /1 to 65535/,
  });
});

t.test('the music folder is the database root, and links that lead out of it are not followed', async (t) => {
  const conf = render({ kind: 'null' });
  t.match(conf, /^music_directory "\/srv\/music"$/m);
  t.match(conf, /^db_file "\/var\/lib\/azcd\/players\/p1\/database"$/m);
  t.match(conf, /^follow_outside_symlinks "no"$/m);
  t.notMatch(conf, /state_file|sticker_file|playlist_directory/);
});

t.test('nothing in the engine changes the volume: no mixer, no replay gain, no normalisation', async (t) => {
  for (const output of [
    { kind: 'null' },
    { kind: 'alsa', device: 'hw:0' },
    { kind: 'fifo', path: '/tmp/x' },
    { kind: 'pipe', command: 'cat' },
  ] as PlaybackOutput[]) {
    const conf = render(output);
    t.match(conf, /^\s+mixer_type "none"$/m, output.kind);
    t.match(conf, /^replaygain "off"$/m);
    t.match(conf, /^volume_normalization "no"$/m);
  }
});

t.test('each output kind becomes its MPD output, FIFO and pipe in 44.1 kHz 16-bit stereo', async (t) => {
  t.match(
    render({ kind: 'alsa', device: 'hw:CARD=sndrpihifiberry,DEV=0' }),
    /type "alsa"\n.*\n.*\n\s+device "hw:CARD=sndrpihifiberry,DEV=0"/,
  );
  t.match(
    render({ kind: 'fifo', path: '/run/snap/fifo' }),
    /type "fifo"[\s\S]*path "\/run\/snap\/fifo"[\s\S]*format "44100:16:2"/,
  );
  t.match(
    render({ kind: 'pipe', command: 'aplay -f cd' }),
    /type "pipe"[\s\S]*command "aplay -f cd"[\s\S]*format "44100:16:2"/,
  );
  t.match(render({ kind: 'null' }), /type "null"[\s\S]*sync "yes"/);
});

t.test('quotes in values are escaped, and line breaks refused', async (t) => {
  t.match(render({ kind: 'pipe', command: 'sh -c "cat"' }), /command "sh -c \\"cat\\""/);
  t.throws(() => render({ kind: 'pipe', command: 'cat\naudio_output {' }), {
    code: 'bad-request',
    message: /line break/,
  });
});

t.test('outputs without what they need are refused with what to give', async (t) => {
  t.throws(() => render({ kind: 'alsa', device: '' }), { code: 'bad-request', message: /aplay -L/ });
  t.throws(() => render({ kind: 'fifo', path: 'relative/fifo' }), { code: 'bad-request', message: /absolute path/ });
  t.throws(() => render({ kind: 'pipe', command: '  ' }), { code: 'bad-request', message: /standard input/ });
});

t.test('a state folder too deep for a unix socket path is refused, naming the fix', async (t) => {
  const deep = playerFiles(`/${'d'.repeat(100)}`, 'p1');
  t.throws(() => renderConfig({ files: deep, musicRoot: '/m', output: { kind: 'null' }, logLevel: 'warning' }), {
    message: /shorter state folder/,
  });
});

t.test('a player id that cannot be a folder name is refused', async (t) => {
  for (const id of ['', '../x', 'a/b', '.hidden', 'x'.repeat(65)])
    t.throws(() => playerFiles('/s', id), { code: 'bad-request' }, JSON.stringify(id));
});
