// The Host allow-list decides from the Host header alone: addresses, localhost, the mDNS name and added names pass.
import t from 'tap';
import { hostAllowed, hostChecker, misdirected } from '../../daemon/http/host-check.js';
import { loadConfig } from '../../daemon/config.js';

const names = { mdnsHost: 'azc-1a2b3c4d', extra: ['audio.example.lan'] };

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

t.test('the checker the server uses remembers an allowed Host without letting it stand for another', async (t) => {
  const allowed = hostChecker(names);
  // Each refused header right after an allowed one (the remembered one), and each allowed one twice in a row.
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

t.test('added names come from the flag (repeated or listed), the environment or the config file, checked', async (t) => {
  t.same(loadConfig(['--allowed-host', 'Audio.Example.lan', '--allowed-host=a.lan,b.lan'], {}).config.allowedHosts, ['audio.example.lan', 'a.lan', 'b.lan']);
  t.same(loadConfig([], { AZC_ALLOWED_HOSTS: 'proxy.lan, other.lan.' }).config.allowedHosts, ['proxy.lan', 'other.lan']);
  t.throws(() => loadConfig(['--allowed-host', 'http://proxy.lan'], {}), /must list host names/);
  t.throws(() => loadConfig(['--allowed-host', 'proxy.lan:8080'], {}), /must list host names/);
});
