// The closed lists a stream player's output is checked against: the ALSA names a sound card's devices have, and FIFO
// paths resolved into a FIFO folder outside the state folder; MPD's configuration refuses anything else again.

import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { playerFiles, renderConfig } from '../../drivers/mpd/config.js';
import { alsaDeviceProblem, placeFifo } from '../../drivers/playback.js';
import { tempDir } from '../helpers/daemon.js';

t.test("ALSA devices are a card's PCM names, bare or with positional or CARD/DEV/SUBDEV arguments", async (t) => {
  const accepted = [
    'default',
    'sysdefault',
    'hw:0',
    'hw:0,0',
    'hw:0,0,1',
    'plughw:1',
    'hw:Headphones',
    'plughw:CARD=sndrpihifiberry,DEV=0',
    'sysdefault:CARD=Headphones',
    'default:CARD=vc4hdmi0',
    'hdmi:CARD=vc4hdmi0,DEV=0',
    'dmix:CARD=Loopback,DEV=1,SUBDEV=2',
    'surround51:CARD=USB_Audio-2',
    'iec958:1',
  ];
  for (const device of accepted) t.equal(alsaDeviceProblem(device), undefined, device);
});

t.test(
  'anything else is refused with the accepted forms: other plugins, quotes, separators, paths, odd arguments',
  async (t) => {
    const refused = [
      "file:FILE='|touch /tmp/x'",
      'file:FILE=/tmp/x',
      "pipe:PROGRAM='cat'",
      'tee:hw,/tmp/x',
      'shm:x',
      'plug:file',
      'null',
      'Default',
      'hw:0;touch x',
      'hw:0 0',
      "hw:CARD='x'",
      'hw:CARD="x"',
      'hw:CARD={x}',
      'hw:CARD=x,CARD=y',
      'hw:card=x',
      'hw:CARD=x,FILE=y',
      'hw:DEV=0,0',
      'hw:x,y',
      'hw:0,0,0,0',
      'hw:',
      'hw:0,',
      'hw:/dev/snd',
      `hw:CARD=${'a'.repeat(33)}`,
      'hw:0,1234',
      '',
    ];
    for (const device of refused)
      t.match(
        alsaDeviceProblem(device),
        /^must be one of default, .*CARD=<name>, DEV=<n>, SUBDEV=<n>.*; got /,
        JSON.stringify(device),
      );
  },
);

t.test('a FIFO is placed where its path leads, in a FIFO folder outside the state folder', async (t) => {
  const dir = tempDir('azc-place-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const state = path.join(dir, 'state');
  mkdirSync(path.join(dir, 'real'));
  mkdirSync(state);
  symlinkSync(path.join(dir, 'real'), path.join(dir, 'link'));
  symlinkSync(state, path.join(dir, 'state-link'));
  symlinkSync(path.join(dir, 'nowhere'), path.join(dir, 'dangling'));
  t.same(
    placeFifo(`${dir}//link/./a.pcm`, state),
    { path: path.join(dir, 'real', 'a.pcm') },
    'double slashes, dots and symlinked folders resolved',
  );
  t.match(
    placeFifo(path.join(dir, 'state-link', 'x.pcm'), state).problem,
    /must be outside azcd's state folder/,
    'a symlink into the state folder',
  );
  t.match(placeFifo(path.join(dir, 'dangling', 'x.pcm'), state).problem, /symlink that points nowhere/);
  t.match(placeFifo('/usr/lib/x.pcm', state).problem, /must be in \/run, \/tmp/);
  t.match(placeFifo('/x.pcm', state).problem, /must be in \/run, \/tmp/);
});

t.test(
  "MPD's configuration refuses an ALSA name or a FIFO the checks would refuse, and names the FIFO as it resolves",
  async (t) => {
    const dir = tempDir('azc-conf-');
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const state = path.join(dir, 'state');
    mkdirSync(state);
    mkdirSync(path.join(dir, 'real'));
    symlinkSync(path.join(dir, 'real'), path.join(dir, 'link'));
    const files = playerFiles(state, 'p1');
    const render = (output: Parameters<typeof renderConfig>[0]['output']) =>
      renderConfig({ files, musicRoot: '/srv/music', output, logLevel: 'warning' });
    t.throws(() => render({ kind: 'alsa', device: "file:FILE='|touch /tmp/x'" }), {
      code: 'bad-request',
      message: /ALSA device must be one of/,
    });
    t.throws(() => render({ kind: 'fifo', path: path.join(state, 'azc.db-journal') }), {
      code: 'bad-request',
      message: /must be outside azcd's state folder/,
    });
    t.throws(() => render({ kind: 'fifo', path: '/etc/x.pcm' }), { code: 'bad-request', message: /must be in \/run/ });
    t.match(render({ kind: 'fifo', path: `${dir}/link//a.pcm` }), `path "${path.join(dir, 'real', 'a.pcm')}"`);
  },
);
