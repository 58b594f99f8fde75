// mDNS beside Avahi: on an appliance with AirPlay, avahi-daemon (which shairport-sync advertises through) and the
// daemon's own responder share UDP 5353 on one host; a browser on the LAN finds what each announces.

import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import t, { type Test } from 'tap';
import { mdnsHostname } from '../../daemon/discovery/mdns.js';
import { airplayPort, shairport } from '../../drivers/receivers/shairport.js';
import { ReceiverSupervisor } from '../../drivers/receivers/supervisor.js';
import { startAvahi } from '../helpers/avahi.js';
import { LineChild } from '../helpers/line-child.js';
import { createNetwork } from '../helpers/netns.js';
import { nodeEntry } from '../helpers/paths.js';

/** The child (test/appliance/mdns-child.ts) as this suite runs: bundled, or under tsx. */
const CHILD = nodeEntry('test/appliance/mdns-child.ts');
const UDN = 'uuid:5f0c1a52-8d4e-4c55-9a3b-2f6a1e7c9d01';
const APPLIANCE = '10.76.0.1';

/**
 * Appliance A and browser B, each a namespace, joined by a veth pair; A's processes are started in `order`. Not ok
 * where namespaces cannot be made here.
 */
async function applianceWithAvahi(t: Test, order: 'avahi first' | 'daemon first') {
  const tag = `${process.pid % 10000}${order === 'avahi first' ? 'a' : 'd'}`;
  const [nsA, nsB] = ['a', 'b'].map((n) => `azc-mdav-${process.pid}-${tag}${n}`) as [string, string];
  const [linkA, linkB] = [`av${tag}a`, `av${tag}b`];
  const network = createNetwork(
    t,
    [nsA, nsB],
    [
      ['link', 'add', linkA, 'netns', nsA, 'type', 'veth', 'peer', 'name', linkB, 'netns', nsB],
      ['-n', nsA, 'addr', 'add', `${APPLIANCE}/24`, 'dev', linkA],
      ['-n', nsB, 'addr', 'add', '10.76.0.2/24', 'dev', linkB],
      ['-n', nsA, 'link', 'set', linkA, 'up'],
      ['-n', nsB, 'link', 'set', linkB, 'up'],
      ['-n', nsA, 'link', 'set', 'lo', 'up'],
      ['-n', nsB, 'link', 'set', 'lo', 'up'],
      ['-n', nsA, 'route', 'add', '224.0.0.0/4', 'dev', linkA],
      ['-n', nsB, 'route', 'add', '224.0.0.0/4', 'dev', linkB],
    ],
  );
  if (!network.ok) return network;
  const node = [process.execPath, ...CHILD];
  // The browser starts meanwhile: it asks for what it looks for, so it needs to listen only by then.
  const browser = new LineChild(t, ['ip', 'netns', 'exec', nsB, ...node, 'browse']);

  let announcer: LineChild | undefined;
  const startAnnouncer = async () => {
    announcer = new LineChild(t, [
      'ip',
      'netns',
      'exec',
      nsA,
      ...node,
      'announce',
      JSON.stringify({ udn: UDN, name: 'Kitchen', port: 8080 }),
    ]);
    // Announced under the names it wanted: Avahi's records took none of them.
    t.match(
      await announcer.next(),
      { ready: true, names: ['Kitchen._azc._tcp.local', 'Kitchen._http._tcp.local'], logs: [/^info: mDNS announcing/] },
      "the daemon's responder announces",
    );
  };
  if (order === 'daemon first') await startAnnouncer();
  const avahi = await startAvahi(t, { ns: nsA, link: linkA, hostName: `appliance-${tag}` });
  if (order === 'avahi first') await startAnnouncer();

  // shairport-sync as the daemon runs it, registering its AirPlay service with that Avahi over the private bus.
  const fifo = path.join(avahi.dir, 'out.pcm');
  execFileSync('mkfifo', ['-m', '600', fifo]);
  const airplay = new ReceiverSupervisor({
    kind: shairport,
    stateDir: path.join(avahi.dir, 'state'),
    settings: {
      playerId: 'kitchen',
      name: 'Kitchen AirPlay',
      output: { kind: 'fifo', path: fifo },
      listenHost: APPLIANCE,
      listenInterface: linkA,
    },
    env: avahi.env,
    prefix: ['ip', 'netns', 'exec', nsA],
  });
  t.teardown(() => airplay.stop());
  await airplay.start();
  t.same(await browser.next(), { listening: true }, 'the browser listens on the LAN');
  return { ok: true as const, nsA, browser, announcer: announcer!, avahiHost: avahi.hostName, airplay };
}

for (const order of ['avahi first', 'daemon first'] as const) {
  t.test(
    `with ${order === 'avahi first' ? 'Avahi started first' : 'the daemon started first'}, both share UDP 5353 and a browser finds the daemon's services, AirPlay and both host names at the appliance's address`,
    async (t) => {
      const appliance = await applianceWithAvahi(t, order);
      if (!appliance.ok) {
        t.comment(`no network namespace here (${appliance.why}): mDNS beside Avahi is not verified in this run`);
        return;
      }
      const { browser, announcer, avahiHost, airplay, nsA } = appliance;
      const host = `${mdnsHostname(UDN)}.local`;

      browser.send('browse _azc._tcp.local');
      t.same(
        (await browser.next())['found'],
        [
          {
            name: 'Kitchen._azc._tcp.local',
            target: host,
            port: 8080,
            txt: { api: '/api', version: '0.1.0', id: UDN, url: `http://${host}:8080/` },
            addresses: [APPLIANCE],
          },
        ],
        "the daemon's own responder answers for _azc._tcp, with its TXT",
      );
      browser.send('browse _raop._tcp.local');
      t.match(
        (await browser.next())['found'],
        [
          {
            name: /^[0-9A-F]{12}@Kitchen AirPlay\._raop\._tcp\.local$/,
            target: avahiHost,
            port: airplayPort('kitchen'),
            addresses: [APPLIANCE],
          },
        ],
        'Avahi answers for the AirPlay receiver shairport-sync registered',
      );
      browser.send(`resolve ${host}`);
      t.same(await browser.next(), { resolved: host, addresses: [APPLIANCE] }, "the daemon's host name answers");
      browser.send(`resolve ${avahiHost}`);
      t.same(await browser.next(), { resolved: avahiHost, addresses: [APPLIANCE] }, "Avahi's host name answers");

      // Who holds the port: both responders, each with its own socket (SO_REUSEADDR).
      const sockets = spawnSync('ip', ['netns', 'exec', nsA, 'ss', '-Hlnup', 'sport = :5353'], { encoding: 'utf8' });
      t.match(sockets.stdout, /"avahi-daemon"/, 'avahi-daemon has a socket on UDP 5353');
      const node = path.basename(process.execPath).slice(0, 15); // the kernel's name of the announcing process
      t.ok(sockets.stdout.includes(`"${node}"`), "and so has the daemon's responder");

      announcer.end();
      t.match(await announcer.next(), {
        stopped: true,
        logs: [/^info: mDNS announcing/, 'info: mDNS stopped after goodbye'],
      });
      t.equal(await announcer.exitCode(), 0);
      browser.send('goodbye _azc._tcp.local Kitchen._azc._tcp.local');
      t.match(await browser.next(), { goodbye: 'Kitchen._azc._tcp.local' }, 'the daemon says goodbye on stop');
      browser.send(`resolve ${avahiHost}`);
      t.same(
        await browser.next(),
        { resolved: avahiHost, addresses: [APPLIANCE] },
        'and Avahi still answers once it is gone',
      );
      await airplay.stop();
      browser.end();
      t.equal(await browser.exitCode(), 0);
    },
  );
}
