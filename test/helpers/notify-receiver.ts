// A real AF_UNIX datagram socket (a python3 receiver) standing in for systemd's NOTIFY_SOCKET.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Changes, waitFor, within } from './wait-for.js';

// Binds an AF_UNIX SOCK_DGRAM socket ("@name" = abstract namespace) and prints one JSON line per datagram.
const RECEIVER = `
import json, socket, sys
name = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind('\\0' + name[1:] if name.startswith('@') else name)
print(json.dumps({'ready': True}), flush=True)
while True:
    print(json.dumps({'datagram': s.recv(65536).decode('utf-8', 'replace')}), flush=True)
`;

export class Receiver {
  readonly datagrams: string[] = [];
  private readonly changes = new Changes();
  private constructor(private readonly child: ChildProcessWithoutNullStreams) {}

  static async start(address: string): Promise<Receiver> {
    const child = spawn('python3', ['-c', RECEIVER, address], { stdio: ['pipe', 'pipe', 'pipe'] });
    const receiver = new Receiver(child);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const ready = new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`python3 receiver exited (${code}): ${stderr}`)));
      createInterface({ input: child.stdout }).on('line', (line) => {
        const parsed = JSON.parse(line) as { ready?: boolean; datagram?: string };
        if (parsed.ready) resolve();
        if (parsed.datagram !== undefined) {
          receiver.datagrams.push(parsed.datagram);
          receiver.changes.notify();
        }
      });
    });
    await ready;
    return receiver;
  }

  /** Resolves with the index of the first datagram at or after `from` equal to `expected`. */
  waitFor(expected: string, from = 0): Promise<number> {
    return this.waitForMatch((d) => d === expected, from, JSON.stringify(expected));
  }

  /** Resolves with the index of the first datagram at or after `from` that matches. */
  async waitForMatch(match: (datagram: string) => boolean, from = 0, what = 'a matching datagram'): Promise<number> {
    const found = () => {
      const index = this.datagrams.findIndex((d, i) => i >= from && match(d));
      return index >= 0 ? { index } : undefined;
    };
    try {
      return (await waitFor(found, undefined, { what, changes: this.changes })).index;
    } catch (err) {
      throw new Error(`${(err as Error).message}; got ${JSON.stringify(this.datagrams)}`);
    }
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    await within(exited, undefined, 'the notify receiver to exit');
  }
}
