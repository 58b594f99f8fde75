// The test client of client.ts sending through the daemon's in-process pipeline (Daemon.inject): no socket.
import type { Daemon } from '../../daemon/app.js';
import { type Client, clientOver, createUser, type Reply } from './client.js';

export { type Client, createUser, type Reply };

/** Anything that takes an injected request: a Daemon (a TestDaemon's `daemon`). */
export interface Injectable {
  inject: Daemon['inject'];
}

/**
 * A client with the interface of `client(base, key)` whose requests never touch a socket. `remoteAddress` is the
 * client address the daemon sees (default 127.0.0.1, as for a loopback request).
 */
export function injectClient(target: Injectable, defaultKey?: string, remoteAddress?: string): Client {
  return clientOver(
    (method, path, headers, body) =>
      target.inject({ method, path, headers, body, ...(remoteAddress ? { remoteAddress } : {}) }),
    defaultKey,
  );
}
