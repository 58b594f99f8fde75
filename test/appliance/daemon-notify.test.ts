// The real daemon under a stand-in systemd: READY=1 with a status once listening, WATCHDOG=1 while healthy,
// STOPPING=1 on SIGTERM, all on a real unix datagram socket.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { Receiver } from '../helpers/notify-receiver.js';
import { startedDaemon } from '../helpers/process.js';

t.test('the daemon speaks sd_notify', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'azc-sdnotify-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const socket = path.join(dir, 'notify.sock');
  const receiver = await Receiver.start(socket);
  t.teardown(() => receiver.stop());
  const daemon = await startedDaemon(t, {
    args: ['--state-dir', path.join(dir, 'state'), '--log-level', 'warn'],
    env: { NOTIFY_SOCKET: socket, WATCHDOG_USEC: '400000' },
  });

  const readyAt = await receiver.waitForMatch((d) => d.startsWith('READY=1'));
  t.match(receiver.datagrams[readyAt], /^READY=1\nSTATUS=listening on 127\.0\.0\.1:\d+; amplifier simulated online/);
  const res = await fetch(`${daemon.base}/api/health`);
  t.equal(res.status, 200, 'ready means it answers');
  await receiver.waitFor('WATCHDOG=1', readyAt);
  const exit = daemon.stop('SIGTERM');
  await receiver.waitFor('STOPPING=1', readyAt);
  t.equal((await exit).code, 0);
});
