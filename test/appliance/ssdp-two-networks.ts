// Child of ssdp.test.ts for the two-network case: `announce` runs in one namespace, `observe` in the peer namespace.
// Both speak JSON lines on stdout and take commands on stdin (announce: end of stdin = stop; observe: search, byebye).
import type { Socket } from 'node:dgram';
import { createInterface } from 'node:readline';
import { setImmediate as nextLoop } from 'node:timers/promises';
import { SsdpAnnouncer } from '../../daemon/discovery/ssdp.js';
import { bindUdp, closeUdp } from '../helpers/sockets.js';
import { SSDP_GROUP as GROUP, mSearch, parseSsdp } from '../helpers/ssdp.js';
import { Changes, waitFor as waitForCondition } from '../helpers/wait-for.js';

const WAIT_MS = 8000;
const [mode = '', configText = '{}'] = process.argv.slice(2);
const config = JSON.parse(configText) as { udn: string; announcerAddresses: string[]; observerAddresses: string[] };

const say = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

/** Re-checks `done` on every datagram until it holds; rejects after WAIT_MS. */
async function waitFor(sockets: Socket[], done: () => boolean, what: string): Promise<void> {
  const changes = new Changes();
  const notify = () => changes.notify();
  for (const s of sockets) s.on('message', notify);
  try {
    await waitForCondition(done, WAIT_MS, { what, changes });
  } finally {
    for (const s of sockets) s.off('message', notify);
  }
}

async function announce(): Promise<void> {
  const logs: string[] = [];
  // Default interface selection: every external IPv4 interface of this namespace (both veths).
  const announcer = new SsdpAnnouncer({
    udn: config.udn,
    location: 'http://0.0.0.0:8080/description.xml',
    version: '0.1.0',
    log: (level, msg) => logs.push(`${level}: ${msg}`),
  });
  await announcer.start();
  say({ ready: true, logs });
  process.stdin.resume();
  await new Promise((resolve) => process.stdin.once('end', resolve));
  await announcer.stop();
  say({ stopped: true, logs });
}

async function observe(): Promise<void> {
  const notifies: Array<{ from: string; nts: string; nt: string; location?: string }> = [];
  const listener = await bindUdp('0.0.0.0', 1900, { reuseAddr: true });
  for (const address of config.observerAddresses) listener.addMembership(GROUP, address);
  listener.on('message', (msg, rinfo) => {
    const { startLine, headers: h } = parseSsdp(msg);
    if (startLine.startsWith('NOTIFY')) {
      notifies.push({ from: rinfo.address, nts: h['NTS'] ?? '', nt: h['NT'] ?? '', location: h['LOCATION'] });
    }
  });
  const fromAll = (nts: string) => () =>
    config.announcerAddresses.every((a) => notifies.some((n) => n.from === a && n.nts === nts));
  const commands = createInterface({ input: process.stdin });
  say({ listening: true });
  for await (const command of commands) {
    if (command === 'search') {
      await waitFor([listener], fromAll('ssdp:alive'), 'ssdp:alive from every announcer address');
      const answers: Record<string, string[]> = {};
      const clients: Socket[] = [];
      for (const address of config.observerAddresses) {
        const client = await bindUdp(address, 0);
        clients.push(client);
        client.setMulticastInterface(address);
        const got: string[] = (answers[address] = []);
        client.on('message', (msg) => got.push(parseSsdp(msg).headers['LOCATION'] ?? ''));
        const search = (st: string) => client.send(mSearch(st), 1900, GROUP);
        search('upnp:rootdevice');
        await waitFor([client], () => got.length >= 1, `an answer via ${address}`);
        search(config.udn); // barrier: its answer comes after any duplicate of the first
        await waitFor([client], () => got.length >= 2, `the barrier answer via ${address}`);
        await nextLoop();
        got.pop();
      }
      for (const client of clients) await closeUdp(client);
      say({ answers, alive: notifies.filter((n) => n.nts === 'ssdp:alive') });
    } else if (command === 'byebye') {
      await waitFor([listener], fromAll('ssdp:byebye'), 'ssdp:byebye from every announcer address');
      say({ byebye: notifies.filter((n) => n.nts === 'ssdp:byebye') });
      break;
    }
  }
  await closeUdp(listener);
  commands.close();
}

const guard = setTimeout(() => {
  say({ error: `${mode} timed out` });
  process.exit(2);
}, 25_000);
guard.unref();
(mode === 'announce' ? announce() : observe()).then(
  () => process.exit(0),
  (err: Error) => {
    say({ error: err.stack ?? err.message });
    process.exit(1);
  },
);
