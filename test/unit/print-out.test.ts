// printOut (daemon/runtime.ts) writes the start-up lines straight to stdout's descriptor. When that is a pipe that
// cannot take them now (non-blocking and full, as a stalled reader leaves it), the part not written goes through
// process.stdout, which writes it once the reader drains the pipe: every byte arrives once, in order, and the process
// does not fail. python3 makes the pipe: node cannot set O_NONBLOCK on a descriptor it hands a child.
import { spawn } from 'node:child_process';
import t from 'tap';
import { ROOT } from '../helpers/paths.js';
import { within } from '../helpers/wait-for.js';

/**
 * Fills a non-blocking pipe, then drains argv[1] bytes of it (room for part of a larger text, or none); runs the
 * command in the rest of argv with that pipe as its stdout and reads nothing until the command says on stderr that
 * printOut returned; then drains the pipe to its end and writes to its own stdout what came after the filler, and
 * the command's exit status on stderr.
 */
const PIPE_RIG = `
import os, subprocess, sys
r, w = os.pipe()
os.set_blocking(w, False)
filled = 0
try:
    while True:
        filled += os.write(w, b'.' * 4096)
except BlockingIOError:
    pass
room = int(sys.argv[1])
if room:
    filled -= len(os.read(r, room))
child = subprocess.Popen(sys.argv[2:], stdout=w, stderr=subprocess.PIPE)
os.close(w)
said = child.stderr.readline()
data = b''
while True:
    chunk = os.read(r, 65536)
    if not chunk:
        break
    data += chunk
status = child.wait()
sys.stdout.buffer.write(data[filled:])
sys.stderr.write('%s|%d|%d' % (said.decode().strip(), status, filled))
`;

/** printOut of its argument, then "printed" on stderr. */
const CHILD = `
import { printOut } from './daemon/runtime.ts';
printOut(process.argv[1]);
process.stderr.write('printed\\n');
`;

function text(lines: number): string {
  return `${Array.from({ length: lines }, (_, i) => `line ${i}: ${'x'.repeat(60)}`).join('\n')}\n`;
}

async function printThroughFullPipe(
  expected: string,
  room: number,
): Promise<{ out: string; said: string; status: number }> {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const rig = spawn(
    'python3',
    ['-c', PIPE_RIG, String(room), process.execPath, '--import', 'tsx', '--input-type=module', '-e', CHILD, expected],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  rig.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  rig.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const code = await within(
    new Promise<number | null>((resolve) => rig.once('close', resolve)),
    undefined,
    'the pipe rig',
  );
  if (code !== 0) throw new Error(`the pipe rig failed (${code}): ${err}`);
  const [said, status] = err.trim().split('|');
  return { out, said: said!, status: Number(status) };
}

t.test('a text larger than the room a full non-blocking pipe has left arrives whole, once, in order', async (t) => {
  const expected = text(400); // ~27 KB: part fits the 8 KiB freed, the rest waits for the reader
  const { out, said, status } = await printThroughFullPipe(expected, 8192);
  t.equal(said, 'printed', 'printOut returned while the pipe was full');
  t.equal(status, 0, 'the process exited cleanly');
  t.equal(out.length, expected.length);
  t.equal(out, expected);
});

t.test('a line with no room at all in the pipe arrives whole once the reader drains it', async (t) => {
  const expected = text(3); // under PIPE_BUF: a write of it is all or nothing, and here it is nothing
  const { out, said, status } = await printThroughFullPipe(expected, 0);
  t.equal(said, 'printed', 'printOut returned while the pipe was full');
  t.equal(status, 0, 'the process exited cleanly');
  t.equal(out, expected);
});
