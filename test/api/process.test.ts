// The real entry point as a child process: start-up output, first-admin credentials, flags, and graceful SIGTERM.

import { existsSync, rmSync, watch } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { client } from '../helpers/client.js';
import { tempDir } from '../helpers/daemon.js';
import { type AzcdProcess, runAzcd } from '../helpers/process.js';
import { within } from '../helpers/wait-for.js';

/** Starts `node --import tsx daemon/main.ts ...args` with no AZC_* or systemd variables from the outer environment. */
function azcd(args: string[], env: Record<string, string> = {}): AzcdProcess {
  return runAzcd({ args, env });
}

/** Registers teardown that kills the child if a test left it running. */
function started(t: { teardown(fn: () => unknown): void }, args: string[], env?: Record<string, string>): AzcdProcess {
  const p = azcd(args, env);
  t.teardown(() => p.stop('SIGKILL'));
  return p;
}

t.test('the azcd process', async (t) => {
  const stateDir = tempDir('azc-proc-');
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const daemonArgs = ['--host', '127.0.0.1', '--port', '0', '--state-dir', stateDir, '--log-level', 'warn'];

  // --help and a bad flag run while the first start boots: each spawn costs about a second.
  const help = started(t, ['--help']);
  const badFlag = started(t, ['--frobnicate']);
  const first = started(t, daemonArgs, { AZC_ADMIN_PASSWORD: 'env-admin-password-9' });

  t.test('--help prints the usage and exits 0', async (t) => {
    const { code } = await within(help.exited, undefined, 'help to exit');
    t.equal(code, 0);
    t.match(help.stdout(), /usage: azcd \[flags\]/);
    t.match(help.stdout(), /--state-dir DIR {2}· {2}AZC_STATE_DIR {2}· {2}"stateDir"/);
  });

  t.test('an unknown flag exits 2 with one line naming it and one pointing at --help, no usage text', async (t) => {
    const { code } = await within(badFlag.exited, undefined, 'badFlag to exit');
    t.equal(code, 2);
    t.equal(badFlag.stderr(), 'azcd: flag --frobnicate: unknown flag\nazcd: every setting is listed by azcd --help\n');
  });

  const [, port] = await first.waitFor(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
  const base = `http://127.0.0.1:${port}`;
  const credentials = await first.waitFor(/API key:\s+(svc_[0-9a-f]{48})\n/);
  const adminKey = credentials[1]!;

  t.test('the first start prints the listening address', async (t) => {
    t.match(port, /^[1-9]\d*$/);
    t.equal((await client(base).get('/api/health')).status, 200);
  });

  t.test(
    "the first start prints the first admin's credentials, with the password from AZC_ADMIN_PASSWORD",
    async (t) => {
      t.match(first.stdout(), /username: admin\n/);
      t.match(first.stdout(), /password: env-admin-password-9\n/);
      t.match(
        first.stdout(),
        new RegExp(`saved in: ${stateDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/initial-admin.txt`),
      );
      const anon = client(base);
      t.equal((await anon.get('/api/users/me', { key: adminKey })).body.username, 'admin', 'the printed key works');
      t.equal(
        (await anon.post('/api/auth/login', { username: 'admin', password: 'env-admin-password-9' })).status,
        200,
        'the password works',
      );
    },
  );

  t.test('SIGTERM closes an open event stream and exits 0', async (t) => {
    // A raw socket, so the test sees whether the response was ended properly or just cut by the exit.
    const socket = net.connect(Number(port), '127.0.0.1');
    t.teardown(() => socket.destroy());
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => {
      // A reset is one way the server may end it: the test reads the close.
    });
    socket.write(
      `GET /api/stream/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nX-API-Key: ${adminKey}\r\n\r\n`,
    );
    try {
      // The stream handler registers the stream before it writes the status line and the retry field.
      await within(
        new Promise<void>((resolve, reject) => {
          const check = () => (received.includes('retry:') ? resolve() : undefined);
          socket.on('data', check);
          socket.on('close', () => reject(new Error(`the stream closed before it started: ${received}`)));
        }),
        undefined,
        'the stream to start',
      );
      t.match(received, /^HTTP\/1\.1 200 /);
    } finally {
      first.child.kill('SIGTERM');
    }
    await within(closed, undefined, 'the stream to close');
    t.match(received, /\r\n0\r\n\r\n$/, 'the response ended with the last chunk: the shutdown ended the stream');
    const { code, signal } = await within(first.exited, undefined, 'first to exit');
    t.same({ code, signal }, { code: 0, signal: null });
  });

  t.test('after SIGTERM the database passes an integrity check', async (t) => {
    await within(first.exited, undefined, 'first to exit');
    const db = new Database(path.join(stateDir, 'azc.db'));
    t.teardown(() => db.close());
    t.same(db.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
    t.equal((db.prepare('SELECT COUNT(*) AS n FROM users').get() as { n: number }).n, 1, 'the admin was stored');
  });

  t.test('a second start on the same state directory does not print credentials again', async (t) => {
    await within(first.exited, undefined, 'first to exit');
    const second = started(t, daemonArgs, { AZC_ADMIN_PASSWORD: 'another-password-1' });
    await second.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+/);
    second.child.kill('SIGTERM');
    const { code } = await within(second.exited, undefined, 'second to exit');
    t.equal(code, 0);
    t.notMatch(second.stdout(), /password:|API key:|svc_/);
    t.notOk(second.stdout().includes(adminKey));
  });

  t.test('a SIGTERM while the start runs stops it cleanly, as one after it does', async (t) => {
    const dir = tempDir('azc-proc-early-');
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    // The database file is made early in the start, before the first admin's password hash and the port: the signal
    // is sent the moment it appears, while the start runs (on a fast machine it may land just after).
    const database = path.join(dir, 'azc.db');
    const watcher = watch(dir);
    t.teardown(() => watcher.close());
    const made = new Promise<void>((resolve) => watcher.on('change', () => existsSync(database) && resolve()));
    const early = started(t, ['--host', '127.0.0.1', '--port', '0', '--state-dir', dir, '--log-level', 'warn'], {
      AZC_ADMIN_PASSWORD: 'early-admin-password-3',
    });
    await within(made, undefined, 'the database file');
    early.child.kill('SIGTERM');
    const { code, signal } = await within(early.exited, undefined, 'the early stop');
    t.same({ code, signal }, { code: 0, signal: null }, 'exited 0 by its own shutdown, not killed by the signal');
    const db = new Database(database);
    t.teardown(() => db.close());
    t.same(db.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
  });
});
