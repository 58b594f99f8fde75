// Types for the parts of node-ssdp 4.0.1 (CommonJS, ships no types) that daemon/discovery/ssdp.ts uses.
declare module 'node-ssdp' {
  import type { Socket } from 'node:dgram';
  import { EventEmitter } from 'node:events';

  export type SsdpHeaders = Record<string, string>;

  export interface SsdpOptions {
    /** Unique device name, `uuid:...`; the library default is one fixed uuid shared by every installation. */
    udn?: string;
    /** A URL, or {protocol, port, path}: then each socket sends `protocol + its own IPv4 + ':' + port + path`. */
    location?: string | (() => string) | { protocol?: string; port: number; path: string };
    /** SERVER header of responses and NOTIFY alive. */
    ssdpSig?: string;
    ssdpIp?: string;
    ssdpPort?: number;
    /** IP multicast TTL of outgoing packets (default 4). */
    ssdpTtl?: number;
    /** CACHE-CONTROL max-age (seconds) of M-SEARCH responses, NOT a packet TTL (default 1800). */
    ttl?: number;
    /** Re-advertisement period in ms (default 10000). */
    adInterval?: number;
    /** Port each socket binds; a server defaults to 1900. */
    sourcePort?: number;
    /** Bind each socket to its interface address instead of 0.0.0.0. */
    explicitSocketBind?: boolean;
    /** Interface names to use; the library still skips internal ones such as `lo`. */
    interfaces?: string[];
    reuseAddr?: boolean;
    /** Extra headers merged into every NOTIFY and M-SEARCH response (after the library's own). */
    headers?: SsdpHeaders;
    allowWildcards?: boolean;
    suppressRootDeviceAdvertisements?: boolean;
    customLogger?: (format: string, ...args: unknown[]) => void;
  }

  export class Server extends EventEmitter {
    constructor(options?: SsdpOptions);
    /** Sockets keyed by the IPv4 address they serve; created on start() only when still unset. */
    sockets: Record<string, Socket> | null;
    addUSN(deviceType: string): void;
    /** NT → USN of everything advertised and answered (addUSN fills it with this server's UDN only). */
    _usns: Record<string, string>;
    /** Binds the sockets; resolves once every socket is listening (never, if a bind fails). */
    start(): Promise<void>;
    /** Sends byebye and closes the sockets at once, so that byebye is usually lost. */
    stop(): void;
    advertise(alive?: boolean): void;
  }

  export class Client extends EventEmitter {
    constructor(options?: SsdpOptions);
    start(): Promise<void>;
    stop(): void;
    search(serviceType: string): void;
  }

  const nodeSsdp: { Server: typeof Server; Client: typeof Client };
  export default nodeSsdp;
}
