// A real AF_UNIX datagram socket (a python3 receiver) standing in for systemd's NOTIFY_SOCKET.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';

const WAIT_MS = 5000;

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
  private waiters: Array<() => void> = [];
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
          for (const wake of receiver.waiters.splice(0)) wake();
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
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const index = this.datagrams.findIndex((d, i) => i >= from && match(d));
      if (index >= 0) return index;
      if (Date.now() > deadline) throw new Error(`no ${what}; got ${JSON.stringify(this.datagrams)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - Date.now() + 1);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
  }
}

