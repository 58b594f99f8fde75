// SSDP announcer: advertises azcd as its description declares it (root Basic:1 device, embedded controller) with
// node-ssdp, on chosen interfaces only.
import dgram, { type Socket } from 'node:dgram';
import { networkInterfaces, type as osType, release } from 'node:os';
// node-ssdp is CommonJS: its default import is its module.exports. The daemon's bundle holds it in this module's
// chunk, loaded only with SSDP on (scripts/bundle.mjs).
import nodeSsdp from 'node-ssdp';
import { advertisements, normalizeUdn } from './description.js';

export { AZC_DEVICE_TYPE, UPNP_BASIC_DEVICE_TYPE } from './description.js';

export type SsdpLogLevel = 'debug' | 'info' | 'warn' | 'error';
export type SsdpLog = (level: SsdpLogLevel, msg: string, fields?: Record<string, unknown>) => void;

export interface SsdpAnnouncerOptions {
  /** `uuid:<uuid>` or a bare uuid, generated once and kept in the database. */
  udn: string;
  /**
   * URL of /description.xml. With host `0.0.0.0` (the daemon's wildcard bind) every interface advertises its own
   * IPv4 address instead, e.g. `http://0.0.0.0:8080/description.xml` becomes `http://192.168.1.20:8080/...` on eth0.
   */
  location: string;
  /**
   * Interface names (`['eth0']`, `['wlan0']`). Default: every non-internal interface with an IPv4 address. Unlike
   * node-ssdp's own `interfaces` option, a named internal interface is honoured: `['lo']` keeps SSDP on loopback.
   */
  interfaces?: string[];
  /** CACHE-CONTROL max-age in seconds (UPnP asks for at least 1800); re-announced every third of it. */
  maxAgeS?: number;
  /** Product version in the SERVER header. */
  version?: string;
  /** SSDP port, 1900 unless a test needs another one. */
  port?: number;
  /**
   * Bind each socket to its interface address rather than 0.0.0.0. That keeps even the listening side off other
   * interfaces, but a socket bound to a unicast address never receives datagrams sent to the multicast group, so
   * the device then answers unicast M-SEARCH only. Default false.
   */
  bindToInterfaceAddress?: boolean;
  log?: SsdpLog;
}

export interface SsdpTarget {
  name: string;
  address: string;
  netmask: string;
}

const SSDP_GROUP = '239.255.255.250';
const SSDP_PORT = 1900;
const DEFAULT_MAX_AGE_S = 1800;
/** UPnP DA 1.1 §1.1.2: a multicast TTL of 2 by default; the appliance is for the local network. */
const MULTICAST_TTL = 2;
/** Longest wait for byebye datagrams to leave before the sockets close: node-ssdp's stop() right after
 * advertise(false) closes them before the byebye is sent. */
const BYEBYE_DRAIN_MS = 300;
const BIND_TIMEOUT_MS = 5000;
/** Identical answers to one peer within this window are one answer received by several of our sockets. */
const DUPLICATE_ANSWER_MS = 100;

/** IPv4 addresses to announce on: the named interfaces (internal ones included), or all external ones. */
export function selectInterfaces(
  names: readonly string[] | undefined,
  available: ReturnType<typeof networkInterfaces> = networkInterfaces(),
): { targets: SsdpTarget[]; missing: string[] } {
  const targets: SsdpTarget[] = [];
  const missing: string[] = [];
  const wanted = names && names.length > 0 ? names : undefined;
  for (const name of wanted ?? Object.keys(available)) {
    const ipv4 = (available[name] ?? []).filter((a) => a.family === 'IPv4' && (wanted !== undefined || !a.internal));
    if (ipv4.length === 0 && wanted) missing.push(name);
    for (const a of ipv4) {
      if (!targets.some((t) => t.address === a.address)) targets.push({ name, address: a.address, netmask: a.netmask });
    }
  }
  return { targets, missing };
}

function ipv4ToInt(address: string): number | undefined {
  const parts = address.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) return undefined;
  return parts.reduce((n, p) => n * 256 + p, 0);
}

/**
 * The target whose subnet holds `peer` (else the first): the one socket that answers a unicast M-SEARCH, so the
 * LOCATION a client gets is an address on its own network.
 */
export function answeringTarget(peer: string, targets: readonly SsdpTarget[]): SsdpTarget | undefined {
  const p = ipv4ToInt(peer);
  const inSubnet = (t: SsdpTarget) => {
    const a = ipv4ToInt(t.address);
    const m = ipv4ToInt(t.netmask);
    if (p === undefined || a === undefined || m === undefined) return false;
    const block = 2 ** 32 - m; // addresses per network, for a contiguous mask
    return p - (p % block) === a - (a % block);
  };
  return targets.find(inSubnet) ?? targets[0];
}

/**
 * Shared state of one start()'s sockets: what they still have to send (so stop() can wait for its byebye instead of
 * guessing) and what they answered lately. node-ssdp answers an M-SEARCH through every socket, and with several
 * interfaces every socket bound to 0.0.0.0:1900 receives each M-SEARCH (Linux IP_MULTICAST_ALL): without this,
 * N interfaces would send N*N answers, N-1 of every N with an address from another network.
 */
class SocketGroup {
  pending = 0;
  private waiters: Array<() => void> = [];
  private recentAnswers = new Map<string, number>();
  constructor(readonly targets: readonly SsdpTarget[]) {}

  /** False for an answer another socket sends instead, or one already sent a moment ago. */
  claimAnswer(from: SsdpTarget, peer: string, port: unknown, message: unknown): boolean {
    if (answeringTarget(peer, this.targets) !== from) return false;
    const now = Date.now();
    for (const [key, at] of this.recentAnswers) if (now - at > DUPLICATE_ANSWER_MS) this.recentAnswers.delete(key);
    const key = `${peer}:${String(port)}:${Buffer.isBuffer(message) ? message.toString('latin1') : String(message)}`;
    if (this.recentAnswers.has(key)) return false;
    this.recentAnswers.set(key, now);
    return true;
  }

  sent(): void {
    this.pending -= 1;
    if (this.pending <= 0) for (const wake of this.waiters.splice(0)) wake();
  }

  drained(maxMs: number): Promise<void> {
    if (this.pending <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, maxMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

type SendCallback = (error: Error | null, bytes: number) => void;

function closeQuietly(socket: Socket): void {
  try {
    socket.close();
  } catch {
    // already closed
  }
}

export class SsdpAnnouncer {
  private readonly udn: string;
  private readonly maxAgeS: number;
  private readonly port: number;
  private readonly log: SsdpLog;
  private server: InstanceType<typeof nodeSsdp.Server> | undefined;
  private group = new SocketGroup([]);
  private starting: Promise<void> | undefined;

  constructor(private readonly options: SsdpAnnouncerOptions) {
    this.udn = normalizeUdn(options.udn);
    if (!/^uuid:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(this.udn)) {
      throw new Error(`SSDP "udn" must be a uuid, got ${JSON.stringify(options.udn)}`);
    }
    this.maxAgeS = options.maxAgeS ?? DEFAULT_MAX_AGE_S;
    if (!Number.isInteger(this.maxAgeS) || this.maxAgeS < 2 || this.maxAgeS > 86400) {
      throw new Error(`SSDP "maxAgeS" must be an integer from 2 to 86400, got ${options.maxAgeS}`);
    }
    this.port = options.port ?? SSDP_PORT;
    this.log =
      options.log ??
      (() => {
        // No logger given (tests): nothing to say.
      });
    new URL(options.location); // throws early on a malformed LOCATION
  }

  /** Binds and announces. Never throws: a failure is logged and the daemon runs on without discovery. */
  start(): Promise<void> {
    this.starting ??= this.startOnce().finally(() => (this.starting = undefined));
    return this.starting;
  }

  /** Sends ssdp:byebye for every advertised type, waits for it to leave, then closes the sockets. */
  async stop(): Promise<void> {
    await this.starting;
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    // node-ssdp's stop() also sends byebye but closes the sockets in the same tick, so that copy is lost.
    server.advertise(false);
    await this.group.drained(BYEBYE_DRAIN_MS);
    server.stop();
    this.log('info', 'SSDP stopped after byebye', { udn: this.udn });
  }

  private async startOnce(): Promise<void> {
    if (this.server) return;
    const { targets, missing } = selectInterfaces(this.options.interfaces);
    if (missing.length > 0) this.log('warn', 'SSDP interfaces without an IPv4 address are skipped', { missing });
    if (targets.length === 0) {
      this.log('warn', 'SSDP announcements off: no usable IPv4 interface', { interfaces: this.options.interfaces });
      return;
    }
    const group = new SocketGroup(targets);
    const sockets: Record<string, Socket> = {};
    for (const target of targets) sockets[target.address] = this.createSocket(target, group);

    const server = new nodeSsdp.Server({
      udn: this.udn,
      location: this.locationOption(),
      ssdpSig: `${osType()}/${release().split('.').slice(0, 2).join('.')} UPnP/1.0 azcd/${this.options.version ?? 'dev'}`,
      ssdpPort: this.port,
      sourcePort: this.port,
      ssdpTtl: MULTICAST_TTL,
      ttl: this.maxAgeS,
      // node-ssdp hard-codes max-age=1800 in NOTIFY alive. Another max-age needs this extra header (merged last, so
      // it wins), which also lands in byebye, where receivers ignore it; the default sends no extra header at all.
      headers: this.maxAgeS === DEFAULT_MAX_AGE_S ? {} : { 'CACHE-CONTROL': `max-age=${this.maxAgeS}` },
      adInterval: Math.max(1000, Math.floor((this.maxAgeS * 1000) / 3)),
      explicitSocketBind: this.options.bindToInterfaceAddress ?? false,
      interfaces: [...new Set(targets.map((t) => t.name))],
      reuseAddr: true,
    });
    // node-ssdp creates sockets only when none are set, and would skip `lo` and crash on a failed group join.
    server.sockets = sockets;
    // What the description declares, the embedded controller included: addUSN() knows one UDN only, so the table of
    // NT → USN it keeps is filled directly (start() adds the root UDN's own entry the same way).
    for (const { nt, usn } of advertisements(this.udn)) server._usns[nt] = usn;

    try {
      await this.bind(server, Object.values(sockets));
    } catch (err) {
      for (const socket of Object.values(sockets)) closeQuietly(socket);
      this.log('error', 'SSDP could not start; running without discovery', { error: (err as Error).message });
      return;
    }
    this.server = server;
    this.group = group;
    server.advertise(); // node-ssdp sends its first NOTIFY after 3 s; announce at once and let that repeat it
    this.log('info', 'SSDP announcing', { udn: this.udn, targets, port: this.port, maxAgeS: this.maxAgeS });
  }

  private locationOption(): string | { protocol: string; port: number; path: string } {
    const url = new URL(this.options.location);
    if (url.hostname !== '0.0.0.0' && url.hostname !== '[::]') return url.href;
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    return { protocol: `${url.protocol}//`, port, path: `${url.pathname}${url.search}` };
  }

  private bind(server: InstanceType<typeof nodeSsdp.Server>, sockets: Socket[]): Promise<void> {
    // A bind error only reaches 'error' and node-ssdp's promise then never settles: race it.
    return new Promise((resolve, reject) => {
      const settle = (error?: Error) => {
        clearTimeout(timer);
        for (const socket of sockets) socket.off('error', settle);
        if (error) reject(error);
        else resolve();
      };
      const timer = setTimeout(() => settle(new Error(`not listening after ${BIND_TIMEOUT_MS} ms`)), BIND_TIMEOUT_MS);
      for (const socket of sockets) socket.once('error', settle);
      server.start().then(() => settle(), settle);
    });
  }

  /**
   * A socket for one interface address, fixing node-ssdp gaps on our own socket object: multicast leaves through
   * this interface (IP_MULTICAST_IF; node-ssdp never sets it, so all NOTIFYs would follow the default route); a
   * failed group join is logged instead of thrown from the 'listening' handler (which would crash the daemon), and
   * until a join succeeded no datagram goes to the group; an M-SEARCH answer leaves once, through the socket on the
   * asker's subnet (SocketGroup); sends are counted for stop().
   */
  private createSocket(target: SsdpTarget, group: SocketGroup): Socket {
    const socket = dgram.createSocket({ type: 'udp4', reuseAddr: true });
    socket.unref();
    let multicastReady = false;
    const join = socket.addMembership.bind(socket);
    socket.addMembership = (multicastGroup: string, _iface?: string) => {
      try {
        join(multicastGroup, target.address);
        socket.setMulticastInterface(target.address);
        multicastReady = true;
      } catch (err) {
        this.log('warn', 'SSDP cannot join the multicast group here; unicast M-SEARCH only', {
          ...target,
          error: (err as Error).message,
        });
      }
    };
    const send = socket.send.bind(socket) as (...args: unknown[]) => void;
    // node-ssdp calls send(buffer, offset, length, port, address, callback).
    (socket as unknown as { send: (...args: unknown[]) => void }).send = (...args: unknown[]) => {
      const callback = typeof args[args.length - 1] === 'function' ? (args.pop() as SendCallback) : undefined;
      const address = String(args[args.length - 1]);
      const skip =
        address === SSDP_GROUP ? !multicastReady : !group.claimAnswer(target, address, args[args.length - 2], args[0]);
      if (skip) {
        callback?.(null, 0);
        return;
      }
      group.pending += 1;
      try {
        send(...args, (error: Error | null, bytes: number) => {
          group.sent();
          callback?.(error, bytes);
        });
      } catch (err) {
        group.sent();
        callback?.(err as Error, 0);
      }
    };
    socket.on('error', (err) => this.log('warn', 'SSDP socket error', { ...target, error: err.message }));
    return socket;
  }
}
