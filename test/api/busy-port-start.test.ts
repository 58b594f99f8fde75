// A start that cannot listen on its port stops before it creates anything: no state folder, no first administrator.

import { existsSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import path from 'node:path';
import t from 'tap';
import { tempDir } from '../helpers/daemon.js';
import { runAzcd } from '../helpers/process.js';
import { within } from '../helpers/wait-for.js';

t.test(
  'a daemon started on a port another program holds exits naming the address and leaves no state folder behind',
  async (t) => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen({ host: '127.0.0.1', port: 0, exclusive: true }, resolve));
    t.teardown(() => new Promise<void>((resolve) => holder.close(() => resolve())));
    const { port } = holder.address() as AddressInfo;
    const parent = tempDir('azc-busy-port-');
    t.teardown(() => rmSync(parent, { recursive: true, force: true }));
    const stateDir = path.join(parent, 'state');

    const azcd = runAzcd({
      args: ['--host', '127.0.0.1', '--port', String(port), '--state-dir', stateDir, '--log-level', 'warn'],
    });
    t.teardown(() => azcd.stop('SIGKILL'));
    const { code } = await within(azcd.exited, undefined, 'the daemon to exit');
    const lines = azcd.stderr().trim().split('\n');
    t.equal(code, 1, 'a non-zero exit');
    t.equal(lines.length, 1, `one line: ${lines.join(' | ')}`);
    t.match(lines[0], `azcd: cannot start: cannot listen on 127.0.0.1:${port}: the address is in use`);
    t.match(lines[0], /--port/, 'and how to start it elsewhere');
    t.notMatch(azcd.stdout(), /password|listening/, 'no administrator was printed and it never listened');
    t.notOk(existsSync(stateDir), 'the state folder was not created');
  },
);
