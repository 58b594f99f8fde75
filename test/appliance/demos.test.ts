// `npm run demo:rnet` and `npm run demo:xantech` as docs/drivers.md gives them: the daemon on the emulated amplifier over a pty.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { client } from '../helpers/client.js';
import { ROOT } from '../helpers/paths.js';
import { Changes, waitFor, within } from '../helpers/wait-for.js';

const DEMOS = [
  // The command the amplifier gets for zone 1 at volume 0.5: RNET has 50 steps (zone 11), Xantech 38 (zone 1).
  { family: 'rnet', volumeCommand: /^\[amp\] volume 11 25$/m },
  { family: 'xantech', volumeCommand: /^\[amp\] !1VO19$/m },
];

for (const { family, volumeCommand } of DEMOS) {
  t.test(`npm run demo:${family} drives the emulated amplifier and stops cleanly`, async (t) => {
    // os.tmpdir() follows TMPDIR: the demo's state lands in this scratch directory.
    const scratch = mkdtempSync(path.join(tmpdir(), 'azcd-demo-'));
    t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
    // Its own process group, as a command in a terminal: Ctrl-C reaches npm, the demo, the daemon and socat.
    const demo = spawn(
      'npm',
      ['run', '--silent', `demo:${family}`, '--', '--host', '127.0.0.1', '--port', '0', '--log-level', 'warn'],
      {
        cwd: ROOT,
        env: { ...process.env, TMPDIR: scratch, NOTIFY_SOCKET: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    );
    let output = '';
    const changes = new Changes();
    for (const stream of [demo.stdout!, demo.stderr!]) {
      stream.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
        changes.notify();
      });
    }
    // The pipes close once every process of the command has exited (npm, the demo, the daemon, socat).
    const allExited = Promise.all(
      [demo.stdout!, demo.stderr!].map((stream) => new Promise((resolve) => stream.once('close', resolve))),
    );
    t.teardown(() => {
      try {
        process.kill(-demo.pid!, 'SIGKILL');
      } catch {
        // the group is gone already
      }
    });
    const seen = (re: RegExp, what: string) => waitFor(() => re.exec(output), undefined, { what, changes });

    const port = (await seen(/listening on http:\/\/127\.0\.0\.1:(\d+)/, 'the daemon to listen'))[1];
    const stateDir = path.join(scratch, `azcd-demo-${family}`);
    const key = /apiKey=(\S+)/.exec(readFileSync(path.join(stateDir, 'initial-admin.txt'), 'utf8'))![1]!;
    const api = client(`http://127.0.0.1:${port}`, key);
    await waitFor(async () => (await api.get('/api/health')).body.status === 'ok', undefined, {
      what: `the ${family} amplifier online`,
    });
    const zone = (await api.get('/api/zones')).body[0].id as string;
    t.equal((await api.put(`/api/zones/${zone}/power`, { power: true })).status, 204);
    t.equal((await api.put(`/api/zones/${zone}/volume`, { volume: 0.5 })).status, 204);
    t.ok(
      await seen(volumeCommand, 'the volume command on the emulated line'),
      'the amplifier got the volume, and the demo printed it',
    );

    const amplifierEnd = /emulated \w+ amplifier on (\S+);/.exec(output)![1]!;
    const beforeStop = output.length;
    process.kill(-demo.pid!, 'SIGINT');
    await within(allExited, undefined, 'every process of the demo to exit');
    t.notOk(existsSync(amplifierEnd), `Ctrl-C stopped everything, socat's pty ${amplifierEnd} included`);
    t.notMatch(output.slice(0, beforeStop), /Error|error:/, 'and nothing failed on the way');
    // Ctrl-C reaches socat and the daemon at once: on a busy machine socat may go first, and the daemon then reports
    // the line gone (EIO) before it stops itself. Nothing else may fail while stopping.
    const failedWhileStopping = output
      .slice(beforeStop)
      .split('\n')
      .filter((line) => /Error|error:/.test(line) && !/\bEIO\b/.test(line));
    t.same(failedWhileStopping, [], 'nor while stopping, but for the line going away first');
  });
}
