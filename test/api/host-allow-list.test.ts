// DNS rebinding: over a real socket, a request under a name that is not the appliance's is refused with 421 before
// any route, file or credential check; the appliance's own names (its host name and addresses included, read from a
// machine the test makes up) and an added name are answered; a browser refused gets a page saying which to use.

import http from 'node:http';
import t from 'tap';
import { mdnsHostname } from '../../daemon/discovery/mdns-hostname.js';
import { startTestDaemon } from '../helpers/daemon.js';

function get(
  base: string,
  path: string,
  host: string,
  accept?: string,
): Promise<{ status: number; type: string; body: string; headers: http.IncomingHttpHeaders }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, path, headers: { host, ...(accept ? { accept } : {}) } },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            type: String(res.headers['content-type']),
            body,
            headers: res.headers,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

t.test(
  'a request under a foreign host name gets 421 on the API, the dashboard and the device description',
  async (t) => {
    const d = await startTestDaemon(t);
    for (const path of ['/api/health', '/api/openapi.json', '/', '/description.xml', '/api/zones']) {
      const res = await get(d.base, path, 'rebind.attacker.example:8080');
      t.equal(res.status, 421, path);
      t.match(res.type, /^application\/problem\+json/);
      t.match(JSON.parse(res.body), {
        status: 421,
        title: 'Misdirected Request',
        detail: /rebind\.attacker\.example.*allowedHosts/,
      });
    }
  },
);

t.test("the appliance's address, localhost, its mDNS name and an added name are answered", async (t) => {
  const d = await startTestDaemon(t, { config: { allowedHosts: ['audio.example.lan'] } });
  const port = new URL(d.base).port;
  const mdns = `${mdnsHostname(d.daemon.services.udn)}.local`;
  for (const host of [
    `127.0.0.1:${port}`,
    `localhost:${port}`,
    `${mdns}:${port}`,
    `audio.example.lan:${port}`,
    'AUDIO.EXAMPLE.LAN',
  ]) {
    t.equal((await get(d.base, '/api/health', host)).status, 200, host);
  }
  t.equal(
    (await get(d.base, '/api/health', `other.example.lan:${port}`)).status,
    421,
    'a name not added is still refused',
  );
});

/** The machine the daemon reads its host name and links from: a Raspberry Pi on a home LAN, whatever runs the test. */
const RASPBERRY_PI = {
  hostname: () => 'raspberrypi',
  interfaces: () => ({
    lo: [
      {
        address: '127.0.0.1',
        netmask: '255.0.0.0',
        family: 'IPv4' as const,
        mac: '00:00:00:00:00:00',
        internal: true,
        cidr: '127.0.0.1/8',
      },
    ],
    eth0: [
      {
        address: '192.168.1.20',
        netmask: '255.255.255.0',
        family: 'IPv4' as const,
        mac: 'dc:a6:32:00:00:01',
        internal: false,
        cidr: '192.168.1.20/24',
      },
      {
        address: 'fd00::20',
        netmask: 'ffff:ffff:ffff:ffff::',
        family: 'IPv6' as const,
        mac: 'dc:a6:32:00:00:01',
        internal: false,
        cidr: 'fd00::20/64',
        scopeid: 0,
      },
    ],
  }),
};
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

t.test("the machine's host name, under .local too, and its addresses are answered with no configuration", async (t) => {
  const d = await startTestDaemon(t, { machine: RASPBERRY_PI });
  const port = new URL(d.base).port;
  const mdns = `${mdnsHostname(d.daemon.services.udn)}.local`;
  for (const host of [
    `raspberrypi.local:${port}`,
    'RaspberryPi.local',
    `raspberrypi:${port}`,
    `192.168.1.20:${port}`,
    `[fd00::20]:${port}`,
    '[fd00::20]',
    `${mdns}:${port}`,
  ]) {
    t.equal((await get(d.base, '/', host, BROWSER_ACCEPT)).status, 200, host);
  }
  for (const host of [
    'evil.example',
    `attacker.local:${port}`,
    'raspberrypi.attacker.example',
    'raspberrypi.local.evil.example',
  ]) {
    t.equal((await get(d.base, '/api/health', host)).status, 421, `${host} is still refused`);
  }
});

t.test('a browser refused gets a page naming the names to open the appliance by and how to add one', async (t) => {
  const d = await startTestDaemon(t, { machine: RASPBERRY_PI });
  const port = new URL(d.base).port;
  const res = await get(d.base, '/', `evil.example:${port}`, BROWSER_ACCEPT);
  t.equal(res.status, 421);
  t.equal(res.type, 'text/html; charset=utf-8');
  t.equal(res.headers['cache-control'], 'no-store');
  t.match(res.headers['content-security-policy'], /default-src 'none'/);
  t.match(res.body, `<a href="http://raspberrypi.local:${port}/">`);
  t.match(res.body, `<a href="http://192.168.1.20:${port}/">`);
  t.match(res.body, '--allowed-host evil.example');
  t.notMatch(res.body, /<script/i, 'no script');
});

t.test('an API client refused keeps problem details, whatever it accepts', async (t) => {
  const d = await startTestDaemon(t, { machine: RASPBERRY_PI });
  for (const [path, accept] of [
    ['/api/health', BROWSER_ACCEPT],
    ['/', 'application/json'],
    ['/description.xml', '*/*'],
    ['/api/zones', undefined],
  ] as const) {
    const res = await get(d.base, path, 'evil.example', accept);
    t.equal(res.status, 421, `${path} (${accept ?? 'no Accept'})`);
    t.match(res.type, /^application\/problem\+json/);
    t.match(JSON.parse(res.body), {
      status: 421,
      detail: /"evil\.example".*open it by raspberrypi\.local, 192\.168\.1\.20, \[fd00::20\], localhost.*allowedHosts/,
    });
  }
});

t.test('the refusal is documented on every route of the OpenAPI document', async (t) => {
  const d = await startTestDaemon(t);
  const doc = JSON.parse((await get(d.base, '/api/openapi.json', '127.0.0.1')).body) as {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  };
  const operations = Object.values(doc.paths).flatMap((item) => Object.values(item));
  t.ok(operations.length > 20, 'control: the document lists the routes');
  t.same(
    operations.filter((op) => !op.responses['421']),
    [],
    'every operation lists 421',
  );
});
