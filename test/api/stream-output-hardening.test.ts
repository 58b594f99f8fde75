// A stream player's output reaches MPD's configuration, so it is checked against closed lists, in the API and in a
// restore: an ALSA device is a sound card's PCM name (never a plugin that writes a file or runs a program), a FIFO a
// path that leads into a folder FIFOs are kept in, outside the state folder, and one FIFO is one output however its
// path is spelled. A row an older version stored keeps its player, and its MPD refuses to start on it.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { AudioRepo } from '../../daemon/store/audio-repo.js';
import { Store } from '../../daemon/store/db.js';
import { concurrently } from '../helpers/concurrency.js';
import { tempDir } from '../helpers/daemon.js';
import { musicFolder, TRACKS } from '../helpers/mpd-rig.js';
import { startStreamDaemon } from '../helpers/stream-rig.js';

concurrently(t, 3);
const music = musicFolder(t);

/** A folder under /tmp for the test's FIFOs (a folder FIFOs may be kept in), removed in teardown. */
function fifoFolder(t: { teardown(fn: () => unknown): void }): string {
  const dir = tempDir('azc-outputs-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The copies of the database a restore makes before it changes anything. */
const copies = (stateDir: string) =>
  existsSync(path.join(stateDir, 'backups')) ? readdirSync(path.join(stateDir, 'backups')) : [];

t.test(
  'an ALSA device that names a plugin writing a file or running a program is refused, on create and on change',
  async (t) => {
    const rig = await startStreamDaemon(t, { music });
    const { api } = rig;
    const marker = path.join(fifoFolder(t), 'ran');
    const hostile = [
      `file:FILE='|touch ${marker}'`,
      `file:FILE=${marker}`,
      "pipe:PROGRAM='touch x'",
      'hw:0;touch x',
      "hw:CARD='x'",
      'hw:CARD=a b',
      'plughw:CARD=x,DEV=0,SUBDEV=0,FILE=y',
      'hw:CARD=x,CARD=y',
      'tee:hw,/tmp/x',
      'shm:x',
      'plug:file',
      '{type file}',
      'hw:/dev/snd',
      'default:',
      'hw:0,0,0,0',
      'hw:DEV=0,0',
      'null',
    ];
    for (const device of hostile) {
      const res = await api.post('/api/players', {
        name: 'X',
        input: { channel: 1 },
        output: { kind: 'alsa', device },
      });
      t.equal(res.status, 400, `${device}: ${res.text.slice(0, 200)}`);
      t.match(
        res.body.errors?.['output.device'],
        [/must be one of default, sysdefault, hw, plughw.*CARD=<name>/],
        `${device}: the field and the accepted forms are named`,
      );
    }
    t.equal((await api.get('/api/players')).body.length, 0, 'nothing refused was made');

    const accepted = ['hw:0,0', 'plughw:CARD=sndrpihifiberry,DEV=0', 'default', 'sysdefault:CARD=Headphones'];
    for (const [i, device] of accepted.entries()) {
      const res = await api.post('/api/players', {
        name: `DAC ${i}`,
        input: { channel: i + 1 },
        output: { kind: 'alsa', device },
      });
      t.equal(res.status, 201, `${device}: ${res.text.slice(0, 200)}`);
      t.same(res.body.output, { kind: 'alsa', device }, `${device} is stored as given`);
    }
    const first = (await api.get('/api/players')).body[0];
    const changed = await api.put(`/api/players/${first.id}`, {
      output: { kind: 'alsa', device: `file:FILE='|touch ${marker}'` },
    });
    t.equal(changed.status, 400, 'a change to such a device too');
    t.match(changed.body.errors?.['output.device'], [/must be one of/]);
    t.same(
      (await api.get(`/api/players/${first.id}`)).body.output,
      { kind: 'alsa', device: 'hw:0,0' },
      'the player keeps its device',
    );
    t.notOk(existsSync(marker), 'no command ran');
  },
);

t.test(
  'a FIFO must lead into a folder FIFOs are kept in, outside the state folder, and name no other kind of file',
  async (t) => {
    const rig = await startStreamDaemon(t, { music });
    const { api } = rig;
    const dir = fifoFolder(t);
    writeFileSync(path.join(dir, 'notes.txt'), 'keep me');
    mkdirSync(path.join(dir, 'folder'));
    symlinkSync(rig.d.stateDir, path.join(dir, 'state'));
    const cases: Array<[string, string, RegExp]> = [
      ['the database journal', path.join(rig.d.stateDir, 'azc.db-journal'), /must be outside azcd's state folder/],
      ['a player folder', path.join(rig.d.stateDir, 'players', 'x.pcm'), /must be outside azcd's state folder/],
      [
        'the state folder through a symlink',
        path.join(dir, 'state', 'azc.db-journal'),
        /must be outside azcd's state folder .*\(it leads to /,
      ],
      [
        'a system folder',
        '/etc/azcd.pcm',
        /must be in \/run, \/tmp, \/var\/tmp, \/dev\/shm, \/srv or a folder below them/,
      ],
      ['a home folder', '/root/azcd.pcm', /must be in \/run, \/tmp/],
      ['a FIFO folder itself', '/tmp', /must be in \/run, \/tmp/],
      ['a regular file', path.join(dir, 'notes.txt'), /which is a regular file/],
      ['a folder', path.join(dir, 'folder'), /which is a folder/],
      ['a file where a folder should be', path.join(dir, 'notes.txt', 'x.pcm'), /has a file where a folder should be/],
    ];
    for (const [what, fifo, why] of cases) {
      const res = await api.post('/api/players', {
        name: 'X',
        input: { channel: 1 },
        output: { kind: 'fifo', path: fifo },
      });
      t.equal(res.status, 400, `${what}: ${res.text.slice(0, 200)}`);
      t.match(res.body.errors?.['output.path'], [why], `${what}: the field and the rule are named`);
    }
    t.equal((await api.get('/api/players')).body.length, 0, 'nothing refused was made');
    t.equal(statSync(path.join(dir, 'notes.txt')).isFile(), true, 'the file is untouched');

    const fresh = await api.post('/api/players', {
      name: 'Snapcast',
      input: { channel: 1 },
      output: { kind: 'fifo', path: path.join(dir, 'snap.pcm') },
    });
    t.equal(fresh.status, 201, 'a path where nothing is yet, in a FIFO folder');
    const changed = await api.put(`/api/players/${fresh.body.id}`, {
      output: { kind: 'fifo', path: path.join(rig.d.stateDir, 'azc.db-journal') },
    });
    t.equal(changed.status, 400, 'a change into the state folder too');
    t.same(
      (await api.get(`/api/players/${fresh.body.id}`)).body.output,
      { kind: 'fifo', path: path.join(dir, 'snap.pcm') },
      'the player keeps its FIFO',
    );
  },
);

t.test('one FIFO carries one player however its path is spelled', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const { api } = rig;
  const dir = fifoFolder(t);
  mkdirSync(path.join(dir, 'real'));
  symlinkSync(path.join(dir, 'real'), path.join(dir, 'link'));
  const fifo = path.join(dir, 'real', 'a.pcm');
  execFileSync('mkfifo', ['-m', '600', fifo]);
  t.equal(
    (await api.post('/api/players', { name: 'First', input: { channel: 1 }, output: { kind: 'fifo', path: fifo } }))
      .status,
    201,
  );
  const spellings = [`${dir}/real//a.pcm`, `${dir}//real/./a.pcm`, `${dir}/link/a.pcm`];
  for (const spelling of spellings) {
    const res = await api.post('/api/players', {
      name: 'Second',
      input: { channel: 2 },
      output: { kind: 'fifo', path: spelling },
    });
    t.equal(res.status, 409, `${spelling}: ${res.text.slice(0, 200)}`);
    t.match(res.body.detail, /already carries player "First"/);
  }
  const other = await api.post('/api/players', {
    name: 'Other',
    input: { channel: 2 },
    output: { kind: 'fifo', path: `${dir}/link//b.pcm` },
  });
  t.equal(other.status, 201, 'another FIFO in the same folder');
  t.same(other.body.output, { kind: 'fifo', path: path.join(dir, 'real', 'b.pcm') }, 'stored as the path it leads to');
  const moved = await api.put(`/api/players/${other.body.id}`, { output: { kind: 'fifo', path: `${dir}/link/a.pcm` } });
  t.equal(moved.status, 409, "a change onto the first player's FIFO by a symlinked folder");
  t.same(
    (await api.get(`/api/players/${other.body.id}`)).body.output,
    { kind: 'fifo', path: path.join(dir, 'real', 'b.pcm') },
    'the player keeps its FIFO',
  );
});

t.test('a backup whose player has a hostile output is refused naming the player, and nothing changes', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const { api } = rig;
  const dir = fifoFolder(t);
  const kept = await api.post('/api/players', {
    name: 'Kitchen',
    input: { channel: 1 },
    output: { kind: 'alsa', device: 'hw:0,0' },
  });
  t.equal(kept.status, 201);
  const fifo = path.join(dir, 'a.pcm');
  const second = await api.post('/api/players', {
    name: 'Den',
    input: { channel: 2 },
    output: { kind: 'fifo', path: fifo },
  });
  t.equal(second.status, 201);
  const backup = (await api.get('/api/backup')).body;
  const before = copies(rig.d.stateDir);
  const withOutput = (name: string, output: object) => ({
    ...backup,
    players: backup.players.map((p: { name: string }) => (p.name === name ? { ...p, output } : p)),
  });
  const index = backup.players.findIndex((p: { name: string }) => p.name === 'Kitchen');
  const cases: Array<[string, object, string, RegExp]> = [
    [
      'an ALSA device that runs a command',
      withOutput('Kitchen', { kind: 'alsa', device: "file:FILE='|touch /tmp/azc-restored'" }),
      `backup.players.${index}.output.device`,
      /^of player "Kitchen" must be one of default/,
    ],
    [
      'an ALSA device that writes a file',
      withOutput('Kitchen', { kind: 'alsa', device: 'file:FILE=/tmp/azc-restored' }),
      `backup.players.${index}.output.device`,
      /^of player "Kitchen" must be one of/,
    ],
    [
      'a FIFO in the state folder',
      withOutput('Kitchen', { kind: 'fifo', path: path.join(rig.d.stateDir, 'azc.db-journal') }),
      `backup.players.${index}.output.path`,
      /^of player "Kitchen" must be outside azcd's state folder/,
    ],
    [
      'a FIFO in a system folder',
      withOutput('Kitchen', { kind: 'fifo', path: '/etc/azcd.pcm' }),
      `backup.players.${index}.output.path`,
      /^of player "Kitchen" must be in \/run/,
    ],
    [
      "the other player's FIFO spelled otherwise",
      withOutput('Kitchen', { kind: 'fifo', path: `${dir}//a.pcm` }),
      `backup.players.`,
      /same output as entry \d \(player "(Den|Kitchen)"\)/,
    ],
  ];
  for (const [what, doc, field, why] of cases) {
    const res = await api.post('/api/restore', { backup: doc });
    t.equal(res.status, 400, `${what}: ${res.text.slice(0, 300)}`);
    t.match(
      res.body.detail,
      /^the backup was not restored: .*player ".*nothing was changed$/,
      `${what}: the detail names the player`,
    );
    const found = Object.entries(res.body.errors ?? {}).find(([key]) => key.startsWith(field));
    t.match(found?.[1], [why], `${what}: the field is named with the rule`);
  }
  t.same(copies(rig.d.stateDir), before, 'no copy of the database was made for any of them');
  t.same(
    (await api.get(`/api/players/${kept.body.id}`)).body.output,
    { kind: 'alsa', device: 'hw:0,0' },
    'the configuration is as it was',
  );
  t.equal((await api.get('/api/players')).body.length, 2);
  t.notOk(existsSync('/tmp/azc-restored'), 'no file was written');
});

t.test(
  'a FIFO an older version stored in the state folder keeps its player, its MPD refuses it, and the daemon starts and restores',
  async (t) => {
    const rig = await startStreamDaemon(t, { music });
    const dir = fifoFolder(t);
    const created = await rig.api.post('/api/players', {
      name: 'Old',
      input: { channel: 1 },
      output: { kind: 'fifo', path: path.join(dir, 'old.pcm') },
    });
    t.equal(created.status, 201);
    const id = created.body.id as string;
    const backup = (await rig.api.get('/api/backup')).body;
    await rig.d.stop();
    // What an older version let an admin store.
    const journal = path.join(rig.d.stateDir, 'azc.db-journal');
    const store = new Store(path.join(rig.d.stateDir, 'azc.db'));
    new AudioRepo(store).setPlayerOutput(id, 'fifo', journal);
    store.close();

    const again = await startStreamDaemon(t, { music, stateDir: rig.d.stateDir });
    const failed = await again.until(id, (p) => p.engine.state === 'failed', 'its MPD to refuse the output');
    t.match(failed.engine.detail, /FIFO .*azc\.db-journal must be outside azcd's state folder/, 'the reason is given');
    t.match(
      (await again.api.get(`/api/players/${id}`)).body,
      { name: 'Old', output: { kind: 'fifo', path: journal } },
      'the player is kept',
    );
    const play = await again.api.post(`/api/players/${id}/play`, { uri: `file:${TRACKS.a}` });
    t.equal(play.status, 409, 'play is refused');
    t.match(play.body.detail, /could not start: .*must be outside azcd's state folder/, 'with the reason');
    t.notOk(existsSync(journal) && statSync(journal).isFIFO(), 'no FIFO was made beside the database');
    const restored = await again.api.post('/api/restore', { backup });
    t.equal(restored.status, 200, `a restore still works: ${restored.text.slice(0, 300)}`);
    t.same(
      (await again.api.get(`/api/players/${id}`)).body.output,
      { kind: 'fifo', path: path.join(dir, 'old.pcm') },
      'and gives the player its FIFO back',
    );
  },
);
