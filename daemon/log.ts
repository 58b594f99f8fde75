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

/**
 * The daemon's stdout: pino's own destination (sonic-boom, asynchronous) with batchWrites in front of it.
 *
 * Not pino's own buffering (`pino.destination({ sync: false, minLength })`), measured by `npm run bench:log`
 * (test/bench/access-log.ts, 200,000 access-log lines per round, alternating, 2 cores at load average ~9): CPU per
 * line 0.69 µs this way, 2.67 µs with minLength 4 KiB, 7.55 µs with minLength 60 KiB, 2.95 µs unbuffered. In its
 * text mode sonic-boom measures the UTF-8 length of everything it has joined so far on every line it is given, so a
 * larger minLength costs more per line, not less. And it writes a line held back by minLength only once more lines
 * fill the buffer, or from a periodicFlush interval, which would wake an idle daemon on every interval; batchWrites
 * arms its one-shot timer only when a line arrives. So sonic-boom gets bytes (its buffer mode) in 64 KiB batches.
 */
export function stdoutDestination(fd = 1): LogDestination {
  // minLength 0: the batching happens in front of it (batchWrites), every chunk it receives is written at once;
  // the chunks are bytes.
  const boom = pino.destination({ dest: fd, sync: false, minLength: 0, maxWrite: BUFFER_BYTES, contentMode: 'buffer' });
  // EPIPE on a closed stdout must not become an uncaught exception.
  boom.on('error', () => {
    // Nowhere left to say it: the log is the stream that failed.
  });
  // In buffer mode its write takes bytes (its type declarations only know text).
  return batchWrites(boom as unknown as BatchTarget);
}

/** Where each logger writes, for the access log's own lines and the flush before exit. */
const destinations = new WeakMap<Logger, LogDestination>();

/** A stream pino writes to; the access log writes its lines there too, and flushLogSync flushes it. */
export type LogDestination = pino.DestinationStream & { flushSync?: () => void };

export function createLogger(level: string, destination: LogDestination = stdoutDestination()): Logger {
  // No redaction paths: nothing secret is ever passed to the logger (URLs go through redactUrl first),
  // and pino's redaction would cost a clone of every access-log line.
  // Children (the components' loggers) write to the same stream: the access log finds it from any of them.
  const logger = pino(
    { level, base: { service: 'azcd' }, onChild: (child) => destinations.set(child, destination) },
    destination,
  );
  destinations.set(logger, destination);
  return logger;
}

/** The stream `logger` writes to, when createLogger made it or one of its ancestors. */
export function destinationOf(logger: Logger): LogDestination | undefined {
  return destinations.get(logger);
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
    if (timer === undefined) timer = setTimeout(onTimer, flushMs).unref();
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

/** Cheap test first: a URL without a query, a `;`, an escape or a key-shaped token is logged as it is. */
const SUSPECT = /[?;%]|s[sv][ct]_/i;
/** Anything shaped like an API key or session token, whatever follows the prefix. */
const KEY_SHAPED = /s(?:vc|st)_[A-Za-z0-9_-]*/gi;
/** Parameter names that carry a credential: compared after decoding, without blanks, in lower case. */
const CREDENTIAL_NAME = /key|token|pass|pwd|secret|auth|session|credential|signature/;
/** Escapes are decoded this many times over: a key sent double-encoded is still found. */
const DECODE_LEVELS = 3;
const REDACTED = '[redacted]';

/**
 * Makes a request target safe to log: the value of every parameter named like a credential (`apiKey`, `token`,
 * `password`, ...) and anything shaped like a key (`svc_…`, `sst_…`) are replaced by `[redacted]`, wherever they
 * are (path or query), whatever separates the parameters (`&` or `;`) and however they are percent-encoded (names
 * and values are read decoded, `+` as a space, up to three levels of escapes). Over-redacting a stray parameter
 * costs nothing; missing a key would put it in the journal.
 */
export function redactUrl(url: string): string {
  if (!SUSPECT.test(url)) return url;
  const hidden = new Uint8Array(url.length);
  const query = url.indexOf('?');
  // Parameters: separated by raw `?`, `&` or `;` (the query parser splits on `&`; `;` is how a key slips past it).
  let start = 0;
  for (let i = 0; i <= url.length; i++) {
    const c = url.charCodeAt(i);
    if (i < url.length && c !== 0x3f && c !== 0x26 && c !== 0x3b) continue;
    if (i > start) hideCredentialValue(url, start, i, query >= 0 && start > query, hidden);
    start = i + 1;
  }
  const whole = decoded(url, 0, url.length, query);
  for (const match of whole.text.matchAll(KEY_SHAPED)) {
    hidden.fill(1, whole.from[match.index]!, whole.to[match.index + match[0].length - 1]!);
  }
  if (!hidden.includes(1)) return url;
  let out = '';
  for (let i = 0; i < url.length; i++) {
    if (!hidden[i]) out += url[i];
    else if (i === 0 || !hidden[i - 1]) out += REDACTED;
  }
  return out;
}

/** Hides the value of `name=value` in url[start, end) when the decoded name is a credential's. */
function hideCredentialValue(url: string, start: number, end: number, inQuery: boolean, hidden: Uint8Array): void {
  const part = decoded(url, start, end, inQuery ? start - 1 : -1);
  const eq = part.text.indexOf('=');
  // A path segment is a parameter only with an `=` (`/zones;apiKey=…`); in the query a bare name is one too.
  if (eq < 0 && !inQuery) return;
  const name = (eq < 0 ? part.text : part.text.slice(0, eq)).replace(/\s+/g, '').toLowerCase();
  if (!CREDENTIAL_NAME.test(name)) return;
  // The value starts after the `=` as sent; an `=` sent encoded hides the whole parameter.
  const from = eq >= 0 && url.charCodeAt(part.from[eq]!) === 0x3d ? part.to[eq]! : start;
  hidden.fill(1, from, end);
}

/**
 * url[start, end) decoded as the query parser would (escapes, and `+` as a space after `query`), repeatedly; with,
 * for each decoded character, where in `url` it starts (`from`) and ends (`to`, exclusive).
 */
function decoded(
  url: string,
  start: number,
  end: number,
  query: number,
): { text: string; from: number[]; to: number[] } {
  let chars: string[] = [];
  let from: number[] = [];
  let to: number[] = [];
  for (let i = start; i < end; i++) {
    chars.push(url[i] === '+' && query >= 0 && i > query ? ' ' : url[i]!);
    from.push(i);
    to.push(i + 1);
  }
  for (let level = 0; level < DECODE_LEVELS; level++) {
    if (!chars.includes('%')) break;
    const next: string[] = [];
    const nextFrom: number[] = [];
    const nextTo: number[] = [];
    for (let i = 0; i < chars.length; i++) {
      const hex = chars[i] === '%' && i + 2 < chars.length ? chars[i + 1]! + chars[i + 2]! : '';
      if (/^[0-9a-fA-F]{2}$/.test(hex)) {
        next.push(String.fromCharCode(parseInt(hex, 16)));
        nextFrom.push(from[i]!);
        nextTo.push(to[i + 2]!);
        i += 2;
      } else {
        next.push(chars[i]!);
        nextFrom.push(from[i]!);
        nextTo.push(to[i]!);
      }
    }
    [chars, from, to] = [next, nextFrom, nextTo];
  }
  return { text: chars.join(''), from, to };
}

/** Writes every pending line before the process exits (process.exit does not wait for an async write). */
export function flushLogSync(logger: Logger): void {
  const stream = destinationOf(logger);
  try {
    if (typeof stream?.flushSync === 'function') stream.flushSync();
    else logger.flush();
  } catch {
    // stdout is gone: nothing to write to.
  }
}
