// A test child process that speaks JSON lines on stdout and takes commands on stdin (namespace discovery tests).

import { spawn } from 'node:child_process';
import type { Test } from 'tap';
import { ROOT } from './paths.js';
import { Changes, WAIT_MS, waitFor, within } from './wait-for.js';

/** A child process speaking JSON lines: `next()` resolves with its next line, rejecting if it exits first. */
export class LineChild {
  private lines: unknown[] = [];
  private readonly changes = new Changes();
  private stderr = '';
  private readonly exited: Promise<number | null>;
  /** Its output is closed: every line it wrote has been read. */
  private closed = false;
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
      this.changes.notify();
    });
    this.child.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) => this.child.once('close', resolve));
    void this.exited.then(() => {
      this.closed = true;
      this.changes.notify();
    });
  }

  /** The next line; rejects when the child exits without one, reports an `error`, or says nothing for `timeoutMs`. */
  async next(timeoutMs = WAIT_MS): Promise<Record<string, unknown>> {
    await waitFor(() => this.lines.length > 0 || this.closed, timeoutMs, {
      what: "the child's next line",
      changes: this.changes,
    });
    if (this.lines.length === 0)
      throw new Error(`child exited (${this.child.exitCode ?? this.child.signalCode}): ${this.stderr}`);
    const line = this.lines.shift() as Record<string, unknown>;
    if (line['error']) throw new Error(`${String(line['error'])}\n${this.stderr}`);
    return line;
  }

  /** How the child exited (its code), waiting for the exit at most `timeoutMs`. */
  exitCode(timeoutMs = WAIT_MS): Promise<number | null> {
    return within(this.exited, timeoutMs, 'the child to exit');
  }

  send(command: string): void {
    this.child.stdin!.write(`${command}\n`);
  }

  end(): void {
    this.child.stdin!.end();
  }
}
