// mDNS / DNS-SD: two appliances and a browser on a bridge inside throwaway network namespaces, never a real LAN.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { mdnsHostname, networkLinks, txtRecord } from '../../daemon/discovery/mdns.js';
import { LineChild } from '../helpers/line-child.js';
import { createNetwork } from '../helpers/netns.js';
import { nodeEntry } from '../helpers/paths.js';

/** The child (test/appliance/mdns-child.ts) as this suite runs: bundled, or under tsx. */
const CHILD = nodeEntry('test/appliance/mdns-child.ts');
const UDN_1 = 'uuid:5f0c1a52-8d4e-4c55-9a3b-2f6a1e7c9d01';
const UDN_2 = 'uuid:9e1d2b63-7c5f-4d66-8b4c-3a7b2f8d0e12';

t.test('the TXT record names the API path, version, device id and dashboard URL', async (t) => {
  const hostname = mdnsHostname(UDN_1);
  t.equal(hostname, 'azc-5f0c1a52', 'a host name of its own, from the device id');
  t.same(txtRecord({ udn: UDN_1, version: '0.1.0', port: 8080 }, hostname), {
    api: '/api',
    version: '0.1.0',
    id: UDN_1,
    url: 'http://azc-5f0c1a52.local:8080/',
  });
});

t.test('mDNS is given every network link but loopback, so it never runs a command to find them', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'azc-links-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // The flags of /sys/class/net/<link>/flags: IFF_LOOPBACK is 0x8.
  for (const [name, flags] of [
    ['lo', '0x9'],
    ['eth0', '0x1003'],
    ['wlan0', '0x1002'],
  ]) {
    mkdirSync(path.join(dir, name!));
    writeFileSync(path.join(dir, name!, 'flags'), `${flags}\n`);
  }
  const loopback = {
    lo: [{ address: '127.0.0.1', family: 'IPv4', internal: true, netmask: '255.0.0.0', mac: '', cidr: null }],
  } as unknown as Parameters<typeof networkLinks>[1];
  t.same(networkLinks(dir, loopback)?.sort(), ['eth0', 'wlan0'], 'down links too: their addresses may come later');
  t.equal(networkLinks(path.join(dir, 'missing'), loopback), undefined, 'no /sys/class/net: mDNS looks for itself');
  t.equal(
    networkLinks(dir, {}),
    undefined,
    'no loopback address (which mDNS needs beside a list): it looks for itself',
  );
});

t.test(
  'a browser on the LAN finds the appliance with its TXT records, a second one of the same name is renamed but keeps its host name, and each says goodbye on stop',
  async (t) => {
    // Namespace B (browser) holds a bridge, the LAN; appliances A1 and A2 each have one veth link into it.
    const tag = String(process.pid % 100000);
    const [nsA1, nsA2, nsB] = ['a1', 'a2', 'b'].map((n) => `azc-mdns-${process.pid}-${n}`) as [string, string, string];
    const steps = [
      ['-n', nsB, 'link', 'add', 'br0', 'type', 'bridge'],
      ['link', 'add', `am${tag}a1`, 'netns', nsA1, 'type', 'veth', 'peer', 'name', `am${tag}b1`, 'netns', nsB],
      ['link', 'add', `am${tag}a2`, 'netns', nsA2, 'type', 'veth', 'peer', 'name', `am${tag}b2`, 'netns', nsB],
      ['-n', nsB, 'link', 'set', `am${tag}b1`, 'master', 'br0'],
      ['-n', nsB, 'link', 'set', `am${tag}b2`, 'master', 'br0'],
      ['-n', nsA1, 'addr', 'add', '10.78.0.1/24', 'dev', `am${tag}a1`],
      ['-n', nsA2, 'addr', 'add', '10.78.0.2/24', 'dev', `am${tag}a2`],
      ['-n', nsB, 'addr', 'add', '10.78.0.3/24', 'dev', 'br0'],
      ['-n', nsA1, 'link', 'set', `am${tag}a1`, 'up'],
      ['-n', nsA2, 'link', 'set', `am${tag}a2`, 'up'],
      ['-n', nsB, 'link', 'set', `am${tag}b1`, 'up'],
      ['-n', nsB, 'link', 'set', `am${tag}b2`, 'up'],
      ['-n', nsB, 'link', 'set', 'br0', 'up'],
      // Loopback up, as on every real system: mDNS is then handed the links (networkLinks) instead of looking for them.
      ...[nsA1, nsA2, nsB].map((ns) => ['-n', ns, 'link', 'set', 'lo', 'up']),
      // Multicast leaves through the LAN link, as on a box whose default route points there.
      ['-n', nsA1, 'route', 'add', '224.0.0.0/4', 'dev', `am${tag}a1`],
      ['-n', nsA2, 'route', 'add', '224.0.0.0/4', 'dev', `am${tag}a2`],
      ['-n', nsB, 'route', 'add', '224.0.0.0/4', 'dev', 'br0'],
    ];
    const network = createNetwork(t, [nsA1, nsA2, nsB], steps);
    if (!network.ok) {
      t.comment(`no network namespace here (${network.why}): mDNS is not verified in this run`);
      return;
    }
    const node = [process.execPath, ...CHILD];
    const browser = new LineChild(t, ['ip', 'netns', 'exec', nsB, ...node, 'browse']);
    t.same(await browser.next(), { listening: true });

    const first = new LineChild(t, [
      'ip',
      'netns',
      'exec',
      nsA1,
      ...node,
      'announce',
      JSON.stringify({ udn: UDN_1, name: 'Kitchen', port: 8080 }),
    ]);
    t.match(await first.next(), {
      ready: true,
      names: ['Kitchen._azc._tcp.local', 'Kitchen._http._tcp.local'],
      logs: [/^info: mDNS announcing .*"azc-5f0c1a52\.local"/],
    });

    browser.send('browse _azc._tcp.local');
    t.same(
      (await browser.next())['found'],
      [
        {
          name: 'Kitchen._azc._tcp.local',
          target: 'azc-5f0c1a52.local',
          port: 8080,
          txt: { api: '/api', version: '0.1.0', id: UDN_1, url: 'http://azc-5f0c1a52.local:8080/' },
          addresses: ['10.78.0.1'],
        },
      ],
      'the appliance, its SRV, TXT and address',
    );
    browser.send('browse _http._tcp.local');
    t.match(
      (await browser.next())['found'],
      [
        {
          name: 'Kitchen._http._tcp.local',
          port: 8080,
          txt: { path: '/', id: UDN_1, url: 'http://azc-5f0c1a52.local:8080/' },
        },
      ],
      'the dashboard as _http._tcp',
    );

    const second = new LineChild(t, [
      'ip',
      'netns',
      'exec',
      nsA2,
      ...node,
      'announce',
      JSON.stringify({ udn: UDN_2, name: 'Kitchen', port: 8080 }),
    ]);
    const renamed = await second.next();
    t.match(
      renamed,
      {
        ready: true,
        names: ['Kitchen (2)._azc._tcp.local', 'Kitchen (2)._http._tcp.local'],
      },
      'the second appliance of the same name probes, finds it taken and takes another',
    );
    t.same(
      renamed['logs'],
      [
        'warn: mDNS name already taken on the network; announcing under another ' +
          JSON.stringify({
            names: ['Kitchen (2)._azc._tcp.local.', 'Kitchen (2)._http._tcp.local.'],
            hostnames: ['azc-9e1d2b63.local', 'azc-9e1d2b63-web.local'],
          }),
      ],
      'and says so once, with the names it announces: its host names were not taken and keep their names',
    );
    browser.send('browse _azc._tcp.local');
    const both = (await browser.next())['found'] as Array<{ target: string; txt: Record<string, string> }>;
    t.match(
      both,
      [
        {
          name: 'Kitchen (2)._azc._tcp.local',
          target: 'azc-9e1d2b63.local',
          txt: { id: UDN_2 },
          addresses: ['10.78.0.2'],
        },
        { name: 'Kitchen._azc._tcp.local', target: 'azc-5f0c1a52.local', txt: { id: UDN_1 }, addresses: ['10.78.0.1'] },
      ],
      'both appliances, each under its own name and host',
    );
    for (const found of both) {
      t.equal(
        found.txt['url'],
        `http://${found.target}:8080/`,
        `the dashboard URL of ${found.target} names the host it announces`,
      );
      t.ok(
        found.target.split('.').every((label) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i.test(label)),
        `${found.target} is made of valid host labels`,
      );
    }

    first.end();
    t.match(await first.next(), {
      stopped: true,
      logs: [/^info: mDNS announcing/, 'info: mDNS stopped after goodbye'],
    });
    t.equal(await first.exitCode(), 0);
    browser.send('goodbye _azc._tcp.local Kitchen._azc._tcp.local');
    t.same(
      await browser.next(),
      { goodbye: 'Kitchen._azc._tcp.local', stillAlive: ['Kitchen (2)._azc._tcp.local'] },
      'the stopped appliance said goodbye; the other is still there',
    );

    second.end();
    t.match(await second.next(), { stopped: true });
    t.equal(await second.exitCode(), 0);
    browser.send('goodbye _http._tcp.local Kitchen (2)._http._tcp.local');
    t.match(await browser.next(), { goodbye: 'Kitchen (2)._http._tcp.local' });
    browser.end();
    t.equal(await browser.exitCode(), 0);
  },
);

t.test(
  'an appliance whose host name is taken (a copy of another, with its device id) numbers its host as a valid label',
  async (t) => {
    const tag = String(process.pid % 100000);
    const [nsA1, nsA2] = ['h1', 'h2'].map((n) => `azc-mdns-${process.pid}-${n}`) as [string, string];
    const steps = [
      ['link', 'add', `ah${tag}a`, 'netns', nsA1, 'type', 'veth', 'peer', 'name', `ah${tag}b`, 'netns', nsA2],
      ['-n', nsA1, 'addr', 'add', '10.77.0.1/24', 'dev', `ah${tag}a`],
      ['-n', nsA2, 'addr', 'add', '10.77.0.2/24', 'dev', `ah${tag}b`],
      ['-n', nsA1, 'link', 'set', `ah${tag}a`, 'up'],
      ['-n', nsA2, 'link', 'set', `ah${tag}b`, 'up'],
      ['-n', nsA1, 'link', 'set', 'lo', 'up'],
      ['-n', nsA2, 'link', 'set', 'lo', 'up'],
      ['-n', nsA1, 'route', 'add', '224.0.0.0/4', 'dev', `ah${tag}a`],
      ['-n', nsA2, 'route', 'add', '224.0.0.0/4', 'dev', `ah${tag}b`],
    ];
    const network = createNetwork(t, [nsA1, nsA2], steps);
    if (!network.ok) {
      t.comment(`no network namespace here (${network.why}): mDNS host name conflicts are not verified in this run`);
      return;
    }
    const node = [process.execPath, ...CHILD];
    const first = new LineChild(t, [
      'ip',
      'netns',
      'exec',
      nsA1,
      ...node,
      'announce',
      JSON.stringify({ udn: UDN_1, name: 'Kitchen', port: 8080 }),
    ]);
    t.match(await first.next(), {
      ready: true,
      logs: [/^info: mDNS announcing .*"azc-5f0c1a52\.local","azc-5f0c1a52-web\.local"/],
    });
    const copy = new LineChild(t, [
      'ip',
      'netns',
      'exec',
      nsA2,
      ...node,
      'announce',
      JSON.stringify({ udn: UDN_1, name: 'Hall', port: 8080 }),
    ]);
    const renamed = await copy.next();
    t.match(renamed, { ready: true }, 'the copy probes, finds its host names taken and takes others');
    t.match(renamed['logs'], [
      /^warn: mDNS name already taken on the network; announcing under another .*"hostnames":\["azc-5f0c1a52-2\.local","azc-5f0c1a52-web-2\.local"\]/,
    ]);
    for (const child of [first, copy]) {
      child.end();
      t.match(await child.next(), { stopped: true });
      t.equal(await child.exitCode(), 0);
    }
  },
);

t.test(
  'a daemon with discovery on is found by mDNS under its friendly name and says goodbye when it stops',
  async (t) => {
    const tag = String(process.pid % 100000);
    const [nsA, nsB] = ['da', 'db'].map((n) => `azc-mdns-${process.pid}-${n}`) as [string, string];
    const steps = [
      ['link', 'add', `ad${tag}a`, 'netns', nsA, 'type', 'veth', 'peer', 'name', `ad${tag}b`, 'netns', nsB],
      ['-n', nsA, 'addr', 'add', '10.79.0.1/24', 'dev', `ad${tag}a`],
      ['-n', nsB, 'addr', 'add', '10.79.0.2/24', 'dev', `ad${tag}b`],
      ['-n', nsA, 'link', 'set', `ad${tag}a`, 'up'],
      ['-n', nsB, 'link', 'set', `ad${tag}b`, 'up'],
      ['-n', nsA, 'link', 'set', 'lo', 'up'],
      ['-n', nsB, 'link', 'set', 'lo', 'up'],
      ['-n', nsA, 'route', 'add', '224.0.0.0/4', 'dev', `ad${tag}a`],
      ['-n', nsB, 'route', 'add', '224.0.0.0/4', 'dev', `ad${tag}b`],
    ];
    const network = createNetwork(t, [nsA, nsB], steps);
    if (!network.ok) {
      t.comment(`no network namespace here (${network.why}): the daemon's mDNS is not verified in this run`);
      return;
    }
    const node = [process.execPath, ...CHILD];
    const browser = new LineChild(t, ['ip', 'netns', 'exec', nsB, ...node, 'browse']);
    t.same(await browser.next(), { listening: true });
    const daemon = new LineChild(t, ['ip', 'netns', 'exec', nsA, ...node, 'daemon']);
    const { udn, port } = (await daemon.next()) as { udn: string; port: number };
    const host = mdnsHostname(udn);

    browser.send('browse _azc._tcp.local');
    t.match((await browser.next())['found'], [
      {
        name: 'Living Room._azc._tcp.local',
        target: `${host}.local`,
        port,
        txt: { api: '/api', id: udn, url: `http://${host}.local:${port}/` },
        addresses: ['10.79.0.1'],
      },
    ]);
    daemon.end();
    t.same(await daemon.next(), { stopped: true });
    browser.send('goodbye _azc._tcp.local Living Room._azc._tcp.local');
    t.same(await browser.next(), { goodbye: 'Living Room._azc._tcp.local', stillAlive: [] });
    browser.end();
    t.equal(await browser.exitCode(), 0);
    t.equal(await daemon.exitCode(), 0);
  },
);
