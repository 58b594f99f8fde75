// The process logger: pino JSON lines on stdout; a broken stdout never takes the daemon down.
import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

/** Lines are gathered up to this many bytes before a write, and flushed at least this often. */
const BUFFER_BYTES = 4096;
const FLUSH_MS = 500;

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  let stream = destination;
  if (!stream) {
    const boom = pino.destination({ dest: 1, sync: false, minLength: BUFFER_BYTES });
    // EPIPE on a closed stdout must not become an uncaught exception.
    boom.on('error', () => {});
    setInterval(() => {
      try {
        boom.flush();
      } catch {
        // Nothing buffered, or stdout is gone: either way there is nothing to do.
      }
    }, FLUSH_MS).unref();
    stream = boom;
  }
  // No redaction paths: nothing secret is ever passed to the logger (URLs go through redactUrl first),
  // and pino's redaction would cost a clone of every access-log line.
  return pino({ level, base: { service: 'azcd' } }, stream);
}

/** Replaces the value of every `apiKey` (any case) query parameter so URLs can be logged. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => (/^apikey=/i.test(pair) ? pair.slice(0, pair.indexOf('=') + 1) + '[redacted]' : pair))
    .join('&');
  return `${url.slice(0, q)}?${query}`;
}
