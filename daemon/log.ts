// The process logger: pino JSON lines on stdout; a broken stdout never takes the daemon down.
import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const stream = destination ?? pino.destination({ dest: 1, sync: false });
  if ('on' in stream && typeof stream.on === 'function') {
    // EPIPE on a closed stdout must not become an uncaught exception.
    (stream as unknown as NodeJS.EventEmitter).on('error', () => {});
  }
  return pino(
    {
      level,
      base: { service: 'azcd' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: ['password', 'newPassword', 'apiKey', 'token', '*.password', '*.apiKey', '*.token'], censor: '[redacted]' },
    },
    stream,
  );
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
