// mDNS / DNS-SD announcer: advertises azcd as _azc._tcp and its dashboard as _http._tcp with @homebridge/ciao.

import { readdirSync, readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import ciaoModule, { type CiaoService, type Responder } from '@homebridge/ciao';
import { mdnsHostname } from './mdns-hostname.js';

// ciao is CommonJS (its default export is `exports.default`). The daemon's bundle holds it in this module's chunk,
// loaded only with mDNS on: node neither reads its ~40 modules with its export lexer nor resolves them one by one
// (scripts/bundle.mjs).
const ciao = ciaoModule.default;

export { mdnsHostname };

/** Our own DNS-SD service type (RFC 6763 §7: at most 15 characters); `_http._tcp` is announced beside it. */
export const AZC_SERVICE_TYPE = 'azc';

export type MdnsLogLevel = 'debug' | 'info' | 'warn' | 'error';
export type MdnsLog = (level: MdnsLogLevel, msg: string, fields?: Record<string, unknown>) => void;

export interface MdnsAnnouncerOptions {
  /** `uuid:<uuid>`, the same device id SSDP announces. */
  udn: string;
  /** Service instance name shown by browsers (the friendly name); a taken one becomes "name (2)". */
  name: string;
  /** The HTTP listener: port, and the address it is bound to (`0.0.0.0` or `::` for every address). */
  port: number;
  host: string;
  /** Interface names, as for SSDP (`['eth0']`). Default: every interface ciao considers usable. */
  interfaces?: string[];
  version: string;
  /** Base path of the API. */
  apiPath?: string;
  log?: MdnsLog;
}

/** The TXT record of both services; DNS-SD keys are short and lower-case (RFC 6763 §6.4). */
export function txtRecord(
  options: Pick<MdnsAnnouncerOptions, 'udn' | 'version' | 'apiPath' | 'port'>,
  hostname: string,
): Record<string, string> {
  return {
    api: options.apiPath ?? '/api',
    version: options.version,
    id: options.udn,
    // The mDNS host name resolves to this appliance's address on whichever network the browser is on.
    url: `http://${hostname}.local:${options.port}/`,
  };
}

export class MdnsAnnouncer {
  private responder: Responder | undefined;
  private services: CiaoService[] = [];
  private advertising: Promise<void> | undefined;
  private readonly log: MdnsLog;
  readonly hostname: string;

  constructor(private readonly options: MdnsAnnouncerOptions) {
    if (!/^uuid:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(options.udn)) {
      throw new Error(`mDNS "udn" must be uuid:<uuid>, got ${JSON.stringify(options.udn)}`);
    }
    this.log =
      options.log ??
      (() => {
        // No logger given (tests): nothing to say.
      });
    this.hostname = mdnsHostname(options.udn);
  }

  /** The instance names as announced (after any conflict renaming), for logs and tests. */
  get names(): string[] {
    return this.services.map((s) => s.getFQDN());
  }

  /** The host names as announced (after any conflict renaming), without the root label's dot. */
  get hostnames(): string[] {
    return this.services.map((s) => s.getHostname().replace(/\.$/, ''));
  }

  /**
   * Probes the names and announces both services; resolves when they are announced. Never throws: a failure is
   * logged and the daemon runs on without mDNS.
   */
  start(): Promise<void> {
    if (this.advertising) return this.advertising;
    const { options } = this;
    const wildcard = options.host === '0.0.0.0' || options.host === '::';
    let services: CiaoService[];
    try {
      this.responder = ciao.getResponder({
        interface: options.interfaces && options.interfaces.length > 0 ? options.interfaces : networkLinks(),
        // A listener on an IPv4 address cannot be reached over IPv6: announce no AAAA records then.
        disableIpv6: !options.host.includes(':'),
      });
      const base = {
        name: options.name,
        port: options.port,
        hostname: this.hostname,
        // Bound to one address: announce only that one.
        restrictedAddresses: wildcard ? undefined : [options.host],
      };
      const txt = txtRecord(options, this.hostname);
      services = [
        this.responder.createService({ ...base, type: AZC_SERVICE_TYPE, txt }),
        // ciao lets no two services of one responder share a host name (it renames the second), hence `-web`.
        this.responder.createService({
          ...base,
          hostname: `${this.hostname}-web`,
          type: 'http',
          txt: { ...txt, path: '/' },
        }),
      ];
    } catch (err) {
      this.log('error', 'mDNS could not start; running without it', { error: (err as Error).message });
      this.advertising = Promise.resolve();
      return this.advertising;
    }
    this.services = services;
    watchHostConflicts(this.responder);
    for (const service of services) numberHostOnItsOwnConflict(service, this.responder);
    let renamed = false;
    for (const service of services) {
      service.on('name-change', () => {
        // The dashboard URL names the host this service now announces (renamed only when it was taken: azc-5f0c1a52-2).
        const hostname = service
          .getHostname()
          .replace(/\.$/, '')
          .replace(/\.local$/, '');
        service.updateTxt(
          { ...txtRecord(options, hostname), ...(service.getTypePTR().startsWith('_http.') ? { path: '/' } : {}) },
          true,
        );
        renamed = true;
      });
    }
    this.advertising = Promise.all(services.map((s) => s.advertise())).then(
      () => {
        // Once for both services, with the names and hosts as announced: the rename is part of the one line.
        const announced = { names: this.names, hostnames: this.hostnames, port: options.port };
        if (renamed)
          this.log('warn', 'mDNS name already taken on the network; announcing under another', {
            wanted: options.name,
            ...announced,
          });
        else this.log('info', 'mDNS announcing', announced);
      },
      (err: Error) => {
        // stop() during probing cancels it; anything else means no announcement.
        if (this.responder) this.log('error', 'mDNS announcement failed; running without it', { error: err.message });
      },
    );
    return this.advertising;
  }

  /** Sends the goodbye (records with TTL 0) for every announced service, then closes the sockets. */
  async stop(): Promise<void> {
    const { responder, services } = this;
    if (!responder) return;
    this.responder = undefined;
    this.services = [];
    await Promise.allSettled(services.map((s) => s.destroy()));
    await responder.shutdown();
    await this.advertising;
    this.advertising = undefined;
    this.log('info', 'mDNS stopped after goodbye');
  }
}

/**
 * Every network link but loopback, named once at start (Linux; undefined elsewhere, to let ciao look). Without a list,
 * ciao finds the links again every 15 s by running `ip -o link show` through a shell: two processes started four
 * times a minute on an idle appliance. With it, ciao still follows the addresses of these links as they come and go
 * (Wi-Fi joining late); a link that appears after start (a USB adapter plugged in) is announced on after a restart.
 * ciao adds the loopback link to a list and fails without one that has an address: then it is left to look.
 */
export function networkLinks(dir = '/sys/class/net', addresses = networkInterfaces()): string[] | undefined {
  const IFF_LOOPBACK = 0x8;
  if (!Object.values(addresses).some((list) => list?.some((address) => address.internal))) return undefined;
  try {
    const links = readdirSync(dir).filter(
      (name) => (Number(readFileSync(`${dir}/${name}/flags`, 'utf8').trim()) & IFF_LOOPBACK) === 0,
    );
    return links.length > 0 ? links : undefined;
  } catch {
    return undefined;
  }
}

/** The service whose host name the response ciao's responder is handling names; set only while it handles it. */
let hostNamedBy: CiaoService | undefined;
const watched = new WeakSet<Responder>();

/** What the watch reads of a response's records (ciao's DNSPacket keeps them in Maps). */
type Records = { values(): Iterable<{ getLowerCasedName(): string }> };

/**
 * ciao renames a service's instance and host together on any conflict, without saying which name was taken. Its
 * responder hands every response to the prober of the service it is probing, which renames the service from inside
 * that call when a record there names either name: the names in the response are looked at first, so the rename
 * knows whether the host name was one of them.
 */
function watchHostConflicts(responder: Responder): void {
  if (watched.has(responder)) return;
  watched.add(responder);
  const internals = responder as unknown as {
    handleResponse(packet: { answers: Records; additionals: Records }, endpoint: unknown): void;
    currentProber?: { getService(): CiaoService };
  };
  const handle = internals.handleResponse.bind(responder);
  internals.handleResponse = (packet, endpoint) => {
    const service = internals.currentProber?.getService();
    const host = service?.getLowerCasedHostname();
    const named = (records: Records) => [...records.values()].some((record) => record.getLowerCasedName() === host);
    hostNamedBy = service && (named(packet.answers) || named(packet.additionals)) ? service : undefined;
    try {
      handle(packet, endpoint);
    } finally {
      hostNamedBy = undefined;
    }
  };
}

/**
 * A name conflict makes ciao number the instance ("Kitchen (2)", RFC 6762 §9) and the host with it, as
 * `azc-5f0c1a52-(2).local`. Two appliances of one friendly name conflict only on the instance, and the host name is
 * the stable one the docs, the TXT `url` and the Host refusal page cite: it keeps its name then. Only when the host
 * name itself is taken (an appliance whose state was copied, with its device id) is it numbered, as a valid host
 * label (`azc-5f0c1a52-2.local`: parentheses are not allowed in a host name, RFC 952/1123), before it is probed and
 * announced. incrementName, handleResponse, currentProber and the fields they set are ciao's own (1.3.12, pinned);
 * mdns.test.ts fails if they change.
 */
function numberHostOnItsOwnConflict(service: CiaoService, responder: Responder): void {
  const internals = service as unknown as {
    incrementName(nameCheckOnly?: boolean): void;
    rebuildServiceRecords(): void;
    hostname: string;
    loweredHostname: string;
  };
  const increment = internals.incrementName.bind(service);
  const [, base, tld] = /^(.*)(\.[^.]+\.)$/.exec(service.getHostname())!;
  let number = 1;
  internals.incrementName = (nameCheckOnly?: boolean) => {
    const hostTaken = !nameCheckOnly && (hostNamedBy === service || takenLocally(service, responder));
    increment(nameCheckOnly);
    if (hostTaken) number++;
    internals.hostname = number === 1 ? `${base}${tld}` : `${base}-${number}${tld}`;
    internals.loweredHostname = internals.hostname.toLowerCase();
    if (!nameCheckOnly) internals.rebuildServiceRecords();
  };
}

/** Whether another service of this responder announces the service's host name (ciao's local conflict). */
function takenLocally(service: CiaoService, responder: Responder): boolean {
  const host = service.getLowerCasedHostname();
  for (const other of (
    responder as unknown as { getAnnouncedServices(): Iterable<CiaoService> }
  ).getAnnouncedServices()) {
    if (other !== service && other.getLowerCasedHostname() === host) return true;
  }
  return false;
}
