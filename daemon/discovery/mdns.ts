// mDNS / DNS-SD announcer: advertises azcd as _azc._tcp and its dashboard as _http._tcp with @homebridge/ciao.
import ciao, { type CiaoService, type Responder } from '@homebridge/ciao';
import { mdnsHostname } from './mdns-hostname.js';

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
export function txtRecord(options: Pick<MdnsAnnouncerOptions, 'udn' | 'version' | 'apiPath' | 'port'>, hostname: string): Record<string, string> {
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
    this.log = options.log ?? (() => {});
    this.hostname = mdnsHostname(options.udn);
  }

  /** The instance names as announced (after any conflict renaming), for logs and tests. */
  get names(): string[] {
    return this.services.map((s) => s.getFQDN());
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
        interface: options.interfaces && options.interfaces.length > 0 ? options.interfaces : undefined,
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
        this.responder.createService({ ...base, hostname: `${this.hostname}-web`, type: 'http', txt: { ...txt, path: '/' } }),
      ];
    } catch (err) {
      this.log('error', 'mDNS could not start; running without it', { error: (err as Error).message });
      this.advertising = Promise.resolve();
      return this.advertising;
    }
    this.services = services;
    for (const service of services) {
      service.on('name-change', (name: string) => {
        // ciao renames the host with the instance ("azc-5f0c1a52-(2)"): keep the dashboard URL on the host it announces.
        const hostname = service.getHostname().replace(/\.$/, '').replace(/\.local$/, '');
        service.updateTxt({ ...txtRecord(options, hostname), ...(service.getTypePTR().startsWith('_http.') ? { path: '/' } : {}) }, true);
        this.log('warn', 'mDNS name already taken on the network; announcing under another', { wanted: options.name, name });
      });
    }
    this.advertising = Promise.all(services.map((s) => s.advertise())).then(
      () => this.log('info', 'mDNS announcing', { names: this.names, hostname: `${this.hostname}.local`, port: options.port }),
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
