// The Host allow-list: requests are answered only under names that lead to this appliance, so a page on another
// site cannot read the API from a LAN browser by pointing its own DNS name at the appliance (DNS rebinding).
import { hostname, type NetworkInterfaceInfo, networkInterfaces } from 'node:os';
import { monotonicMs } from '../runtime.js';
import { HttpError } from './problem.js';

/** Where the machine's own names come from: the operating system, or what a test makes up. */
export interface Machine {
  hostname(): string;
  interfaces(): NodeJS.Dict<NetworkInterfaceInfo[]>;
}

export const OS_MACHINE: Machine = { hostname, interfaces: networkInterfaces };

export interface HostNames {
  /** The appliance's mDNS host name without `.local` (`azc-1a2b3c4d`); every name it announces starts with it. */
  mdnsHost?: string;
  /** Whether that name is announced (discovery on): only then is it offered to a refused browser. */
  mdnsAnnounced?: boolean;
  /** Names the owner added (`allowedHosts`): a reverse proxy's, a DNS name of the appliance. */
  extra: readonly string[];
  /** Where the host name and interface addresses are read; the operating system's by default. */
  machine?: Machine;
}

/** The machine's names as last read: its host name's forms and its LAN addresses (for the refusal page). */
export interface MachineNames {
  hosts: ReadonlySet<string>;
  addresses: readonly string[];
}

const NO_MACHINE: MachineNames = { hosts: new Set(), addresses: [] };
/** A refused Host re-reads the machine's names at most this often: a flood of foreign names costs one read a second. */
export const REREAD_MS = 1000;
/** At most this many addresses are offered on the refusal page (a machine with many bridges has dozens). */
const MAX_ADDRESSES = 6;

/**
 * The machine's host name as the LAN reaches it: as set (`raspberrypi`, or `pi.home.arpa`), its first label, and
 * that label under `.local` (what avahi announces); and its addresses a browser can open, IPv4 first. The host name
 * is never taken under any other domain: `raspberrypi.attacker.example` is not this machine.
 */
export function readMachine(machine: Machine): MachineNames {
  const hosts = new Set<string>();
  const name = machine.hostname().trim().toLowerCase().replace(/\.$/, '');
  if (name !== '' && name !== 'localhost') {
    const label = name.split('.')[0]!;
    hosts.add(name).add(label).add(`${label}.local`);
  }
  const v4: string[] = [];
  const v6: string[] = [];
  for (const list of Object.values(machine.interfaces())) {
    for (const info of list ?? []) {
      if (info.internal) continue;
      if (info.family === 'IPv4') v4.push(info.address);
      // Link-local addresses need a zone browsers do not take; they are answered, just not offered.
      else if (!/^fe[89ab]/i.test(info.address)) v6.push(`[${info.address.toLowerCase()}]`);
    }
  }
  return { hosts, addresses: [...new Set([...v4, ...v6])].slice(0, MAX_ADDRESSES) };
}

/** A dotted-quad IPv4 address, as node's net.isIP() takes one (no leading zeros). */
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/**
 * Whether a Host header names this appliance: an IP literal (v4, or v6 in brackets: an address cannot be pointed
 * elsewhere by a web site's DNS, and a port forward or NAT reaches it under one that is not on its links),
 * `localhost`, the machine's host name (`raspberrypi`, `raspberrypi.local`), the mDNS names and the forms a
 * name conflict gives them (`azc-…-web.local`, `azc-…-2.local`, `azc-…-web-2.local`: mdns.ts keeps them valid host
 * labels), or an added name; with or without a port and a trailing dot, in any letter case. No Host at all
 * (HTTP/1.0) is no rebinding: browsers always send one.
 */
export function hostAllowed(header: string, names: HostNames, machine: MachineNames = NO_MACHINE): boolean {
  if (header === '') return true;
  const host = hostPart(header);
  if (host === undefined) return false;
  // node's net module is loaded for an IPv6 literal only: every request carries a Host, and an idle daemon has no
  // other use for it (ARCHITECTURE.md, "Memory").
  if (host.startsWith('[')) return host.endsWith(']') && process.getBuiltinModule('node:net').isIPv6(host.slice(1, -1));
  if (IPV4.test(host) || host === 'localhost') return true;
  if (names.mdnsHost && host.endsWith('.local')) {
    const label = host.slice(0, -'.local'.length);
    const rest = label.startsWith(names.mdnsHost) ? label.slice(names.mdnsHost.length) : undefined;
    if (rest !== undefined && /^(-web)?(-\d{1,3})?$/.test(rest)) return true;
  }
  return machine.hosts.has(host) || names.extra.includes(host);
}

/**
 * The allow-list the server uses: hostAllowed against the machine's names, read at start and again when a Host is
 * refused (the host name or an address may have changed since; at most once per REREAD_MS).
 */
export class HostAllowList {
  private machine: MachineNames;
  private readAt: number;

  constructor(
    readonly names: HostNames,
    private readonly now: () => number = monotonicMs,
  ) {
    this.machine = readMachine(names.machine ?? OS_MACHINE);
    this.readAt = now();
  }

  allows(header: string): boolean {
    let allowed = hostAllowed(header, this.names, this.machine);
    if (!allowed && this.now() - this.readAt >= REREAD_MS) {
      this.reread();
      allowed = hostAllowed(header, this.names, this.machine);
    }
    return allowed;
  }

  /** The names to offer a client that used another, best first: the mDNS name, the host name, addresses, added names. */
  offered(): string[] {
    const { mdnsHost, mdnsAnnounced, extra } = this.names;
    const hosts = [...this.machine.hosts].filter((host) => host.endsWith('.local'));
    return [
      ...new Set([
        ...(mdnsHost && mdnsAnnounced ? [`${mdnsHost}.local`] : []),
        ...hosts,
        ...this.machine.addresses,
        ...extra,
      ]),
    ];
  }

  /** The 421 for a refused header: problem details, and a page for a browser (misdirectedPage). */
  refusal(header: string): Misdirected {
    return new Misdirected(header, this.offered());
  }

  private reread(): void {
    this.machine = readMachine(this.names.machine ?? OS_MACHINE);
    this.readAt = this.now();
  }
}

/** The host of a Host header, lower-cased, without port and trailing dot; undefined when it is not one. */
function hostPart(header: string): string | undefined {
  let host = header.trim().toLowerCase();
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    if (close < 0) return undefined;
    const port = host.slice(close + 1);
    if (port !== '' && !/^:\d{1,5}$/.test(port)) return undefined;
    return host.slice(0, close + 1);
  }
  const colon = host.lastIndexOf(':');
  if (colon >= 0) {
    if (!/^\d{1,5}$/.test(host.slice(colon + 1))) return undefined;
    host = host.slice(0, colon);
  }
  if (host.endsWith('.')) host = host.slice(0, -1);
  return host;
}

/** The port of a Host header (`:8080`), or '' when it has none or is not one. */
function portPart(header: string): string {
  const port = /:(\d{1,5})$/.exec(header.trim());
  return port && hostPart(header) !== undefined ? `:${port[1]}` : '';
}

const HOW_TO_ADD = '--allowed-host NAME, AZC_ALLOWED_HOSTS=NAME,NAME or the config file';

/** 421: the request reached this appliance under a name it does not answer to. */
export class Misdirected extends HttpError {
  constructor(
    readonly header: string,
    /** The names it does answer to, best first (HostAllowList.offered). */
    readonly offered: readonly string[],
  ) {
    const names = [...(offered.length > 0 ? offered : ['its IP address']), 'localhost'].join(', ');
    super(
      421,
      `this appliance does not answer to the host name ${JSON.stringify(shorten(header))}: open it by ${names}; ` +
        `if the name is yours (a DNS name of the appliance, a reverse proxy in front of it), add it to "allowedHosts" (${HOW_TO_ADD}) and restart azcd`,
    );
  }
}

/** The refusal as a problem, for callers that only have the names (tests, tools). */
export function misdirected(header: string, names: HostNames): Misdirected {
  return new HostAllowList(names).refusal(header);
}

const shorten = (text: string) => (text.length > 80 ? `${text.slice(0, 77)}...` : text);
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const html = (text: string) => text.replace(/[&<>"']/g, (ch) => ENTITIES[ch]!);

/**
 * Whether a client would rather read HTML than JSON: a browser opening a page sends
 * `Accept: text/html,…,*\/*;q=0.8`; fetch(), curl and API clients send JSON, `*\/*` or nothing.
 */
export function prefersHtml(accept: string): boolean {
  const quality = (type: string): number => {
    let best = -1;
    let q = 0;
    for (const range of accept.toLowerCase().split(',')) {
      const [media = '', ...params] = range.split(';').map((part) => part.trim());
      const specificity = media === type ? 2 : media === `${type.split('/')[0]}/*` ? 1 : media === '*/*' ? 0 : -1;
      if (specificity <= best) continue;
      best = specificity;
      const given = params.find((param) => param.startsWith('q='));
      q = given ? Number(given.slice(2)) || 0 : 1;
    }
    return q;
  };
  const htmlQ = quality('text/html');
  return htmlQ > 0 && htmlQ > Math.max(quality('application/json'), quality('application/problem+json'));
}

/**
 * The refusal as a page a person can act on: which names to open the appliance by (links, on the port the browser
 * used) and how to add the one they typed. No script, nothing loaded from anywhere, every value escaped.
 */
export function misdirectedPage(error: Misdirected): string {
  const port = portPart(error.header);
  const typed = html(shorten(hostPart(error.header) ?? error.header));
  const links =
    error.offered.map((name) => `<li><a href="http://${html(name)}${port}/">${html(name)}${port}</a></li>`).join('') ||
    '<li>its IP address on your network</li>';
  return `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Open the appliance by its own name</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}code{background:#eee;padding:0 .2em;overflow-wrap:anywhere}</style>
<h1>This appliance does not answer to “${typed}”</h1>
<p>It answers only to its own names, so that a web site cannot reach it through a name of its own. Open it by one of these:</p>
<ul>${links}</ul>
<p>On the appliance itself, <code>localhost</code> works too.</p>
<p>If “${typed}” is yours (a DNS name of the appliance, a reverse proxy in front of it), add it to the names azcd answers to and
restart it: <code>--allowed-host ${typed}</code>, <code>AZC_ALLOWED_HOSTS=${typed}</code>, or <code>"allowedHosts": ["${typed}"]</code>
in its config file.</p>
</html>
`;
}
