// The process logger: pino JSON lines on stdout; a broken stdout never takes the daemon down.
import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * Lines are gathered in memory up to this many characters and handed to the stream in one write, and handed on at
 * most this long after they were logged. Each write is a trip through libuv's thread pool: one per few hundred
 * lines instead of one per line is most of what the access log costs under load. maxWrite is in bytes, so it
 * leaves room for multi-byte characters.
 */
const BUFFER_CHARS = 64 * 1024;
const FLUSH_MS = 500;

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  let stream = destination;
  if (!stream) {
    // minLength 0: the batching happens in front of it (batchWrites), every chunk it receives is written at once.
    const boom = pino.destination({ dest: 1, sync: false, minLength: 0, maxWrite: BUFFER_CHARS * 4 });
    // EPIPE on a closed stdout must not become an uncaught exception.
    boom.on('error', () => {});
    batchWrites(boom);
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
  write(chunk: string): unknown;
  flush(cb?: (err?: Error) => unknown): void;
  flushSync(): void;
}

export function batchWrites(boom: BatchTarget, flushMs = FLUSH_MS): void {
  let pending = '';
  let timer: NodeJS.Timeout | undefined;
  const write = boom.write.bind(boom);
  const flush = boom.flush.bind(boom);
  const flushSync = boom.flushSync.bind(boom);
  const handOn = () => {
    if (pending === '') return;
    const chunk = pending;
    pending = '';
    write(chunk);
  };
  const onTimer = () => {
    timer = undefined;
    handOn();
  };
  boom.write = (line: string) => {
    pending += line;
    if (pending.length >= BUFFER_CHARS) handOn();
    else timer ??= setTimeout(onTimer, flushMs).unref();
    return true;
  };
  boom.flush = (cb?: (err?: Error) => unknown) => {
    handOn();
    flush(cb);
  };
  boom.flushSync = () => {
    handOn();
    flushSync();
  };
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
