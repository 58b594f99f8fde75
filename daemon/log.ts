// The process logger: pino JSON lines on stdout; a broken stdout never takes the daemon down.
import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * Lines are encoded into a buffer of this many bytes as they are logged and handed to the stream in one write when
 * it is full, at most FLUSH_MS after they were logged. Each write is a trip through libuv's thread pool: one per
 * few hundred lines instead of one per line is most of what the access log costs under load. Encoding each line as
 * it comes lets the line's text die young; text joined for a later write survives garbage collections, is copied
 * by each one, and is measured twice by the stream before it is encoded.
 */
const BUFFER_BYTES = 64 * 1024;
const FLUSH_MS = 500;

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  let stream = destination;
  if (!stream) {
    // minLength 0: the batching happens in front of it (batchWrites), every chunk it receives is written at once;
    // the chunks are bytes.
    const boom = pino.destination({ dest: 1, sync: false, minLength: 0, maxWrite: BUFFER_BYTES, contentMode: 'buffer' });
    // EPIPE on a closed stdout must not become an uncaught exception.
    boom.on('error', () => {});
    // In buffer mode its write takes bytes (its type declarations only know text).
    batchWrites(boom as unknown as BatchTarget);
    stream = boom;
  }
  // No redaction paths: nothing secret is ever passed to the logger (URLs go through redactUrl first),
  // and pino's redaction would cost a clone of every access-log line.
  return pino({ level, base: { service: 'azcd' } }, stream);
}

/**
 * Collects lines and passes them on in batches. The flush timer is armed by a line arriving and runs once: an
 * idle daemon has no timer at all (no wake-ups to flush an empty buffer), a busy one one per FLUSH_MS. pino and the
 * access log both write through `write`, so lines keep their order; flush and flushSync hand on what is pending.
 */
export interface BatchTarget {
  write(chunk: Buffer): unknown;
  flush(cb?: (err?: Error) => unknown): void;
  flushSync(): void;
}

/** What batchWrites leaves in place of the target's write: it takes lines as text. */
type BatchedTarget<T extends BatchTarget> = Omit<T, 'write'> & { write(line: string): boolean };

export function batchWrites<T extends BatchTarget>(boom: T, flushMs = FLUSH_MS): BatchedTarget<T> {
  let buffer = Buffer.allocUnsafe(BUFFER_BYTES);
  let used = 0;
  let timer: NodeJS.Timeout | undefined;
  const write = boom.write.bind(boom);
  const flush = boom.flush.bind(boom);
  const flushSync = boom.flushSync.bind(boom);
  const handOn = () => {
    if (used === 0) return;
    const chunk = buffer.subarray(0, used);
    // The stream holds on to the chunk until it is written: later lines go into a new buffer.
    buffer = Buffer.allocUnsafe(BUFFER_BYTES);
    used = 0;
    write(chunk);
  };
  const onTimer = () => {
    timer = undefined;
    handOn();
  };
  const target = boom as unknown as BatchedTarget<T>;
  target.write = (line: string) => {
    // A UTF-16 code unit never takes more than 3 bytes of UTF-8.
    if (used + line.length * 3 > BUFFER_BYTES) {
      handOn();
      if (line.length * 3 > BUFFER_BYTES) {
        write(Buffer.from(line, 'utf8'));
        return true;
      }
    }
    used += buffer.write(line, used);
    timer ??= setTimeout(onTimer, flushMs).unref();
    return true;
  };
  target.flush = (cb?: (err?: Error) => unknown) => {
    handOn();
    flush(cb);
  };
  target.flushSync = () => {
    handOn();
    flushSync();
  };
  return target;
}

/**
 * Replaces the value of every `apiKey` query parameter so URLs can be logged. Names are compared the way the
 * query parser reads them (percent-decoded, `+` as a space, any letter case), so `?api%4Bey=` is caught too.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const pairs = url.slice(q + 1).split('&');
  let changed = false;
  for (let i = 0; i < pairs.length; i++) {
    const pair = pairs[i]!;
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    // Blanks are dropped as well: over-redacting a stray parameter costs nothing, missing a key does.
    const name = decodeQueryText(rawName).replace(/\s+/g, '').toLowerCase();
    if (!name.startsWith('apikey')) continue;
    changed = true;
    // A name that only starts with apiKey (say `apiKey%3Dsvc_...`, an `=` sent encoded) may hold the key itself.
    pairs[i] = name === 'apikey' ? `${rawName}=[redacted]` : '[redacted]';
  }
  return changed ? `${url.slice(0, q)}?${pairs.join('&')}` : url;
}

/** Decodes a query name as URLSearchParams does: `+` is a space, and a malformed escape stays as it is. */
function decodeQueryText(text: string): string {
  if (!text.includes('%') && !text.includes('+')) return text;
  const spaced = text.replaceAll('+', ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  }
}

/** Writes every pending line before the process exits (process.exit does not wait for an async write). */
export function flushLogSync(logger: Logger): void {
  const stream = (logger as unknown as Record<symbol, { flushSync?: () => void } | undefined>)[pino.symbols.streamSym];
  try {
    if (typeof stream?.flushSync === 'function') stream.flushSync();
    else logger.flush();
  } catch {
    // stdout is gone: nothing to write to.
  }
}
