// Child of ssdp.test.ts, run inside a throwaway network namespace: a whole daemon with SSDP on loopback, stopped by
// Daemon.stop(); prints one JSON line with the NOTIFY messages seen before and after the stop.
import { rmSync } from 'node:fs';
import { AZC_DEVICE_TYPE, controllerUdn, UPNP_BASIC_DEVICE_TYPE } from '../../daemon/discovery/description.js';
import { startDaemon, tempDir } from '../helpers/daemon.js';
import { bindUdp, closeUdp } from '../helpers/sockets.js';
import { SSDP_GROUP as GROUP, parseSsdp } from '../helpers/ssdp.js';
import { Changes, waitFor } from '../helpers/wait-for.js';

const LOOPBACK = '127.0.0.1';

interface Notify {
  nts: string;
  nt: string;
  usn: string;
}

async function main(): Promise<Record<string, unknown>> {
  const notifies: Notify[] = [];
  const changes = new Changes();
  // The observer listens before the daemon starts, so its first ssdp:alive is seen.
  const observer = await bindUdp('0.0.0.0', 1900, { reuseAddr: true });
  observer.addMembership(GROUP, LOOPBACK);
  observer.on('message', (msg) => {
    const { startLine, headers } = parseSsdp(msg);
    if (!startLine.startsWith('NOTIFY')) return;
    notifies.push({ nts: headers['NTS'] ?? '', nt: headers['NT'] ?? '', usn: headers['USN'] ?? '' });
    changes.notify();
  });

  const stateDir = tempDir('azc-ssdp-daemon-');
  try {
    const d = await startDaemon({ stateDir, config: { ssdp: true, ssdpInterfaces: ['lo'], logLevel: 'warn' } });
    const udn = d.daemon.services.udn;
    const types = [udn, 'upnp:rootdevice', UPNP_BASIC_DEVICE_TYPE, controllerUdn(udn), AZC_DEVICE_TYPE];
    // A whole round of alive first: the stop then starts after it, so nothing of it arrives among the byebyes.
    const announced = (nt: string) => notifies.some((n) => n.nts === 'ssdp:alive' && n.nt === nt);
    await waitFor(() => types.every(announced), undefined, { what: 'ssdp:alive for every type', changes });
    const stopStarted = notifies.length;
    await d.stop();
    const saidByebye = (nt: string) => notifies.slice(stopStarted).some((n) => n.nts === 'ssdp:byebye' && n.nt === nt);
    await waitFor(() => types.every(saidByebye), undefined, { what: 'ssdp:byebye for every type', changes });
    return { udn, beforeStop: notifies.slice(0, stopStarted), afterStop: notifies.slice(stopStarted) };
  } finally {
    await closeUdp(observer);
    rmSync(stateDir, { recursive: true, force: true });
  }
}

main().then(
  // node-ssdp's 3-second first-announce timer cannot be cancelled; exit instead of waiting it out.
  (result) => process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0)),
  (err: Error) =>
    process.stdout.write(`${JSON.stringify({ error: err.stack ?? err.message })}\n`, () => process.exit(1)),
);
