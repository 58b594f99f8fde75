// A test child process that speaks JSON lines on stdout and takes commands on stdin (namespace discovery tests).
import type { Test } from 'tap';
import { spawn } from 'node:child_process';
import { ROOT } from './paths.js';

/** A child process speaking JSON lines: `next()` resolves with its next line, rejecting if it exits first. */
export class LineChild {
  private lines: unknown[] = [];
  private wake: (() => void) | undefined;
  private stderr = '';
  readonly exited: Promise<number | null>;
  private readonly child: ReturnType<typeof spawn>;

  constructor(t: Test, args: string[]) {
    this.child = spawn(args[0]!, args.slice(1), { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    t.teardown(() => {
      if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    });
    let buffered = '';
    this.child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      for (const line of parts) this.lines.push(JSON.parse(line));
      this.wake?.();
    });
    this.child.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) => this.child.once('close', resolve));
    void this.exited.then(() => this.wake?.());
  }

  async next(): Promise<Record<string, unknown>> {
    while (this.lines.length === 0) {
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        throw new Error(`child exited (${this.child.exitCode ?? this.child.signalCode}): ${this.stderr}`);
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    const line = this.lines.shift() as Record<string, unknown>;
    if (line['error']) throw new Error(`${String(line['error'])}\n${this.stderr}`);
    return line;
  }

  send(command: string): void {
    this.child.stdin!.write(`${command}\n`);
  }

  end(): void {
    this.child.stdin!.end();
  }
}
