// Resolves a client-given export path safely inside the export directory and writes files atomically.
import { lstat, mkdir, open, realpath, rename, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { badRequest } from '../http/problem.js';

const MAX_PATH_BYTES = 255;

function reject(reason: string): never {
  throw badRequest(`"filePath" ${reason}`, { filePath: [reason] });
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
  return cleaned;
}

/**
 * Creates the parent folders one at a time, refusing any existing component that resolves (through
 * symlinks) outside the export directory, and returns the absolute target path.
 */
export async function resolveExportTarget(exportDir: string, segments: string[]): Promise<string> {
  await mkdir(exportDir, { recursive: true });
  const root = await realpath(exportDir);
  let current = root;
  for (const segment of segments.slice(0, -1)) {
    const next = path.join(current, segment);
    try {
      await mkdir(next);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const real = await realpath(next).catch(() => reject(`has a folder that cannot be resolved: ${segment}`));
    if (!isInside(root, real)) reject('resolves outside the export directory');
    const stats = await lstat(real);
    if (!stats.isDirectory()) reject(`has a component that is not a directory: ${segment}`);
    current = real;
  }
  const target = path.join(current, segments[segments.length - 1]!);
  try {
    const stats = await lstat(target);
    if (stats.isSymbolicLink()) {
      const real = await realpath(target).catch(() => reject('is a dangling symbolic link'));
      if (!isInside(root, real)) reject('resolves outside the export directory');
    } else if (!stats.isFile()) {
      reject('names something that is not a regular file');
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return target;
}

/** Writes via a temporary file in the same folder and a rename, so readers never see half a file. */
export async function writeAtomically(target: string, content: string): Promise<void> {
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', 0o644);
  try {
    await handle.writeFile(content, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temp, target);
  } catch (err) {
    await unlink(temp).catch(() => {});
    throw err;
  }
}

function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}
