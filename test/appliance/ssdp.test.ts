// SSDP and /description.xml: real sockets inside a throwaway network namespace (or 127.0.0.1 only), never a real LAN.

import { spawnSync } from 'node:child_process';
import t, { type Test } from 'tap';
import {
  AZC_DEVICE_TYPE,
  AZC_XML_NAMESPACE,
  controllerUdn,
  escapeXml,
  renderDescription,
  UPNP_BASIC_DEVICE_TYPE,
} from '../../daemon/discovery/description.js';
import { answeringTarget, SsdpAnnouncer, selectInterfaces } from '../../daemon/discovery/ssdp.js';
import { LineChild } from '../helpers/line-child.js';
import { createNetwork } from '../helpers/netns.js';
import { nodeEntry } from '../helpers/paths.js';
import { bindUdp, closeUdp } from '../helpers/sockets.js';

/** The children (test/appliance/ssdp-*.ts) as this suite runs: bundled, or under tsx. */
const CHILD = nodeEntry('test/appliance/ssdp-child.ts');
const UDN = 'uuid:5f0c1a52-8d4e-4c55-9a3b-2f6a1e7c9d01';
const FRIENDLY_NAME = 'Kitchen & "Bar" <Zone 1>';
const UPNP_NS = '{urn:schemas-upnp-org:device-1-0}';

interface ParsedDescription {
  root: string;
  spec: [string, string];
  device: Record<string, string>;
  /** The devices in the root device's deviceList, each as tag → text. */
  embedded: Array<Record<string, string>>;
}

/** Parses with a real XML parser (python3's ElementTree); returns namespaced tag → text for the device element. */
function parseXml(xml: string): ParsedDescription {
  const script = `
import json, sys, xml.etree.ElementTree as E
root = E.fromstring(sys.stdin.buffer.read())
ns = '${UPNP_NS}'
device = root.find(ns + 'device')
fields = lambda d: {child.tag: child.text or '' for child in d if child.tag != ns + 'deviceList'}
print(json.dumps({'root': root.tag,
  'spec': [root.findtext(ns + 'specVersion/' + ns + 'major'), root.findtext(ns + 'specVersion/' + ns + 'minor')],
  'device': fields(device),
  'embedded': [fields(d) for d in device.findall(ns + 'deviceList/' + ns + 'device')]}))`;
  const result = spawnSync('python3', ['-c', script], { input: xml, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`not well-formed XML: ${result.stderr}`);
  return JSON.parse(result.stdout) as ParsedDescription;
}

t.test('renderDescription escapes every value and parses as a UPnP 1.0 device description', async (t) => {
  const info = {
    udn: '5f0c1a52-8d4e-4c55-9a3b-2f6a1e7c9d01',
    friendlyName: `${FRIENDLY_NAME}\u0001 🎵`,
    manufacturer: "O'Brien & Sons",
    modelName: 'azcd <pi>',
    modelNumber: '0.1.0',
    serialNumber: ']]> &amp;',
    presentationURL: '/?a=1&b=2',
    apiBaseURL: 'http://10.0.0.2:8080/api',
  };
  const xml = renderDescription(info);
  t.notMatch(xml, /<Zone|<pi>|& /, 'no raw markup characters from the values');
  const parsed = parseXml(xml);
  t.equal(parsed.root, `${UPNP_NS}root`);
  t.same(parsed.spec, ['1', '0']);
  const common = {
    [`${UPNP_NS}friendlyName`]: `${FRIENDLY_NAME}\uFFFD 🎵`,
    [`${UPNP_NS}manufacturer`]: "O'Brien & Sons",
    [`${UPNP_NS}modelName`]: 'azcd <pi>',
    [`${UPNP_NS}modelNumber`]: '0.1.0',
    [`${UPNP_NS}serialNumber`]: ']]> &amp;',
    [`${UPNP_NS}presentationURL`]: '/?a=1&b=2',
    [`{${AZC_XML_NAMESPACE}}apiBaseURL`]: 'http://10.0.0.2:8080/api',
  };
  t.same(
    parsed.device,
    { ...common, [`${UPNP_NS}deviceType`]: UPNP_BASIC_DEVICE_TYPE, [`${UPNP_NS}UDN`]: UDN },
    'the root device is a Basic:1 device',
  );
  t.same(
    parsed.embedded,
    [{ ...common, [`${UPNP_NS}deviceType`]: AZC_DEVICE_TYPE, [`${UPNP_NS}UDN`]: controllerUdn(UDN) }],
    'the controller is embedded in it',
  );
  t.equal(escapeXml('a\uD800b'), 'a\uFFFDb', 'a lone surrogate cannot reach the XML');
});

t.test(
  'our own types have a domain name as their vendor part, and the controller a stable UDN of its own',
  async (t) => {
    t.equal(
      AZC_DEVICE_TYPE,
      'urn:audio-zone-control-local:device:AudioZoneController:1',
      'audio-zone-control.local, periods as hyphens',
    );
    t.equal(AZC_XML_NAMESPACE, 'urn:audio-zone-control-local:device-1-0');
    const controller = controllerUdn(UDN);
    t.match(
      controller,
      /^uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      'a version-5 UUID',
    );
    t.not(controller, UDN);
    t.equal(controllerUdn(UDN.slice('uuid:'.length)), controller, 'the same from either spelling of the root UDN');
    t.not(
      controllerUdn('uuid:9e1d2b63-7c5f-4d66-8b4c-3a7b2f8d0e12'),
      controller,
      'another appliance, another controller UDN',
    );
  },
);

t.test('interface selection: all external IPv4 by default, named ones including loopback', async (t) => {
  const table = {
    lo: [
      { address: '127.0.0.1', family: 'IPv4', internal: true, netmask: '255.0.0.0', mac: '', cidr: null },
      { address: '::1', family: 'IPv6', internal: true, netmask: '', mac: '', cidr: null, scopeid: 0 },
    ],
    eth0: [
      { address: '192.168.1.20', family: 'IPv4', internal: false, netmask: '255.255.255.0', mac: '', cidr: null },
      { address: 'fe80::1', family: 'IPv6', internal: false, netmask: '', mac: '', cidr: null, scopeid: 2 },
    ],
    wlan0: [{ address: '10.0.0.7', family: 'IPv4', internal: false, netmask: '255.0.0.0', mac: '', cidr: null }],
    wg0: [{ address: 'fd00::2', family: 'IPv6', internal: false, netmask: '', mac: '', cidr: null, scopeid: 0 }],
  } as unknown as Parameters<typeof selectInterfaces>[1];
  t.same(selectInterfaces(undefined, table), {
    targets: [
      { name: 'eth0', address: '192.168.1.20', netmask: '255.255.255.0' },
      { name: 'wlan0', address: '10.0.0.7', netmask: '255.0.0.0' },
    ],
    missing: [],
  });
  t.same(selectInterfaces(['lo', 'wg0', 'usb9'], table), {
    targets: [{ name: 'lo', address: '127.0.0.1', netmask: '255.0.0.0' }],
    missing: ['wg0', 'usb9'],
  });
});

t.test("an M-SEARCH is answered through the interface on the asker's subnet, so LOCATION is reachable", async (t) => {
  const eth0 = { name: 'eth0', address: '192.168.1.20', netmask: '255.255.255.0' };
  const wlan0 = { name: 'wlan0', address: '10.0.0.7', netmask: '255.255.0.0' };
  const lo = { name: 'lo', address: '127.0.0.1', netmask: '255.0.0.0' };
  t.equal(answeringTarget('192.168.1.99', [wlan0, eth0]), eth0);
  t.equal(answeringTarget('10.0.200.1', [eth0, wlan0]), wlan0);
  t.equal(answeringTarget('10.1.0.1', [eth0, wlan0]), eth0, 'off every subnet (routed): the first interface');
  t.equal(answeringTarget('127.0.0.1', [eth0, lo]), lo);
  t.equal(answeringTarget('192.168.2.1', [eth0]), eth0);
  t.equal(answeringTarget('not-an-ip', [wlan0, eth0]), wlan0);
  t.equal(answeringTarget('192.168.1.99', []), undefined);
});

t.test('the announcer refuses a udn that is not a uuid and an out-of-range max-age', async (t) => {
  const location = 'http://0.0.0.0:8080/description.xml';
  t.throws(() => new SsdpAnnouncer({ udn: 'azcd-1', location }), /must be a uuid/);
  t.throws(() => new SsdpAnnouncer({ udn: UDN, location, maxAgeS: 1.5 }), /maxAgeS/);
  t.throws(() => new SsdpAnnouncer({ udn: UDN, location: 'not a url' }));
});

t.test('start() logs and resolves instead of throwing when no named interface exists', async (t) => {
  const logs: string[] = [];
  const announcer = new SsdpAnnouncer({
    udn: UDN,
    location: 'http://127.0.0.1:1/description.xml',
    interfaces: ['azc-missing0'],
    log: (level, msg) => logs.push(`${level}: ${msg}`),
  });
  await announcer.start();
  await announcer.stop();
  t.same(logs, [
    'warn: SSDP interfaces without an IPv4 address are skipped',
    'warn: SSDP announcements off: no usable IPv4 interface',
  ]);
});

t.test('start() logs and resolves instead of throwing when the port is taken', async (t) => {
  // An exclusive socket (no SO_REUSEADDR) on 127.0.0.1 makes the announcer's bind fail; nothing leaves loopback.
  const blocker = await bindUdp('127.0.0.1', 0);
  t.teardown(() => closeUdp(blocker));
  const logs: string[] = [];
  const announcer = new SsdpAnnouncer({
    udn: UDN,
    location: 'http://127.0.0.1:1/description.xml',
    interfaces: ['lo'],
    port: blocker.address().port,
    bindToInterfaceAddress: true,
    log: (level, msg) => logs.push(`${level}: ${msg}`),
  });
  await announcer.start();
  await announcer.stop();
  t.ok(logs.includes('error: SSDP could not start; running without discovery'), logs.join('\n'));
  t.notOk(logs.some((line) => line.includes('announcing')));
});

// A run killed before its teardown leaves its namespaces behind: remove those whose test process is gone.
for (const line of spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout?.split('\n') ?? []) {
  const match = /^(azc-ssdp-(\d+)(?:-[ab])?)\b/.exec(line);
  if (!match) continue;
  try {
    process.kill(Number(match[2]), 0);
  } catch {
    spawnSync('ip', ['netns', 'delete', match[1]!]);
  }
}

/** One namespace whose loopback carries multicast: the announcer and its clients talk there and nowhere else. */
function loopbackNetwork(t: Test, name: string): { ok: true } | { ok: false; why: string } {
  return createNetwork(
    t,
    [name],
    [
      ['-n', name, 'link', 'set', 'lo', 'up'],
      ['-n', name, 'link', 'set', 'lo', 'multicast', 'on'],
      ['-n', name, 'route', 'add', '239.0.0.0/8', 'dev', 'lo'],
    ],
  );
}

interface ChildReport {
  mode: 'multicast' | 'unicast';
  httpPort: number;
  aliveRoundsSeen: number;
  notifies: Array<{ nts: string; nt: string; usn: string; location?: string; cacheControl?: string }>;
  afterStop: Array<{ nts: string; nt: string; usn: string; location?: string }>;
  searches: Record<string, Array<{ status: string; headers: Record<string, string> }>>;
  description?: { status: number; contentType: string | null; body: string };
  logs: Array<{ level: string; msg: string }>;
}

/** Runs ssdp-child.ts in `mode` (inside a namespace when `prefix` says so) and returns its one report line. */
async function runChild(t: Test, prefix: string[], mode: string): Promise<ChildReport> {
  const child = new LineChild(t, [
    ...prefix,
    process.execPath,
    ...CHILD,
    mode,
    JSON.stringify({ udn: UDN, friendlyName: FRIENDLY_NAME }),
  ]);
  const report = (await child.next()) as unknown as ChildReport;
  t.equal(await child.exitCode(), 0, 'the child exits with 0');
  return report;
}

const CONTROLLER = controllerUdn(UDN);
/** The root device three times, the embedded controller twice: UPnP DA's announcements of the description's devices. */
const ADVERTISED = [UDN, 'upnp:rootdevice', UPNP_BASIC_DEVICE_TYPE, CONTROLLER, AZC_DEVICE_TYPE];
const usnFor = (nt: string) =>
  nt === UDN || nt === CONTROLLER ? nt : nt === AZC_DEVICE_TYPE ? `${CONTROLLER}::${nt}` : `${UDN}::${nt}`;

t.test('announcer and M-SEARCH client on an isolated loopback', async (t) => {
  const namespace = `azc-ssdp-${process.pid}`;
  const created = loopbackNetwork(t, namespace);
  let report: ChildReport;
  if (created.ok) {
    t.comment(`network namespace ${namespace}: multicast on its own loopback`);
    report = await runChild(t, ['ip', 'netns', 'exec', namespace], 'multicast');
  } else {
    t.comment(`no network namespace (${created.why}); falling back to unicast M-SEARCH bound on 127.0.0.1 only,`);
    t.comment('so NOTIFY alive/byebye are NOT verified in this run');
    report = await runChild(t, [], 'unicast');
  }
  const location = `http://127.0.0.1:${report.httpPort}/description.xml`;
  const maxAge = report.mode === 'multicast' ? 'max-age=3' : 'max-age=1800';

  t.test('M-SEARCH answers carry ST, USN and LOCATION for each search target', async (t) => {
    const all = report.searches['ssdp:all'] ?? [];
    t.same(all.map((a) => a.headers['ST']).sort(), [...ADVERTISED].sort(), 'ssdp:all: one answer per advertised type');
    for (const answer of all) t.equal(answer.headers['USN'], usnFor(answer.headers['ST'] ?? ''));
    for (const st of ADVERTISED) {
      const answers = report.searches[st] ?? [];
      t.equal(answers.length, 1, `exactly one answer for ${st}`);
      t.equal(answers[0]?.headers['ST'], st);
      t.equal(answers[0]?.headers['USN'], usnFor(st));
    }
    const every = Object.values(report.searches).flat();
    t.ok(every.length >= 10);
    for (const answer of every) {
      t.equal(answer.status, 'HTTP/1.1 200 OK');
      t.equal(answer.headers['LOCATION'], location, 'host 0.0.0.0 became the interface address');
      t.equal(answer.headers['CACHE-CONTROL'], maxAge);
      t.equal(answer.headers['EXT'], '');
      t.match(answer.headers['SERVER'], /^\S+\/\S+ UPnP\/1\.0 azcd\/0\.1\.0$/);
    }
  });

  t.test('LOCATION serves the rendered description', async (t) => {
    t.equal(report.description?.status, 200);
    t.match(report.description?.contentType, /xml/);
    const parsed = parseXml(report.description?.body ?? '');
    t.equal(parsed.device[`${UPNP_NS}friendlyName`], FRIENDLY_NAME);
    // Each device the description declares is announced under its UDN and its type, and nothing else is.
    const declared = [parsed.device, ...parsed.embedded].flatMap((d) => [
      d[`${UPNP_NS}UDN`]!,
      d[`${UPNP_NS}deviceType`]!,
    ]);
    t.same(
      [...declared, 'upnp:rootdevice'].sort(),
      [...ADVERTISED].sort(),
      'the announced types are the declared devices',
    );
    for (const d of [parsed.device, ...parsed.embedded]) {
      const st = d[`${UPNP_NS}deviceType`]!;
      t.equal(
        report.searches[st]?.[0]?.headers['USN'],
        `${d[`${UPNP_NS}UDN`]}::${st}`,
        `${st} is answered with the UDN of the device of that type`,
      );
    }
  });

  if (report.mode === 'multicast') {
    t.test('NOTIFY ssdp:alive for every type, repeated before max-age', async (t) => {
      t.ok(report.aliveRoundsSeen >= 2, `re-announced (${report.aliveRoundsSeen} rounds seen)`);
      const alive = report.notifies.filter((n) => n.nts === 'ssdp:alive');
      t.same([...new Set(alive.map((n) => n.nt))].sort(), [...ADVERTISED].sort());
      for (const n of alive) {
        t.equal(n.usn, usnFor(n.nt));
        t.equal(n.location, location);
        t.equal(n.cacheControl, maxAge);
      }
    });

    t.test('stop() sends ssdp:byebye for every type before the sockets close', async (t) => {
      const byebye = report.afterStop.filter((n) => n.nts === 'ssdp:byebye');
      t.same([...new Set(byebye.map((n) => n.nt))].sort(), [...ADVERTISED].sort());
      for (const n of byebye) {
        t.equal(n.usn, usnFor(n.nt));
        t.equal(n.location, undefined, 'byebye has no LOCATION');
      }
      t.notOk(
        report.afterStop.some((n) => n.nts === 'ssdp:alive'),
        'no alive after stop()',
      );
    });
  }

  t.test('the announcer logged nothing alarming', async (t) => {
    t.same(
      report.logs.filter((l) => l.level === 'warn' || l.level === 'error'),
      [],
    );
  });
});

t.test('Daemon.stop() sends ssdp:byebye for every advertised type', async (t) => {
  const namespace = `azc-ssdp-${process.pid}-d`;
  const created = loopbackNetwork(t, namespace);
  if (!created.ok) {
    t.comment(`no network namespace (${created.why}): daemon-lifecycle.test.ts checks the SSDP socket closes instead`);
    return;
  }
  const child = new LineChild(t, [
    'ip',
    'netns',
    'exec',
    namespace,
    process.execPath,
    ...nodeEntry('test/appliance/ssdp-daemon-child.ts'),
  ]);
  const report = (await child.next()) as unknown as {
    udn: string;
    afterStop: Array<{ nts: string; nt: string; usn: string }>;
  };
  t.equal(await child.exitCode(), 0, 'the child exits with 0');
  const byebye = report.afterStop?.filter((n) => n.nts === 'ssdp:byebye') ?? [];
  t.same(
    [...new Set(byebye.map((n) => n.nt))].sort(),
    [report.udn, 'upnp:rootdevice', UPNP_BASIC_DEVICE_TYPE, controllerUdn(report.udn), AZC_DEVICE_TYPE].sort(),
  );
  t.notOk(
    report.afterStop?.some((n) => n.nts === 'ssdp:alive'),
    'no alive after the stop',
  );
});

t.test('on two networks each NOTIFY and answer carries the address of the network it travels on', async (t) => {
  // Namespace A (the appliance) has two veth links into namespace B (two LANs): 10.77.1.0/24 and 10.77.2.0/24.
  const tag = String(process.pid % 100000);
  const [nsA, nsB] = [`azc-ssdp-${process.pid}-a`, `azc-ssdp-${process.pid}-b`];
  const steps = [
    ['link', 'add', `az${tag}a1`, 'netns', nsA, 'type', 'veth', 'peer', 'name', `az${tag}b1`, 'netns', nsB],
    ['link', 'add', `az${tag}a2`, 'netns', nsA, 'type', 'veth', 'peer', 'name', `az${tag}b2`, 'netns', nsB],
    ['-n', nsA, 'addr', 'add', '10.77.1.1/24', 'dev', `az${tag}a1`],
    ['-n', nsA, 'addr', 'add', '10.77.2.1/24', 'dev', `az${tag}a2`],
    ['-n', nsB, 'addr', 'add', '10.77.1.2/24', 'dev', `az${tag}b1`],
    ['-n', nsB, 'addr', 'add', '10.77.2.2/24', 'dev', `az${tag}b2`],
    ...['a1', 'a2', 'b1', 'b2'].map((end) => ['-n', end[0] === 'a' ? nsA : nsB, 'link', 'set', `az${tag}${end}`, 'up']),
    // Only one multicast route per side, as on a real box: the default route must not decide the interface.
    ['-n', nsA, 'route', 'add', '239.0.0.0/8', 'dev', `az${tag}a1`],
    ['-n', nsB, 'route', 'add', '239.0.0.0/8', 'dev', `az${tag}b1`],
  ];
  const network = createNetwork(t, [nsA, nsB], steps);
  if (!network.ok) {
    t.comment(`no network namespace here (${network.why}): the two-network case is not verified in this run`);
    return;
  }
  const config = JSON.stringify({
    udn: UDN,
    announcerAddresses: ['10.77.1.1', '10.77.2.1'],
    observerAddresses: ['10.77.1.2', '10.77.2.2'],
  });
  const node = [process.execPath, ...nodeEntry('test/appliance/ssdp-two-networks.ts')];
  const observer = new LineChild(t, ['ip', 'netns', 'exec', nsB, ...node, 'observe', config]);
  t.same(await observer.next(), { listening: true });
  const announcer = new LineChild(t, ['ip', 'netns', 'exec', nsA, ...node, 'announce', config]);
  t.match(await announcer.next(), { ready: true });

  observer.send('search');
  const { answers, alive } = (await observer.next()) as {
    answers: Record<string, string[]>;
    alive: Array<{ from: string; location: string }>;
  };
  t.same(
    answers,
    {
      '10.77.1.2': ['http://10.77.1.1:8080/description.xml'],
      '10.77.2.2': ['http://10.77.2.1:8080/description.xml'],
    },
    "one answer per M-SEARCH, with the LOCATION of the asker's network",
  );
  t.same([...new Set(alive.map((n) => n.from))].sort(), ['10.77.1.1', '10.77.2.1'], 'NOTIFY alive on both links');
  for (const n of alive) t.equal(n.location, `http://${n.from}:8080/description.xml`, `alive from ${n.from}`);

  announcer.end();
  t.match(await announcer.next(), {
    stopped: true,
    logs: ['info: SSDP announcing', 'info: SSDP stopped after byebye'],
  });
  t.equal(await announcer.exitCode(), 0);
  observer.send('byebye');
  const { byebye } = (await observer.next()) as { byebye: Array<{ from: string }> };
  t.same([...new Set(byebye.map((n) => n.from))].sort(), ['10.77.1.1', '10.77.2.1'], 'byebye on both links');
  t.equal(await observer.exitCode(), 0);
});
