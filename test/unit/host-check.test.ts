// The Host allow-list decides from the Host header and the machine's names: addresses, localhost, the host name, the
// mDNS name and added names pass; a browser refused gets a page, an API client problem details.
import t from 'tap';
import { loadConfig } from '../../daemon/config.js';
import { HostAllowList, hostAllowed, misdirected, misdirectedPage, prefersHtml } from '../../daemon/http/host-check.js';
import { dashboardUrl } from '../../daemon/mqtt/options.js';

const names = {
  mdnsHost: 'azc-1a2b3c4d',
  mdnsAnnounced: true,
  extra: ['audio.example.lan'],
  machine: { hostname: () => 'other-box', interfaces: () => ({}) },
};

const ALLOWED = [
  '192.168.1.20',
  '192.168.1.20:8080',
  '[::1]',
  '[fe80::1]:8080',
  'localhost',
  'LOCALHOST:8080',
  'localhost.',
  'azc-1a2b3c4d.local',
  'AZC-1A2B3C4D.local:8080',
  'azc-1a2b3c4d-web.local',
  'azc-1a2b3c4d-2.local',
  'azc-1a2b3c4d-web-2.local',
  'azc-1a2b3c4d.local.',
  'audio.example.lan:443',
  '',
];

const REFUSED = [
  'evil.example',
  'evil.example:8080',
  'localhost.evil.example',
  '192.168.1.20.evil.example',
  'azc-1a2b3c4d.local.evil.example',
  'azc-1a2b3c4d-evil.local',
  // Not a host name (ciao's own conflict form, which mdns.ts replaces).
  'azc-1a2b3c4d-(2).local',
  'azc-ffffffff.local',
  'x.audio.example.lan',
  '[not-an-address]',
  '[::1',
  'localhost:http',
  '1.2.3',
];

t.test('IP literals, localhost, the mDNS names and added names are answered, with or without a port', async (t) => {
  for (const host of ALLOWED) t.ok(hostAllowed(host, names), host || '(no Host header)');
});

t.test('any other name is refused, lookalikes of the allowed ones included', async (t) => {
  for (const host of REFUSED) t.notOk(hostAllowed(host, names), host);
});

t.test('the checker the server uses answers an allowed Host without letting it stand for another', async (t) => {
  const list = new HostAllowList(names);
  const allowed = (header: string) => list.allows(header);
  // Each refused header right after an allowed one, and each allowed one twice in a row.
  for (let i = 0; i < Math.max(ALLOWED.length, REFUSED.length); i++) {
    const yes = ALLOWED[i % ALLOWED.length]!;
    const no = REFUSED[i % REFUSED.length]!;
    t.ok(allowed(yes), `${yes || '(no Host header)'} allowed`);
    t.ok(allowed(yes), `${yes || '(no Host header)'} allowed again`);
    t.notOk(allowed(no), `${no} refused after ${yes || '(no Host header)'}`);
    t.notOk(allowed(no), `${no} refused again`);
  }
});

t.test('the refusal is a 421 that names the host and says how to add a name', async (t) => {
  const error = misdirected('evil.example', names);
  t.equal(error.status, 421);
  t.match(error.detail, /"evil\.example"/);
  t.match(error.detail, /azc-1a2b3c4d\.local/);
  t.match(error.detail, /allowedHosts.*--allowed-host NAME.*AZC_ALLOWED_HOSTS/);
});

t.test(
  'added names come from the flag (repeated or listed), the environment or the config file, checked',
  async (t) => {
    t.same(loadConfig(['--allowed-host', 'Audio.Example.lan', '--allowed-host=a.lan,b.lan'], {}).config.allowedHosts, [
      'audio.example.lan',
      'a.lan',
      'b.lan',
    ]);
    t.same(loadConfig([], { AZC_ALLOWED_HOSTS: 'proxy.lan, other.lan.' }).config.allowedHosts, [
      'proxy.lan',
      'other.lan',
    ]);
    t.throws(() => loadConfig(['--allowed-host', 'http://proxy.lan'], {}), /must list host names/);
    t.throws(() => loadConfig(['--allowed-host', 'proxy.lan:8080'], {}), /must list host names/);
  },
);

/** A made-up machine: its host name and links as a test sets them, and how often they were read. */
function machine(
  name: string,
  interfaces: Record<string, Array<{ address: string; family: 'IPv4' | 'IPv6'; internal?: boolean }>> = {},
) {
  const box = {
    name,
    reads: 0,
    hostname: () => {
      box.reads++;
      return box.name;
    },
    interfaces: () =>
      Object.fromEntries(
        Object.entries(interfaces).map(([link, list]) => [link, list.map((a) => ({ internal: false, ...a }))]),
      ) as never,
  };
  return box;
}

const LAN = {
  lo: [
    { address: '127.0.0.1', family: 'IPv4' as const, internal: true },
    { address: '::1', family: 'IPv6' as const, internal: true },
  ],
  eth0: [
    { address: '192.168.1.20', family: 'IPv4' as const },
    { address: 'fe80::1e2f:3a4b', family: 'IPv6' as const },
    { address: 'fd00::20', family: 'IPv6' as const },
  ],
};

t.test(
  "the machine's host name, alone and under .local, is answered without configuration; under any other domain it is refused",
  async (t) => {
    const list = new HostAllowList({ mdnsHost: 'azc-1a2b3c4d', extra: [], machine: machine('RaspberryPi', LAN) });
    for (const host of [
      'raspberrypi',
      'raspberrypi:8080',
      'raspberrypi.local',
      'RaspberryPi.local:8080',
      'raspberrypi.local.',
      '192.168.1.20:8080',
      '[fd00::20]:8080',
    ]) {
      t.ok(list.allows(host), host);
    }
    for (const host of [
      'evil.example',
      'attacker.local',
      'raspberrypi.attacker.example',
      'raspberrypi-2.local',
      'xraspberrypi.local',
      'raspberrypi.local.evil.example',
    ]) {
      t.notOk(list.allows(host), host);
    }
    const fqdn = new HostAllowList({ extra: [], machine: machine('pi.home.arpa') });
    for (const host of ['pi.home.arpa', 'pi', 'pi.local:8080'])
      t.ok(fqdn.allows(host), `${host} (host name pi.home.arpa)`);
    t.notOk(fqdn.allows('home.arpa'), 'home.arpa (only the machine, not its domain)');
  },
);

t.test(
  "a refused Host has the machine re-read, at most once a second, and a name no longer the machine's is refused then",
  async (t) => {
    let now = 0;
    const box = machine('raspberrypi');
    const list = new HostAllowList({ extra: [], machine: box }, () => now);
    t.equal(box.reads, 1, 'read once at start');
    t.ok(list.allows('raspberrypi.local'), 'the host name as it was');
    box.name = 'kitchen';
    for (let i = 0; i < 50; i++) t.notOk(list.allows('evil.example'), 'a foreign name, refused');
    t.equal(box.reads, 1, 'refusals within a second read nothing');
    t.ok(list.allows('raspberrypi.local'), 'the old name is answered until the machine is read again');
    now += 1000;
    t.notOk(list.allows('evil.example'), 'a foreign name, refused a second later');
    t.equal(box.reads, 2, 'and the machine read again');
    t.notOk(list.allows('raspberrypi.local'), "the old name is refused: no longer the machine's");
    t.ok(list.allows('kitchen.local'), 'the new one is answered');
    now += 1000;
    t.ok(list.allows('kitchen.local'), 'and again');
    t.equal(box.reads, 2, 'an allowed Host reads nothing');
  },
);

t.test(
  'a refused client is offered the mDNS name while it is announced, the host name under .local and the LAN addresses',
  async (t) => {
    const offered = (announced: boolean) =>
      new HostAllowList({
        mdnsHost: 'azc-1a2b3c4d',
        mdnsAnnounced: announced,
        extra: ['audio.example.lan'],
        machine: machine('raspberrypi', LAN),
      }).refusal('evil.example').offered;
    t.same(offered(true), [
      'azc-1a2b3c4d.local',
      'raspberrypi.local',
      '192.168.1.20',
      '[fd00::20]',
      'audio.example.lan',
    ]);
    t.same(
      offered(false),
      ['raspberrypi.local', '192.168.1.20', '[fd00::20]', 'audio.example.lan'],
      'no mDNS name while discovery is off',
    );
  },
);

t.test('a browser prefers the page, an API client or a plain fetch problem details', async (t) => {
  const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
  t.ok(prefersHtml(BROWSER), 'a browser opening a page');
  t.ok(prefersHtml('text/*'), 'any text');
  for (const accept of [
    '',
    '*/*',
    'application/json',
    'application/problem+json',
    'text/html;q=0.5, application/json',
    'application/json, text/html',
    'text/html;q=0',
  ]) {
    t.notOk(prefersHtml(accept), accept || '(no Accept)');
  }
});

t.test(
  'the page names the names to use, on the port the browser used, how to add one, and escapes what the client sent',
  async (t) => {
    const list = new HostAllowList({
      mdnsHost: 'azc-1a2b3c4d',
      mdnsAnnounced: true,
      extra: [],
      machine: machine('raspberrypi', LAN),
    });
    const page = misdirectedPage(list.refusal('audio.home:8080'));
    t.match(page, '<a href="http://azc-1a2b3c4d.local:8080/">azc-1a2b3c4d.local:8080</a>');
    t.match(page, '<a href="http://192.168.1.20:8080/">');
    t.match(page, '<a href="http://[fd00::20]:8080/">');
    t.match(page, '--allowed-host audio.home');
    t.match(page, 'AZC_ALLOWED_HOSTS=audio.home');
    t.notMatch(page, /<script/i);
    const hostile = misdirectedPage(list.refusal('<script>alert(1)</script>"x'));
    t.notMatch(hostile, /<script|"x/i, 'nothing the client sent is markup');
    t.match(hostile, '&lt;script&gt;alert(1)&lt;/script&gt;&quot;x');
  },
);

t.test('a machine with no LAN address and no announced name is still told to use its address', async (t) => {
  const error = new HostAllowList({ extra: [], machine: machine('localhost', { lo: LAN.lo }) }).refusal('evil.example');
  t.same(error.offered, []);
  t.match(error.detail, 'open it by its IP address, localhost;');
  t.match(misdirectedPage(error), '<ul><li>its IP address on your network</li></ul>');
});

t.test(
  "Home Assistant's link on a wildcard listener names the appliance by a name its allow-list answers",
  async (t) => {
    const list = new HostAllowList({
      mdnsHost: 'azc-1a2b3c4d',
      mdnsAnnounced: true,
      extra: [],
      machine: machine('raspberrypi', LAN),
    });
    for (const [listener, name] of [
      ['0.0.0.0', 'azc-1a2b3c4d.local'],
      ['::', 'raspberrypi'],
      ['192.168.1.20', 'raspberrypi'],
    ] as const) {
      const url = new URL(dashboardUrl(listener, 8080, name));
      t.ok(list.allows(url.host), `${url.href} (listening on ${listener})`);
    }
    t.equal(dashboardUrl('0.0.0.0', 8080, 'azc-1a2b3c4d.local'), 'http://azc-1a2b3c4d.local:8080/');
  },
);
