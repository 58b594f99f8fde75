// Export files: the path rules, a walk that cannot be redirected by symbolic links, quotas, atomic replace.
//
// Why it is built this way. A client names a path under the export directory, and a local process that can write
// into that directory may swap any folder on the path for a symbolic link at any moment. Checking a path and then
// using it by name (realpath, then open) always leaves a window in which the name means something else; openat(2)
// closes it by resolving each name relative to an open directory, but Node has no openat.
//
// On Linux, /proc/self/fd/<fd> is a "magic link" to the very directory an open descriptor refers to, so
// `/proc/self/fd/<fd>/<name>` names <name> inside that directory without walking any other component: openat by
// another spelling, and mkdir, open, lstat, rename, rmdir and unlink all accept it. So the walk opens the real
// export root, then each folder with O_DIRECTORY | O_NOFOLLOW relative to its parent's descriptor (creating it if
// missing): a symbolic link anywhere on the path is refused, never followed, and swapping a name after its folder
// was opened changes nothing, because we hold the folder, not its name. The temporary file is created directly in
// the export root (O_CREAT | O_EXCL | O_NOFOLLOW, a short fixed-length name, so it fits NAME_MAX whatever the
// client's file name) and renamed into the held folder; rename never follows a link in its last component.
// Afterwards the held folder must still be inside the root (readlink of its descriptor) and the name must hold our
// file (same device and inode); otherwise our file is removed and the request fails with 409. What remains
// possible: a process that can write here may *move* a held folder elsewhere on the same file system between that
// check and the next request; that needs write access to both places, so it gains nothing it could not do itself.
//
// Where /proc is missing (other systems), names are joined to the real path of each opened folder instead. Each
// folder is still opened with O_NOFOLLOW and the same after-the-fact checks run, but a swap of a folder between
// two calls cannot be excluded there. The appliance runs Linux.
//
// Quotas. Files and bytes are counted by one bounded scan of the export directory when the first export runs
// (stale temporary files from a power cut are removed then) and afterwards by running totals that our own writes
// update; exports run one at a time, so the totals stay exact for everything this process writes. Files removed
// by hand make the totals too high, so a write the totals would refuse rescans first (at most once per
// RESCAN_INTERVAL_MS, so a client looping on a full directory cannot keep the disk busy).

import { randomBytes } from 'node:crypto';
import { constants as fsc, type Stats } from 'node:fs';
import {
  type FileHandle,
  lstat,
  mkdir,
  open,
  readdir,
  readlink,
  realpath,
  rename,
  rmdir,
  unlink,
} from 'node:fs/promises';
import path from 'node:path';
import { conflict, invalid } from '../shared/index.js';

/** A filePath is at most 255 bytes (docs/api.md), and so is each of its names (NAME_MAX on Linux file systems). */
const MAX_PATH_BYTES = 255;
const MAX_NAME_BYTES = 255;
/** A name of at least one byte plus a separator: the most segments a 255-byte path can have. */
const MAX_SEGMENTS = Math.ceil(MAX_PATH_BYTES / 2);
/** How soon a refused write may trigger another scan (catches files removed by hand without a restart). */
const RESCAN_INTERVAL_MS = 2000;

const DIR_FLAGS = fsc.O_RDONLY | fsc.O_DIRECTORY | fsc.O_NOFOLLOW;
const TEMP_FLAGS = fsc.O_CREAT | fsc.O_EXCL | fsc.O_WRONLY | fsc.O_NOFOLLOW;
const TEMP_NAME = /^\.azcd-[0-9a-f]{12}\.tmp$/;
const tempName = (): string => `.azcd-${randomBytes(6).toString('hex')}.tmp`;

function reject(reason: string): never {
  throw invalid(`"filePath" ${reason}`, { filePath: [reason] });
}

/** Checks the textual rules: relative, .m3u8/.m3u, at most 255 bytes, no `..`, no NUL or control characters. */
export function checkExportPath(filePath: string): string[] {
  if (filePath.length === 0) reject('must not be empty');
  if (Buffer.byteLength(filePath) > MAX_PATH_BYTES) reject(`must be at most ${MAX_PATH_BYTES} bytes`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(filePath)) reject('must not contain NUL or control characters');
  if (path.isAbsolute(filePath) || filePath.startsWith('\\') || /^[A-Za-z]:/.test(filePath)) {
    reject('must be a path relative to the export directory, not an absolute one');
  }
  if (!/\.(m3u8|m3u)$/i.test(filePath)) reject('must end in .m3u8 or .m3u');
  const segments = filePath.split(/[\\/]+/);
  if (segments.some((segment) => segment === '..')) reject('must not contain a ".." segment');
  const cleaned = segments.filter((segment) => segment !== '' && segment !== '.');
  if (cleaned.length === 0) reject('must name a file');
  if (cleaned.some((segment) => Buffer.byteLength(segment) > MAX_NAME_BYTES))
    reject(`must have names of at most ${MAX_NAME_BYTES} bytes`);
  return cleaned;
}

export interface ExportLimits {
  exportFiles: number;
  exportBytes: number;
}

export interface ExportJob {
  /** Produces the file content once it is this write's turn (it may throw, e.g. a 404). */
  render(): string;
  /** Runs just before the file is put in place (re-checks the caller after the waits). */
  authorize(): void;
}

interface Folder {
  handle: FileHandle;
  /** The real path when it was opened: for messages, checks, and naming where /proc is missing. */
  path: string;
}

interface Totals {
  files: number;
  bytes: number;
  /** False when the scan stopped at its bound: the directory holds more than we will count. */
  complete: boolean;
}

/** The export directory: one write at a time, each inside it, within the file and byte quotas. */
export class ExportDirectory {
  private queue: Promise<unknown> = Promise.resolve();
  private totals: Totals | undefined;
  private scannedAt = 0;
  private procWorks: boolean | undefined;

  constructor(
    private readonly dir: string,
    private readonly limits: ExportLimits,
    private readonly rescanIntervalMs = RESCAN_INTERVAL_MS,
  ) {}

  /** Writes the job's content to the checked `segments` (from checkExportPath), replacing any file there. */
  write(segments: string[], job: ExportJob): Promise<void> {
    const turn = this.queue.then(() => this.writeNow(segments, job));
    this.queue = turn.catch(() => {
      // Its caller gets the error; the queue only waits for the turn to end.
    });
    return turn;
  }

  private async writeNow(segments: string[], job: ExportJob): Promise<void> {
    const content = Buffer.from(job.render(), 'utf8');
    // Private like the rest of the state directory (0700/0600, as systemd's UMask=0077 would make them anyway).
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const rootPath = await realpath(this.dir);
    const root: Folder = { handle: await open(rootPath, DIR_FLAGS), path: rootPath };
    const held: FileHandle[] = [root.handle];
    const made: Array<{ parent: Folder; name: string }> = [];
    let temp: string | undefined;
    let placed: { folder: Folder; name: string; ino: number } | undefined;
    try {
      this.procWorks ??= await procFdWorks(root);
      this.totals ??= await this.scan(rootPath);
      let folder = root;
      for (const name of segments.slice(0, -1)) {
        try {
          await mkdir(this.at(folder, name), 0o700);
          made.push({ parent: folder, name });
        } catch (err) {
          if (errno(err) !== 'EEXIST') throw explain(err, name);
        }
        const handle = await open(this.at(folder, name), DIR_FLAGS).catch((err) => {
          throw explain(err, name);
        });
        held.push(handle);
        folder = { handle, path: path.join(folder.path, name) };
      }
      const name = segments[segments.length - 1]!;
      const existing = await existingSize(this.at(folder, name), name);
      await this.admit(rootPath, existing, content.length);

      const tempPath = this.at(root, (temp = tempName()));
      const file = await open(tempPath, TEMP_FLAGS, 0o600).catch((err) => {
        throw explain(err, name);
      });
      let ours: Stats;
      try {
        await file.writeFile(content);
        await file.sync();
        ours = await file.stat();
      } finally {
        await file.close();
      }
      job.authorize();
      await rename(tempPath, this.at(folder, name)).catch((err) => {
        throw explain(err, name);
      });
      temp = undefined;
      placed = { folder, name, ino: ours.ino };
      await folder.handle.sync();
      await this.verify(rootPath, folder, name, ours);
      placed = undefined;
      this.totals.files += existing === null ? 1 : 0;
      this.totals.bytes += content.length - (existing ?? 0);
    } catch (err) {
      // A file renamed in place and then removed again may have replaced one: count afresh next time.
      if (placed) this.totals = undefined;
      await this.undo(root, temp, placed, made);
      throw err;
    } finally {
      for (const handle of held.reverse())
        await handle.close().catch(() => {
          // A folder handle that will not close is freed with the process; the write's outcome stands.
        });
    }
  }

  /** Names `name` inside an open folder without walking any other path component (see the module comment). */
  private at(folder: Folder, name: string): string {
    return this.procWorks === false ? path.join(folder.path, name) : `/proc/self/fd/${folder.handle.fd}/${name}`;
  }

  /** After the rename: the folder is still inside the root and the name holds the file we wrote. */
  private async verify(rootPath: string, folder: Folder, name: string, ours: Stats): Promise<void> {
    if (!(await this.stillInside(rootPath, folder))) {
      throw conflict('a folder of "filePath" moved out of the export directory while it was written: try again');
    }
    const now = await lstat(this.at(folder, name)).catch(() => undefined);
    if (!now || now.ino !== ours.ino || now.dev !== ours.dev) {
      throw conflict('"filePath" was replaced by something else while it was written: try again');
    }
  }

  private async stillInside(rootPath: string, folder: Folder): Promise<boolean> {
    if (this.procWorks) {
      // The kernel's current name for the held folder; a removed folder reads "<path> (deleted)".
      const where = await readlink(`/proc/self/fd/${folder.handle.fd}`).catch(() => '');
      return where !== '' && !where.endsWith(' (deleted)') && isInside(rootPath, where);
    }
    const [held, named, real] = await Promise.all([
      folder.handle.stat(),
      lstat(folder.path).catch(() => undefined),
      realpath(folder.path).catch(() => ''),
    ]);
    return named?.ino === held.ino && named.dev === held.dev && real !== '' && isInside(rootPath, real);
  }

  /** Removes what a failed write created: its temporary file, its file if placed, and the folders it made. */
  private async undo(
    root: Folder,
    temp: string | undefined,
    placed: { folder: Folder; name: string; ino: number } | undefined,
    made: Array<{ parent: Folder; name: string }>,
  ): Promise<void> {
    // Best effort: what cannot be removed now is a temporary file the next scan removes, or a file counted afresh.
    const ignore = () => {
      // The write's own error is the one to report.
    };
    if (temp) await unlink(this.at(root, temp)).catch(ignore);
    if (placed) {
      const target = this.at(placed.folder, placed.name);
      const now = await lstat(target).catch(() => undefined);
      if (now?.ino === placed.ino) await unlink(target).catch(ignore);
    }
    for (const { parent, name } of made.reverse()) await rmdir(this.at(parent, name)).catch(ignore);
  }

  /** Throws a 409 if the write would take the directory past a quota; replacing a file only counts the byte change. */
  private async admit(rootPath: string, existing: number | null, size: number): Promise<void> {
    let refusal = quotaRefusal(this.totals!, this.limits, existing, size);
    if (refusal && Date.now() - this.scannedAt >= this.rescanIntervalMs) {
      this.totals = await this.scan(rootPath);
      refusal = quotaRefusal(this.totals, this.limits, existing, size);
    }
    if (refusal) throw conflict(refusal);
  }

  /**
   * Counts regular files and their bytes below the root without following links, removing stale temporary files
   * (writes are serialised, so none is in use). Our own writes can never make more entries than MAX_SEGMENTS per
   * allowed file, so the scan stops there and reports an incomplete count rather than walk an unbounded tree.
   */
  private async scan(rootPath: string): Promise<Totals> {
    const bound = (this.limits.exportFiles + 1) * MAX_SEGMENTS;
    const totals: Totals = { files: 0, bytes: 0, complete: true };
    const pending = [rootPath];
    let seen = 0;
    this.scannedAt = Date.now();
    while (pending.length) {
      const dir = pending.pop()!;
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        if (++seen > bound) return { ...totals, complete: false };
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) pending.push(full);
        if (!entry.isFile()) continue;
        if (dir === rootPath && TEMP_NAME.test(entry.name)) {
          await unlink(full).catch(() => {
            // A leftover that will not go is skipped again by the next scan.
          });
          continue;
        }
        const stats = await lstat(full).catch(() => undefined);
        if (!stats?.isFile()) continue;
        totals.files += 1;
        totals.bytes += stats.size;
      }
    }
    return totals;
  }
}

function quotaRefusal(totals: Totals, limits: ExportLimits, existing: number | null, size: number): string | null {
  if (!totals.complete) {
    return `the export directory holds more entries than ${limits.exportFiles} exports can make; remove some of its files or folders`;
  }
  if (existing === null && totals.files + 1 > limits.exportFiles) {
    return `the export directory holds at most ${limits.exportFiles} files and is full; replace an existing export or remove some`;
  }
  const bytes = totals.bytes - (existing ?? 0) + size;
  if (bytes > limits.exportBytes) {
    return `the export directory holds at most ${limits.exportBytes} bytes and this file would bring it to ${bytes}; remove some exports`;
  }
  return null;
}

/** The size of the regular file at `target`, null when nothing is there; anything else there is a 400. */
async function existingSize(target: string, name: string): Promise<number | null> {
  let stats: Stats;
  try {
    stats = await lstat(target);
  } catch (err) {
    if (errno(err) === 'ENOENT') return null;
    throw explain(err, name);
  }
  if (stats.isSymbolicLink()) reject(`names a symbolic link (${name}); links are neither followed nor replaced`);
  if (!stats.isFile()) reject(`names something that is not a regular file: ${name}`);
  return stats.size;
}

/** Whether /proc/self/fd names open folders here (Linux); checked once on the export root. */
async function procFdWorks(root: Folder): Promise<boolean> {
  return readlink(`/proc/self/fd/${root.handle.fd}`).then(
    (target) => target === root.path,
    () => false,
  );
}

/** Turns the file-system errors a client's path can cause into 400/409; anything else stays a 500. */
function explain(err: unknown, name: string): unknown {
  switch (errno(err)) {
    case 'ENOTDIR':
    case 'ELOOP':
      return invalid(`"filePath" has a component that is not a folder (symbolic links are not followed): ${name}`, {
        filePath: [`not a folder: ${name}`],
      });
    case 'EISDIR':
      return invalid(`"filePath" names a folder, not a file: ${name}`, { filePath: [`a folder: ${name}`] });
    case 'ENAMETOOLONG':
      return invalid(`"filePath" has a name longer than the export file system allows: ${name.slice(0, 40)}…`, {
        filePath: ['a name is too long for the file system'],
      });
    case 'ENOENT':
    case 'EEXIST':
      return conflict(`"filePath" changed while it was written (a folder appeared or vanished): try again`);
    default:
      return err;
  }
}

const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;

function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}
