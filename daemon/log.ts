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
