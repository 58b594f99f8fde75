// The Host allow-list: requests are answered only under names that lead to this appliance, so a page on another
// site cannot read the API from a LAN browser by pointing its own DNS name at the appliance (DNS rebinding).
import { isIP } from 'node:net';
import { HttpError } from './problem.js';

export interface HostNames {
  /** The appliance's mDNS host name without `.local` (`azc-1a2b3c4d`); every name it announces starts with it. */
  mdnsHost?: string;
  /** Names the owner added (`allowedHosts`): a reverse proxy's, a DNS name of the appliance. */
  extra: readonly string[];
}

/**
 * Whether a Host header names this appliance: an IP literal (v4, or v6 in brackets), `localhost`, the mDNS names
 * and the forms a name conflict gives them (`azc-…-web.local`, `azc-…-2.local`, `azc-…-web-2.local`: mdns.ts keeps
 * them valid host labels), or an added name; with or without a port and a trailing dot, in any letter case. No Host
 * at all (HTTP/1.0) is no rebinding: browsers always send one.
 */
export function hostAllowed(header: string, names: HostNames): boolean {
  if (header === '') return true;
  const host = hostPart(header);
  if (host === undefined) return false;
  if (host.startsWith('[')) return host.endsWith(']') && isIP(host.slice(1, -1)) === 6;
  if (isIP(host) === 4 || host === 'localhost') return true;
  if (names.mdnsHost && host.endsWith('.local')) {
    const label = host.slice(0, -'.local'.length);
    const rest = label.startsWith(names.mdnsHost) ? label.slice(names.mdnsHost.length) : undefined;
    if (rest !== undefined && /^(-web)?(-\d{1,3})?$/.test(rest)) return true;
  }
  return names.extra.includes(host);
}

/**
 * hostAllowed for one set of names, remembering the last header it allowed: a client sends the same Host on every
 * request, and the check builds several strings and runs two patterns for it.
 */
export function hostChecker(names: HostNames): (header: string) => boolean {
  let lastAllowed: string | undefined;
  return (header) => {
    if (header === lastAllowed) return true;
    const allowed = hostAllowed(header, names);
    if (allowed) lastAllowed = header;
    return allowed;
  };
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

/** 421: the request reached this appliance under a name it does not answer to. */
export function misdirected(header: string, names: HostNames): HttpError {
  const shown = JSON.stringify(header.length > 80 ? `${header.slice(0, 77)}...` : header);
  const mdns = names.mdnsHost ? `, ${names.mdnsHost}.local` : '';
  return new HttpError(
    421,
    `this appliance does not answer to the host name ${shown}: open it by its IP address, localhost${mdns}; ` +
      'if the name is yours (a DNS name of the appliance, a reverse proxy in front of it), add it to "allowedHosts" ' +
      '(--allowed-host NAME, AZC_ALLOWED_HOSTS=NAME,NAME or the config file) and restart azcd',
  );
}
