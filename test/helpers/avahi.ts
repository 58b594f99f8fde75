// Avahi on a private D-Bus inside a network namespace the test made: what shairport-sync 3.3.8 needs to advertise
// AirPlay (it exits without a system bus), never the machine's own Avahi or bus.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import { tempDir } from './daemon.js';
import { Changes, waitFor, within } from './wait-for.js';

/**
 * Starts `command` and resolves with what it said once its output (stdout or stderr) matches `ready`; killed in
 * teardown, which waits for it to exit.
 */
export async function startUntilSaid(
  t: Test,
  command: string[],
  ready: RegExp,
  env: Record<string, string> = {},
): Promise<string> {
  const child: ChildProcess = spawn(command[0]!, command.slice(1), {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const exited = new Promise((resolve) => child.once('close', resolve));
  t.teardown(async () => {
    child.kill();
    await within(exited, undefined, `${command[0]} to exit`);
  });
  let said = '';
  const changes = new Changes();
  for (const stream of [child.stdout!, child.stderr!])
    stream.setEncoding('utf8').on('data', (chunk: string) => {
      said += chunk;
      changes.notify();
    });
  void exited.then(() => changes.notify());
  // What it said is in the failure: a daemon that exits at start says why.
  await waitFor(
    () => {
      if (ready.test(said)) return true;
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${command[0]} exited`);
      return false;
    },
    undefined,
    { what: `${command[0]} to say ${ready}`, changes },
  ).catch((err: Error) => {
    throw new Error(`${err.message}; it said: ${said.slice(-2000)}`);
  });
  return said;
}

export interface PrivateAvahi {
  /** The environment that points a program (shairport-sync) at the private system bus Avahi is on. */
  env: { DBUS_SYSTEM_BUS_ADDRESS: string };
  /** A private folder for the test's other files, deleted in teardown. */
  dir: string;
  /** The host name Avahi announces, with `.local`. */
  hostName: string;
}

/** A service Avahi announces from a static service file (its /etc/avahi/services), at its own host name. */
export interface StaticService {
  name: string;
  /** `_dacp._tcp`, … */
  type: string;
  port: number;
}

/** An Avahi static service file: the names are the test's own, so XML-escaping them is not needed. */
const serviceFile = ({ name, type, port }: StaticService) =>
  [
    '<?xml version="1.0" standalone="no"?>',
    '<!DOCTYPE service-group SYSTEM "avahi-service.dtd">',
    '<service-group>',
    `  <name>${name}</name>`,
    `  <service><type>${type}</type><port>${port}</port></service>`,
    '</service-group>',
    '',
  ].join('\n');

/**
 * Starts a D-Bus system bus of the test's own (a socket in a private folder), and avahi-daemon on it inside
 * namespace `ns`, on link `link` only, over IPv4; resolves once Avahi says its start-up is complete. `hostName`
 * (without `.local`) is the name Avahi announces; by default the machine's, as on an appliance. `services`: what it
 * announces besides, in place of the machine's static services.
 */
export async function startAvahi(
  t: Test,
  { ns, link, hostName, services = [] }: { ns: string; link: string; hostName?: string; services?: StaticService[] },
): Promise<PrivateAvahi> {
  const dir = tempDir('azc-avahi-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const bus = path.join(dir, 'bus');
  writeFileSync(
    path.join(dir, 'dbus.conf'),
    [
      '<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">',
      '<busconfig>',
      '  <type>system</type>',
      `  <listen>unix:path=${bus}</listen>`,
      '  <auth>EXTERNAL</auth>',
      '  <policy context="default">',
      '    <allow user="*"/>',
      '    <allow own="*"/>',
      '    <allow send_type="method_call"/>',
      '    <allow send_destination="*" eavesdrop="true"/>',
      '    <allow eavesdrop="true"/>',
      '  </policy>',
      '</busconfig>',
      '',
    ].join('\n'),
  );
  writeFileSync(
    path.join(dir, 'avahi.conf'),
    [
      '[server]',
      ...(hostName ? [`host-name=${hostName}`] : []),
      'use-ipv4=yes',
      'use-ipv6=no',
      `allow-interfaces=${link}`,
      '[publish]',
      'publish-hinfo=no',
      'publish-workstation=no',
      '',
    ].join('\n'),
  );
  const servicesDir = path.join(dir, 'services');
  mkdirSync(servicesDir);
  services.forEach((service, i) => writeFileSync(path.join(servicesDir, `${i}.service`), serviceFile(service)));
  const env = { DBUS_SYSTEM_BUS_ADDRESS: `unix:path=${bus}` };
  await startUntilSaid(
    t,
    ['dbus-daemon', '--config-file', path.join(dir, 'dbus.conf'), '--nofork', '--print-address'],
    /unix:/,
  );
  // Avahi keeps its pid file and socket in /run/avahi-daemon: a /run of its own, in a mount namespace of its own,
  // where its static services' folder is the test's when the test gives services.
  const own = services.length ? `mount --bind ${servicesDir} /etc/avahi/services && ` : '';
  const avahi = `mount -t tmpfs tmpfs /run && mkdir -m 755 /run/avahi-daemon && ${own}exec avahi-daemon --no-drop-root --no-chroot --no-rlimits -f ${dir}/avahi.conf`;
  const said = await startUntilSaid(
    t,
    ['ip', 'netns', 'exec', ns, 'unshare', '--mount', 'sh', '-c', avahi],
    /Server startup complete\. Host name is [^\s]+\.local\./,
    env,
  );
  const [, announced] = /Server startup complete\. Host name is ([^\s]+\.local)\./.exec(said)!;
  return { env, dir, hostName: announced! };
}
