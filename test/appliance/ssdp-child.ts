// Child of ssdp.test.ts, run inside a throwaway network namespace (or on 127.0.0.1 only): announcer + raw client.
// Usage: node --import tsx test/appliance/ssdp-child.ts multicast|unicast '{"udn":…,"friendlyName":…}' → one JSON line.
import type { Socket } from 'node:dgram';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as nextLoop } from 'node:timers/promises';
import { controllerUdn, renderDescription } from '../../daemon/discovery/description.js';
import { AZC_DEVICE_TYPE, SsdpAnnouncer, UPNP_BASIC_DEVICE_TYPE } from '../../daemon/discovery/ssdp.js';
import { bindUdp, closeUdp, freeUdpPort } from '../helpers/sockets.js';
import { SSDP_GROUP as GROUP, mSearch, parseSsdp } from '../helpers/ssdp.js';
import { Changes, waitFor } from '../helpers/wait-for.js';

const mode = process.argv[2] === 'multicast' ? 'multicast' : 'unicast';
const LOOPBACK = '127.0.0.1';
const WAIT_MS = 8000;
const { udn: CHILD_UDN, friendlyName: CHILD_FRIENDLY_NAME } = JSON.parse(process.argv[3] ?? '{}') as {
  udn: string;
  friendlyName: string;
};

type Headers = Record<string, string>;

/** Resolves once `done()` holds, re-checked whenever `changes` fires; rejects after WAIT_MS with `what`. */
async function until(changes: Changes, done: () => boolean, what: string): Promise<void> {
  await waitFor(done, WAIT_MS, { what, changes });
}

async function main(): Promise<Record<string, unknown>> {
  const logs: Array<{ level: string; msg: string }> = [];
  const http = createServer((req, res) => {
    if (req.url !== '/description.xml') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/xml; charset="utf-8"' });
    res.end(
      renderDescription({
        udn: CHILD_UDN,
        friendlyName: CHILD_FRIENDLY_NAME,
        manufacturer: 'audio-zone-control',
        modelName: 'azcd',
        modelNumber: '0.1.0',
        serialNumber: 'AZC-TEST-0001',
        presentationURL: '/',
        apiBaseURL: '/api',
      }),
    );
  });
  await new Promise<void>((resolve) => http.listen(0, LOOPBACK, resolve));
  const httpPort = (http.address() as AddressInfo).port;
  const ssdpPort = mode === 'multicast' ? 1900 : await freeUdpPort(LOOPBACK);

  // The observer sees NOTIFY on loopback only; it must listen before the announcer's first alive.
  const notifies: Array<{ nts: string; nt: string; usn: string; location?: string; cacheControl?: string }> = [];
  const notified = new Changes();
  let observer: Socket | undefined;
  if (mode === 'multicast') {
    observer = await bindUdp('0.0.0.0', ssdpPort, { reuseAddr: true });
    observer.addMembership(GROUP, LOOPBACK);
    observer.on('message', (msg) => {
      const { startLine, headers } = parseSsdp(msg);
      if (!startLine.startsWith('NOTIFY')) return;
      notifies.push({
        nts: headers['NTS'] ?? '',
        nt: headers['NT'] ?? '',
        usn: headers['USN'] ?? '',
        location: headers['LOCATION'],
        cacheControl: headers['CACHE-CONTROL'],
      });
      notified.notify();
    });
  }

  const announcer = new SsdpAnnouncer({
    udn: CHILD_UDN,
    location: `http://0.0.0.0:${httpPort}/description.xml`,
    interfaces: ['lo'],
    maxAgeS: mode === 'multicast' ? 3 : 1800, // 3 s → re-announce every second, observable here
    version: '0.1.0',
    port: ssdpPort,
    bindToInterfaceAddress: mode === 'unicast',
    log: (level, msg) => logs.push({ level, msg }),
  });
  await announcer.start();

  const types = [CHILD_UDN, 'upnp:rootdevice', UPNP_BASIC_DEVICE_TYPE, controllerUdn(CHILD_UDN), AZC_DEVICE_TYPE];
  const aliveRounds = () =>
    Math.min(...types.map((nt) => notifies.filter((n) => n.nts === 'ssdp:alive' && n.nt === nt).length));
  if (mode === 'multicast') await until(notified, () => aliveRounds() >= 2, 'two rounds of NOTIFY ssdp:alive');
  const aliveRoundsSeen = aliveRounds();

  // One fresh client socket per search target, so every response is attributed to the search that caused it.
  const searchTargets = [
    'ssdp:all',
    'upnp:rootdevice',
    AZC_DEVICE_TYPE,
    CHILD_UDN,
    UPNP_BASIC_DEVICE_TYPE,
    controllerUdn(CHILD_UDN),
  ];
  const expected: Record<string, number> = { 'ssdp:all': 5 };
  const searches: Record<string, Array<{ status: string; headers: Headers; from: string }>> = {};
  const clients: Socket[] = [];
  const responded = new Changes();
  const search = async (st: string, key = st) => {
    const client = await bindUdp(mode === 'multicast' ? '0.0.0.0' : LOOPBACK, 0);
    clients.push(client);
    if (mode === 'multicast') client.setMulticastInterface(LOOPBACK);
    const answers: Array<{ status: string; headers: Headers; from: string }> = [];
    searches[key] = answers;
    client.on('message', (msg, rinfo) => {
      const { startLine, headers } = parseSsdp(msg);
      answers.push({ status: startLine, headers, from: `${rinfo.address}:${rinfo.port}` });
      responded.notify();
    });
    client.send(mSearch(st, ssdpPort), ssdpPort, mode === 'multicast' ? GROUP : LOOPBACK);
    await until(responded, () => answers.length >= (expected[st] ?? 1), `M-SEARCH answers for ${st}`);
  };
  for (const st of searchTargets) await search(st);
  // Barrier: one more round trip, then one loop turn, so a duplicate answer to an earlier search would be counted.
  await search(CHILD_UDN, 'barrier');
  await nextLoop();

  const location = searches['ssdp:all']?.[0]?.headers['LOCATION'] ?? '';
  const response = location ? await fetch(location) : undefined;
  const description = response
    ? { status: response.status, contentType: response.headers.get('content-type'), body: await response.text() }
    : undefined;

  const stopStarted = notifies.length;
  await announcer.stop();
  if (mode === 'multicast') {
    await until(
      notified,
      () => types.every((nt) => notifies.some((n, i) => i >= stopStarted && n.nts === 'ssdp:byebye' && n.nt === nt)),
      'NOTIFY ssdp:byebye for every type',
    );
  }
  const afterStop = notifies.slice(stopStarted);

  for (const client of clients) await closeUdp(client);
  if (observer) await closeUdp(observer);
  await new Promise((resolve) => http.close(resolve));
  return { mode, ssdpPort, httpPort, aliveRoundsSeen, notifies, afterStop, searches, description, logs };
}

const guard = setTimeout(() => {
  process.stdout.write(`${JSON.stringify({ error: 'child timed out' })}\n`);
  process.exit(2);
}, 25_000);

main().then(
  (result) => {
    clearTimeout(guard);
    // node-ssdp's 3-second first-announce timer cannot be cancelled; exit instead of waiting it out.
    process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
  },
  (err: Error) => {
    clearTimeout(guard);
    process.stdout.write(`${JSON.stringify({ error: err.stack ?? err.message })}\n`, () => process.exit(1));
  },
);
