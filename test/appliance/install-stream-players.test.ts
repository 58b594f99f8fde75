// install.sh's last step against a real daemon: systemd/stream-players.mjs turns INPUT=DEVICE answers into stream
// players over the API on loopback (new ones, an output for the player already on an input, nothing twice).

import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { tempDir } from '../helpers/daemon.js';
import { ROOT } from '../helpers/paths.js';
import { startStreamDaemon } from '../helpers/stream-rig.js';

const TOOL = path.join(ROOT, 'systemd', 'stream-players.mjs');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the tool as install.sh does, as its own process (the daemon in this process must keep answering meanwhile). */
function tool(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [TOOL, ...args],
      { env: { PATH: process.env.PATH, ...env }, timeout: 30_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

/** The players on each input, by channel: name and output. */
async function byChannel(api: {
  get(path: string): Promise<{ body: any }>;
}): Promise<Record<number, { id: string; output: unknown }>> {
  const players = (await api.get('/api/players')).body as Array<{
    id: string;
    input: { channel: number };
    output: unknown;
  }>;
  return Object.fromEntries(players.map((p) => [p.input.channel, { id: p.id, output: p.output }]));
}

t.test(
  'each INPUT=DEVICE becomes a stream player on that input; the player already there gets the output; a rerun changes nothing',
  async (t) => {
    const rig = await startStreamDaemon(t);
    const { api } = rig;
    const wired = await api.post('/api/players', { name: 'Turntable', input: { channel: 3 } });
    t.equal(wired.status, 201);
    const mappings = ['5=hw:CARD=sndrpihifiberry,DEV=0', '3=hw:CARD=Headphones,DEV=0'];

    const first = await tool(['--url', rig.d.base, ...mappings], { AZC_API_KEY: rig.d.adminKey });
    t.equal(first.code, 0, first.stderr);
    t.match(first.stdout, /input 5: created "Stream player 5" \([0-9a-f-]{36}\), ALSA hw:CARD=sndrpihifiberry,DEV=0/);
    t.match(first.stdout, /input 3: set the output of "Turntable" \([0-9a-f-]{36}\), ALSA hw:CARD=Headphones,DEV=0/);
    const after = await byChannel(api);
    t.same(after[5]?.output, { kind: 'alsa', device: 'hw:CARD=sndrpihifiberry,DEV=0' });
    t.equal(after[3]?.id, wired.body.id, 'the same player, not a second one on input 3');
    t.same(after[3]?.output, { kind: 'alsa', device: 'hw:CARD=Headphones,DEV=0' });

    const again = await tool(['--url', rig.d.base, ...mappings], { AZC_API_KEY: rig.d.adminKey });
    t.equal(again.code, 0, again.stderr);
    t.match(again.stdout, /input 5: "Stream player 5" already plays into hw:CARD=sndrpihifiberry,DEV=0/);
    t.match(again.stdout, /input 3: "Turntable" already plays into hw:CARD=Headphones,DEV=0/);
    t.same(await byChannel(api), after, 'no player made or changed');
  },
);

t.test(
  'the tool finds the service where its config and env files put it, with the key from initial-admin.txt',
  async (t) => {
    const rig = await startStreamDaemon(t);
    const dir = tempDir('azc-install-files-');
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const port = new URL(rig.d.base).port;
    // The port in the env file wins over the one in config.json, as for the daemon itself.
    writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ host: '0.0.0.0', port: 1 }));
    writeFileSync(path.join(dir, 'azcd.env'), `AZC_HOST=127.0.0.1\nAZC_PORT=${port}\n`);
    writeFileSync(
      path.join(dir, 'initial-admin.txt'),
      `# azcd first administrator\nusername=admin\npassword=x\napiKey=${rig.d.adminKey}\n`,
    );
    const args = [
      '--config',
      path.join(dir, 'config.json'),
      '--service-env',
      path.join(dir, 'azcd.env'),
      '--key-file',
      path.join(dir, 'initial-admin.txt'),
    ];
    const result = await tool([...args, '6=hw:CARD=USB,DEV=0']);
    t.equal(result.code, 0, result.stderr);
    t.same((await byChannel(rig.api))[6]?.output, { kind: 'alsa', device: 'hw:CARD=USB,DEV=0' });
  },
);

t.test('the tool reports what the daemon refuses, and a missing or wrong key, with the fix', async (t) => {
  const rig = await startStreamDaemon(t);
  const first = await tool(['--url', rig.d.base, '5=hw:CARD=A,DEV=0'], { AZC_API_KEY: rig.d.adminKey });
  t.equal(first.code, 0, first.stderr);

  const taken = await tool(['--url', rig.d.base, '6=hw:CARD=A,DEV=0', '4=hw:CARD=B,DEV=0'], {
    AZC_API_KEY: rig.d.adminKey,
  });
  t.equal(taken.code, 1, 'a mapping the daemon refused fails the run');
  t.match(
    taken.stderr,
    /input 6: POST \/api\/players: 409 .*ALSA device hw:CARD=A,DEV=0 already carries player "Stream player 5"/,
  );
  t.match(taken.stdout, /input 4: created "Stream player 4"/, 'the other mappings are still made');

  const wrongKey = await tool(['--url', rig.d.base, '2=hw:CARD=C,DEV=0'], { AZC_API_KEY: 'not-a-key' });
  t.equal(wrongKey.code, 1);
  t.match(wrongKey.stderr, /GET \/api\/players: 401/);
  const noKey = await tool([
    '--url',
    rig.d.base,
    '--key-file',
    path.join(rig.d.stateDir, 'gone.txt'),
    '2=hw:CARD=C,DEV=0',
  ]);
  t.equal(noKey.code, 2);
  t.match(noKey.stderr, /no API key: .*gone\.txt holds none; rerun with AZC_API_KEY=<an administrator's API key>/);
  t.equal((await byChannel(rig.api))[2], undefined, 'nothing made without a working key');
});
