// azc-confine (native/confine.c), the Landlock wrapper each mpd runs under: a program it runs reaches only the folders
// it was given, whatever symlinks a path goes through, and can make FIFOs only where it may write; where Landlock is
// refused it runs the program unconfined and says so in one line.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { tempDir } from '../helpers/daemon.js';
import { ROOT } from '../helpers/paths.js';

const CONFINE = path.join(ROOT, 'native', 'build', 'Release', 'azc-confine');

/** Folders A (readable), B (not given) and W (writable), a file in A and B, and a symlink in A that leads to B's. */
function folders(t: Test) {
  const dir = tempDir('azc-confine-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const [a, b, w] = ['a', 'b', 'w'].map((name) => path.join(dir, name)) as [string, string, string];
  for (const folder of [a, b, w]) mkdirSync(folder);
  writeFileSync(path.join(a, 'open.txt'), 'open to read\n');
  writeFileSync(path.join(b, 'private.txt'), 'private\n');
  symlinkSync(path.join(b, 'private.txt'), path.join(a, 'link.txt'));
  return { a, b, w };
}

/** Runs a shell command under azc-confine with the given folders (the system's programs runnable from /usr). */
function confined(rules: string[], script: string): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(CONFINE, [...rules, '--exec', '/usr', '--', '/bin/sh', '-c', script], { encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

t.before(() => {
  if (!existsSync(CONFINE))
    throw new Error(`${CONFINE} is not built: run npm run-script install (it needs a C compiler)`);
});

t.test('a program under --read A reads a file in A', async (t) => {
  const { a } = folders(t);
  const run = confined(['--read', a], `cat ${a}/open.txt`);
  t.equal(run.code, 0, run.stderr);
  t.equal(run.stdout, 'open to read\n');
});

t.test('a program under --read A cannot read a file in a folder it was not given', async (t) => {
  const { a, b } = folders(t);
  const run = confined(['--read', a], `cat ${b}/private.txt`);
  t.not(run.code, 0);
  t.match(run.stderr, /private\.txt: Permission denied/);
  t.equal(run.stdout, '');
});

t.test('a symlink in A that leads into B does not open B’s file', async (t) => {
  const { a } = folders(t);
  const run = confined(['--read', a], `cat ${a}/link.txt`);
  t.not(run.code, 0);
  t.match(run.stderr, /link\.txt: Permission denied/);
  t.equal(run.stdout, '');
});

t.test('a program under --write W makes a FIFO in W, and none in a folder it may only read', async (t) => {
  const { a, w } = folders(t);
  const run = confined(['--read', a, '--write', w], `mkfifo ${w}/pcm.fifo && mkfifo ${a}/pcm.fifo`);
  t.ok(statSync(path.join(w, 'pcm.fifo')).isFIFO(), 'the FIFO is made in W');
  t.not(run.code, 0);
  t.match(run.stderr, /Permission denied/);
  t.notOk(existsSync(path.join(a, 'pcm.fifo')), 'none is made in A');
});

/**
 * Runs azc-confine under a seccomp filter that answers EPERM to landlock_create_ruleset (444), as a service manager's
 * system-call filter without the Landlock calls does. Python's ctypes installs it (python3 is there wherever the
 * native part builds: node-gyp needs it).
 */
const REFUSE_LANDLOCK = `
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
insn = lambda code, jt, jf, k: struct.pack('HBBI', code, jt, jf, k)
prog = ctypes.create_string_buffer(b''.join([insn(0x20, 0, 0, 0), insn(0x15, 0, 1, 444), insn(0x06, 0, 0, 0x00050000 | 1), insn(0x06, 0, 0, 0x7fff0000)]))
class Fprog(ctypes.Structure): _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_void_p)]
fprog = Fprog(4, ctypes.addressof(prog))
if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
    sys.exit('seccomp: ' + os.strerror(ctypes.get_errno()))
os.execv(sys.argv[1], sys.argv[1:])
`;

t.test('where a system-call filter refuses Landlock, the program runs unconfined and one line says so', async (t) => {
  const { a, b } = folders(t);
  const args = [CONFINE, '--read', a, '--exec', '/usr', '--', '/bin/sh', '-c', `cat ${b}/private.txt`];
  const run = spawnSync('python3', ['-c', REFUSE_LANDLOCK, ...args], { encoding: 'utf8' });
  t.equal(run.status, 0, run.stderr);
  t.equal(run.stdout, 'private\n', 'the program ran, unconfined');
  t.equal(
    run.stderr,
    'azc-confine: Landlock is not available (Operation not permitted): /bin/sh runs without file-system confinement\n',
  );
});

t.test('a program that is not there exits 127, and wrong arguments 126, each with one line', async (t) => {
  const missing = spawnSync(CONFINE, ['--', '/nonexistent/program'], { encoding: 'utf8' });
  t.equal(missing.status, 127);
  t.equal(missing.stderr, 'azc-confine: cannot run /nonexistent/program: No such file or directory\n');
  const wrong = spawnSync(CONFINE, ['--read'], { encoding: 'utf8' });
  t.equal(wrong.status, 126);
  t.match(wrong.stderr, /^azc-confine: usage: azc-confine \[--read DIR\]/);
});
