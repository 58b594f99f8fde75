// Child of mdns.test.ts, in a test-made network namespace: `announce` is one appliance, `daemon` a whole azcd (end of
// stdin = stop), `browse` a DNS-SD browser (stdin: `browse <type>`, `resolve <host>`, `goodbye <type> <instance>`).
// JSON lines on stdout.

import { rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { DNSPacket, PacketType, QType, RType } from '@homebridge/ciao/lib/coder/DNSPacket.js';
import { Question } from '@homebridge/ciao/lib/coder/Question.js';
import type { ARecord } from '@homebridge/ciao/lib/coder/records/ARecord.js';
import type { PTRRecord } from '@homebridge/ciao/lib/coder/records/PTRRecord.js';
import type { SRVRecord } from '@homebridge/ciao/lib/coder/records/SRVRecord.js';
import type { TXTRecord } from '@homebridge/ciao/lib/coder/records/TXTRecord.js';
import { MdnsAnnouncer } from '../../daemon/discovery/mdns.js';
import { startDaemon, tempDir } from '../helpers/daemon.js';
import { bindUdp, closeUdp } from '../helpers/sockets.js';
import { Changes, waitFor } from '../helpers/wait-for.js';

const GROUP = '224.0.0.251';
const PORT = 5353;
const WAIT_MS = 10_000;
const [mode = '', configText = '{}'] = process.argv.slice(2);
/** Names without the root label's trailing dot, as avahi-browse prints them. */
const plain = (name: string) => name.replace(/\.$/, '');
const say = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

async function announce(): Promise<void> {
  const config = JSON.parse(configText) as { udn: string; name: string; port: number };
  const logs: string[] = [];
  const announcer = new MdnsAnnouncer({
    udn: config.udn,
    name: config.name,
    port: config.port,
    host: '0.0.0.0',
    version: '0.1.0',
    log: (level, msg, fields) =>
      logs.push(
        `${level}: ${msg}${fields?.['hostnames'] ? ` ${JSON.stringify({ names: fields['names'], hostnames: fields['hostnames'] })}` : ''}`,
      ),
  });
  await announcer.start();
  say({ ready: true, names: announcer.names.map((n) => n.replace(/\.$/, '')), logs });
  process.stdin.resume();
  await new Promise((resolve) => process.stdin.once('end', resolve));
  await announcer.stop();
  say({ stopped: true, logs });
}

/** A whole daemon with discovery on (SSDP and mDNS), listening on every address of this namespace. */
async function daemon(): Promise<void> {
  const stateDir = tempDir('azc-mdns-daemon-');
  try {
    const d = await startDaemon({
      stateDir,
      config: { ssdp: true, host: '0.0.0.0', friendlyName: 'Living Room', logLevel: 'warn' },
    });
    say({ ready: true, udn: d.daemon.services.udn, port: Number(new URL(d.base).port) });
    process.stdin.resume();
    await new Promise((resolve) => process.stdin.once('end', resolve));
    await d.stop();
    say({ stopped: true });
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
  process.exit(0); // node-ssdp's first-announce timer cannot be cancelled
}

interface Instance {
  name: string;
  target?: string;
  port?: number;
  txt?: Record<string, string>;
  addresses: string[];
}

async function browse(): Promise<void> {
  const socket = await bindUdp('0.0.0.0', PORT, { reuseAddr: true });
  socket.addMembership(GROUP);
  const changes = new Changes();
  const ptrs = new Map<string, Set<string>>(); // service type → instance names announced alive
  const goodbyes = new Map<string, Set<string>>(); // service type → instance names said goodbye (TTL 0)
  const instances = new Map<string, Instance>();
  const hosts = new Map<string, string[]>();
  socket.on('message', (message, rinfo) => {
    let packet: DNSPacket;
    try {
      packet = DNSPacket.decode({ address: rinfo.address, port: rinfo.port, family: 'ipv4' } as never, message);
    } catch {
      return;
    }
    if (packet.type !== PacketType.RESPONSE) return;
    for (const record of [...packet.answers.values(), ...packet.additionals.values()]) {
      const name = plain(record.name).toLowerCase();
      if (record.type === RType.PTR) {
        const ptrName = plain((record as PTRRecord).ptrName);
        const into = record.ttl === 0 ? goodbyes : ptrs;
        if (!into.has(name)) into.set(name, new Set());
        into.get(name)!.add(ptrName);
      } else if (record.type === RType.SRV) {
        const srv = record as SRVRecord;
        const instance = instances.get(name) ?? { name: plain(record.name), addresses: [] };
        instances.set(name, { ...instance, target: plain(srv.hostname), port: srv.port });
      } else if (record.type === RType.TXT) {
        const txt: Record<string, string> = {};
        for (const entry of (record as TXTRecord).txt) {
          const text = entry.toString('utf8');
          const eq = text.indexOf('=');
          if (eq > 0) txt[text.slice(0, eq)] = text.slice(eq + 1);
        }
        const instance = instances.get(name) ?? { name: plain(record.name), addresses: [] };
        instances.set(name, { ...instance, txt });
      } else if (record.type === RType.A) {
        const list = hosts.get(name) ?? [];
        if (!list.includes((record as ARecord).ipAddress)) list.push((record as ARecord).ipAddress);
        hosts.set(name, list);
      }
    }
    changes.notify();
  });
  say({ listening: true });

  const query = (name: string, type = QType.PTR) => {
    const packet = DNSPacket.createDNSQueryPacket({ questions: [new Question(name, type)] });
    socket.send(packet.encode(), PORT, GROUP);
  };
  /**
   * Asks, then asks again after 1 s, 2 s, 4 s… until `answered` resolves, as a browser does (RFC 6762 §5.2): a
   * responder still probing its names (Avahi registering a service it was just given) answers only a later question.
   */
  const ask = async (name: string, type: QType, answered: Promise<unknown>) => {
    let interval = 1000;
    let timer: NodeJS.Timeout | undefined;
    const again = () => {
      query(name, type);
      timer = setTimeout(again, interval);
      interval *= 2;
    };
    again();
    try {
      await answered;
    } finally {
      clearTimeout(timer);
    }
  };

  for await (const line of createInterface({ input: process.stdin })) {
    const [command = '', type = ''] = line.split(' ');
    const key = type.toLowerCase();
    if (command === 'browse') {
      // Like avahi-browse -r: ask for the type, then wait for every instance's SRV, TXT and address.
      const complete = () => {
        const names = [...(ptrs.get(key) ?? [])];
        return (
          names.length > 0 &&
          names.every((n) => {
            const i = instances.get(n.toLowerCase());
            return i?.txt && i.target && hosts.has(i.target.toLowerCase());
          })
        );
      };
      const found = waitFor(complete, WAIT_MS, { what: `instances of ${type} with SRV, TXT and A`, changes });
      await ask(type, QType.PTR, found).catch((err: Error) => {
        const seen = {
          ptrs: [...ptrs].map(([k, v]) => [k, [...v]]),
          instances: [...instances.values()],
          hosts: [...hosts],
        };
        throw new Error(`${err.message}; seen: ${JSON.stringify(seen)}`);
      });
      say({
        found: [...ptrs.get(key)!].sort().map((n) => {
          const i = instances.get(n.toLowerCase())!;
          return { ...i, addresses: hosts.get(i.target!.toLowerCase()) };
        }),
      });
    } else if (command === 'resolve') {
      // `resolve <host>`: asks for the host's address, forgetting any an earlier answer gave, and waits for one.
      hosts.delete(key);
      await ask(
        type,
        QType.A,
        waitFor(() => hosts.has(key), WAIT_MS, { what: `the address of ${type}`, changes }),
      );
      say({ resolved: type, addresses: hosts.get(key) });
    } else if (command === 'goodbye') {
      // `goodbye <type> <instance name>`: waits for that instance's PTR with TTL 0.
      const instance = line.split(' ').slice(2).join(' ');
      await waitFor(() => goodbyes.get(key)?.has(instance) === true, WAIT_MS, {
        what: `goodbye for ${instance}`,
        changes,
      });
      say({
        goodbye: instance,
        stillAlive: [...(ptrs.get(key) ?? [])].filter((n) => !goodbyes.get(key)?.has(n)).sort(),
      });
    }
  }
  await closeUdp(socket);
}

try {
  if (mode === 'announce') await announce();
  else if (mode === 'browse') await browse();
  else if (mode === 'daemon') await daemon();
  else throw new Error(`unknown mode ${mode}`);
} catch (err) {
  say({ error: (err as Error).message });
  process.exit(1); // sockets may still be open
}
