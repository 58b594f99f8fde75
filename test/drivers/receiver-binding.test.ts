// Receivers listen only where the daemon serves: native/'s azc-bind.node, preloaded into each receiver, moves its TCP
// listening sockets to the daemon's address (AZC_BIND_HOST). First what it does to a bind, seen from node programs
// that listen and print where they ended up; then the real programs, in a network namespace the test makes with an
// IPv6 address beside the IPv4 one: gmediarender (which serves on its interface's IPv6 address too) and
// shairport-sync (which listens on every address) keep to the IPv4 address the daemon serves on, and without the
// shim they do not.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { findBindShim } from '../../drivers/core/confine.js';
import { airplayPort, shairport } from '../../drivers/receivers/shairport.js';
import { ReceiverSupervisor } from '../../drivers/receivers/supervisor.js';
import { portOf, upnp } from '../../drivers/receivers/upnp.js';
import { startAvahi } from '../helpers/avahi.js';
import { tempDir } from '../helpers/daemon.js';
import { gmediarenderMissing } from '../helpers/upnp-control-point.js';
import { vethNetwork } from '../helpers/veth-network.js';
import { Changes, waitFor } from '../helpers/wait-for.js';

const shim = findBindShim();

/** Listens (or binds, for UDP) as each argument asks (`kind,host[,v6only]`), one after the other, and prints where. */
const LISTENER = `
const net = require('node:net');
const dgram = require('node:dgram');
const listen = ([kind, host, only]) => new Promise((done) => {
  if (kind.startsWith('udp')) {
    const s = dgram.createSocket(kind);
    s.bind(0, host, () => { const at = s.address().address; s.close(); done(at); });
  } else {
    const s = net.createServer();
    s.on('error', (e) => done('error ' + e.code));
    s.listen({ host, port: 0, ipv6Only: only === 'v6only' }, () => { const at = s.address().address; s.close(); done(at); });
  }
});
(async () => {
  for (const request of process.argv.slice(1)) console.log(await listen(request.split(',')));
})();`;

/** Where listeners asked for as `kind,host[,v6only]` end up with the shim and AZC_BIND_HOST=`served`. */
function boundTo(served: string | undefined, requests: string[], prefix: string[] = []): string[] {
  const env = { ...process.env, ...(served === undefined ? {} : { LD_PRELOAD: shim!, AZC_BIND_HOST: served }) };
  const [file, ...args] = [...prefix, process.execPath, '-e', LISTENER, ...requests];
  return execFileSync(file!, args, { env, encoding: 'utf8' }).trim().split('\n');
}

t.test('a TCP listener keeps to the address the daemon serves on; UDP and loopback are left alone', async (t) => {
  if (!shim) {
    t.comment('native/ was not built (azc-bind.node is missing): receivers listen on every address here');
    return;
  }
  t.same(boundTo(undefined, ['tcp,::,v6only']), ['::'], 'without the shim, the IPv6 wildcard');
  // The default: every IPv4 address.
  t.same(
    boundTo('0.0.0.0', ['tcp,0.0.0.0', 'tcp,::,v6only', 'tcp,::', 'udp4,0.0.0.0', 'udp6,::', 'tcp,127.0.0.1']),
    [
      '0.0.0.0', // the IPv4 wildcard stays
      '::1', // IPv6 only: its loopback, so nothing outside reaches it
      '::ffff:0.0.0.0', // an IPv6 socket that takes IPv4 too: IPv4 only
      '0.0.0.0', // UDP stays (SSDP must receive multicast)
      '::', // UDP over IPv6 stays
      '127.0.0.1', // loopback stays
    ],
    'serving every IPv4 address',
  );
  t.same(boundTo('::', ['tcp,::,v6only']), ['::'], 'the daemon on `::`: the IPv6 wildcard stays');
  t.same(boundTo('garbage', ['tcp,::,v6only']), ['::'], 'an AZC_BIND_HOST that is no address changes nothing');
  // One address: needs one of the machine's own, so a namespace of the test's.
  const net = vethNetwork(t, 'bd', 246);
  if (!net.ok) {
    t.comment(`network namespaces cannot be made here (${net.why}): one served address goes unverified`);
    return;
  }
  t.same(
    boundTo(net.address, ['tcp,0.0.0.0', 'tcp,::', 'tcp,::,v6only'], ['ip', 'netns', 'exec', net.ns]),
    [net.address, `::ffff:${net.address}`, '::1'],
    'serving one IPv4 address: the wildcard becomes it, IPv4 through IPv6 too, IPv6 only its loopback',
  );
});

/** The namespace's listening TCP sockets on `port`, as `address` (IPv6 in brackets), sorted. */
function listening(ns: string, port: number): string[] {
  const out = execFileSync('ip', ['netns', 'exec', ns, 'ss', '-Hltn'], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((line) => line.trim().split(/\s+/)[3])
    .filter((local): local is string => local?.endsWith(`:${port}`) === true)
    .map((local) =>
      local
        .slice(0, -`:${port}`.length)
        .replace(/%\S+$/, '')
        .replace(/^\[(.*)\]$/, '$1'),
    )
    .sort();
}

/** A namespace with a veth pair and a ULA beside its IPv4 address, ready at once (no duplicate detection). */
function dualStackNetwork(t: Test, tag: string, octet: number) {
  const net = vethNetwork(t, tag, octet);
  if (!net.ok) return net;
  const ula = `fd00:${octet}::2`;
  execFileSync('ip', ['-n', net.ns, 'addr', 'add', `${ula}/64`, 'dev', net.nsIf, 'nodad']);
  return { ...net, ula };
}

/** Runs a receiver of `kind` in `ns` (with the shim unless `bindShimPath` is ''), until `ready` says it listens. */
async function runIn(
  t: Test,
  options: {
    kind: ConstructorParameters<typeof ReceiverSupervisor>[0]['kind'];
    ns: string;
    address: string;
    nsIf: string;
    env?: Record<string, string>;
    bindShimPath?: string;
    /** A log line that says it listens; without one, its port is polled. */
    ready?: (line: string) => boolean;
    port: number;
  },
) {
  const dir = tempDir('azc-binding-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(path.join(dir, 'state'));
  const fifo = path.join(dir, 'out.pcm');
  execFileSync('mkfifo', ['-m', '600', fifo]);
  let ready = false;
  const changes = new Changes();
  const supervisor = new ReceiverSupervisor({
    kind: options.kind,
    stateDir: path.join(dir, 'state'),
    settings: {
      playerId: 'kitchen',
      name: 'Kitchen',
      output: { kind: 'fifo', path: fifo },
      listenHost: options.address,
      listenInterface: options.nsIf,
    },
    prefix: ['ip', 'netns', 'exec', options.ns],
    ...(options.env ? { env: options.env } : {}),
    ...(options.bindShimPath === undefined ? {} : { bindShimPath: options.bindShimPath }),
    log: (_level, message) => {
      if (options.ready?.(message)) ready = true;
      changes.notify();
    },
  });
  t.teardown(() => supervisor.stop());
  await supervisor.start();
  const what = `${options.kind.program} to listen`;
  if (options.ready) await waitFor(() => ready, undefined, { what, changes });
  else await waitFor(() => listening(options.ns, options.port).length > 0, undefined, { what });
}

const noGmediarender = gmediarenderMissing();
for (const withShim of [true, false]) {
  t.test(
    withShim
      ? 'gmediarender serves only on the IPv4 address the daemon serves on, not on its IPv6 one'
      : 'without the shim, gmediarender serves on its interface’s IPv6 address too',
    async (t) => {
      if (noGmediarender || !shim) {
        t.comment(`${noGmediarender ?? 'azc-bind.node is missing'}: gmediarender's addresses go unverified`);
        return;
      }
      const net = dualStackNetwork(t, withShim ? 'bu' : 'bv', withShim ? 247 : 248);
      if (!net.ok) {
        t.comment(`network namespaces cannot be made here (${net.why})`);
        return;
      }
      await runIn(t, {
        kind: upnp,
        ...net,
        ...(withShim ? {} : { bindShimPath: '' }),
        port: portOf('kitchen'),
        ready: (line) => /Ready for rendering\.$/.test(line),
      });
      const port = portOf('kitchen');
      if (withShim) t.same(listening(net.ns, port), [net.address, '::1'].sort());
      else {
        const addresses = listening(net.ns, port);
        t.ok(
          addresses.some((address) => address.includes(':') && address !== '::1'),
          `an IPv6 address beside ${net.address}: ${addresses.join(', ')}`,
        );
      }
    },
  );
}

t.test('shairport-sync listens only on the IPv4 address the daemon serves on', async (t) => {
  const missing = spawnSync('shairport-sync', ['-V']).error;
  if (missing || !shim) {
    t.comment(
      `${missing ? 'shairport-sync is not installed' : 'azc-bind.node is missing'}: its addresses go unverified`,
    );
    return;
  }
  const net = dualStackNetwork(t, 'bw', 249);
  if (!net.ok) {
    t.comment(`network namespaces cannot be made here (${net.why})`);
    return;
  }
  const { env } = await startAvahi(t, { ns: net.ns, link: net.nsIf, services: [] });
  const port = airplayPort('kitchen');
  await runIn(t, { kind: shairport, ...net, env, port });
  t.same(listening(net.ns, port), [net.address, '::1'].sort());
});
