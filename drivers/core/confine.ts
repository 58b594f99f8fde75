// Landlock for the programs the daemon runs (each player's mpd, the casting receivers): native/'s azc-confine puts a
// program under a ruleset before it runs, so the kernel refuses any open outside the folders it is given.
import { accessSync, constants, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** azc-confine's line when the kernel has no Landlock (it then runs the program unconfined). */
export const NO_LANDLOCK = /^azc-confine: Landlock is not available/;

/** The folders a confined program may reach, by right: read, also run programs from, every file-system right. */
export interface Confinement {
  read: string[];
  exec: string[];
  write: string[];
}

/**
 * Where azc-confine is built: `native/build/Release` in the folder above this module that has `native/`, from
 * source (drivers/core/), compiled (dist/drivers/core/) or bundled (dist/daemon/main.js or one of its chunks).
 */
export function findConfine(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  const candidates: string[] = [];
  for (let i = 0; i < 5; i++) {
    dir = path.dirname(dir);
    candidates.push(path.join(dir, 'native', 'build', 'Release', 'azc-confine'));
  }
  return candidates.find(executable) ?? candidates[1]!;
}

/**
 * native/'s azc-bind.node (a plain shared object, named as node-gyp names what it builds), built beside azc-confine:
 * preloaded into a receiver, it keeps the receiver's TCP listening sockets to the address AZC_BIND_HOST names.
 */
export function findBindShim(confine = findConfine()): string | undefined {
  const shim = path.join(path.dirname(confine), 'azc-bind.node');
  return realFile(shim) === undefined ? undefined : shim;
}

/**
 * What any program needs: the system's configuration, /proc and /sys (read); its libraries and programs, and the
 * folder of the program itself, so one installed elsewhere than /usr still runs (exec); /dev/null and /dev/shm
 * (write). Nothing of the state folder: each caller adds the program's own folder.
 */
export function systemConfinement(program: string): Confinement {
  const read = ['/etc', '/proc', '/sys'];
  // With systemd-resolved, /etc/resolv.conf leads into /run: a program that resolves a host needs it.
  const resolver = realFile('/etc/resolv.conf');
  if (resolver && !resolver.startsWith('/etc/')) read.push(resolver);
  const exec = ['/usr', '/lib', '/lib64', '/bin', '/sbin', path.dirname(realFile(program) ?? program)];
  return { read, exec, write: ['/dev/null', '/dev/shm'] };
}

/** azc-confine's arguments for `confinement`, before its `--`. */
export function confineArgs(confinement: Confinement): string[] {
  return [
    ...confinement.read.flatMap((dir) => ['--read', dir]),
    ...confinement.exec.flatMap((dir) => ['--exec', dir]),
    ...confinement.write.flatMap((dir) => ['--write', dir]),
  ];
}

/** Whether `file` exists and the daemon's user may run it. */
export function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function realFile(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}
