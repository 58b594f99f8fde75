// Loopback ports and UDP sockets for tests: a free TCP or UDP port, a UDP socket bound (or the bind's error), closed.
import dgram, { type Socket } from 'node:dgram';
import net from 'node:net';
import { within } from './wait-for.js';

/**
 * A TCP port nobody listens on now: listened on at port 0 and let go. Something else may take it before the caller
 * does; the callers that cannot tolerate that retry.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const probe = net.createServer();
  await within(
    new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen(0, host, () => resolve());
    }),
    undefined,
    `a free TCP port on ${host}`,
  );
  const { port } = probe.address() as net.AddressInfo;
  await within(new Promise<void>((resolve) => probe.close(() => resolve())), undefined, 'the probe to close');
  return port;
}

/** A UDP socket bound to address:port; rejects with the bind's error (EADDRINUSE for a port held exclusively). */
export async function bindUdp(address: string, port: number, { reuseAddr = false } = {}): Promise<Socket> {
  const socket = dgram.createSocket({ type: 'udp4', reuseAddr });
  const bound = new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, address, () => {
      socket.off('error', reject);
      resolve();
    });
  });
  await within(bound, undefined, `a UDP bind on ${address}:${port}`);
  return socket;
}

export function closeUdp(socket: Socket): Promise<void> {
  return within(new Promise<void>((resolve) => socket.close(() => resolve())), undefined, 'a UDP socket to close');
}

/** A UDP port free on `address` now (bound exclusively, then let go). */
export async function freeUdpPort(address = '127.0.0.1'): Promise<number> {
  const probe = await bindUdp(address, 0);
  const { port } = probe.address();
  await closeUdp(probe);
  return port;
}
