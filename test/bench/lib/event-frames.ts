// Reads the event frames one request causes on a server's stream: what the same-work baseline must write alike.
import http from 'node:http';

/**
 * Opens GET /api/stream/events on `port` (with `headers`), runs `act` once the stream answered, and resolves with the
 * first `count` messages after it (each `id: …\ndata: …`), or fails after 10 s.
 */
export function captureFrames(
  port: number,
  headers: Record<string, string>,
  count: number,
  act: () => Promise<unknown>,
): Promise<string[]> {
  return new Promise((resolve, reject) => {
    let text = '';
    let acted = false;
    const req = http.get(
      { host: '127.0.0.1', port, path: '/api/stream/events', headers: { accept: 'text/event-stream', ...headers } },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return finish(new Error(`GET /api/stream/events: ${res.statusCode}`));
        }
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          // The stream opens with its retry: line; act once that came, then collect the messages it causes.
          if (!acted && text.includes('\n\n')) {
            acted = true;
            text = '';
            act().catch(finish);
          }
          const messages = text.split('\n\n').filter((m) => m.startsWith('id: '));
          if (acted && messages.length >= count) finish(undefined, messages.slice(0, count));
        });
      },
    );
    const timer = setTimeout(() => finish(new Error(`fewer than ${count} event frames within 10 s`)), 10_000);
    req.on('error', (err) => finish(err));
    let done = false;
    function finish(err?: Error, frames?: string[]): void {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      if (err) reject(err);
      else resolve(frames!);
    }
  });
}

/** A frame with its event number taken out: `id: <run>-<n>` becomes `id: <run>-#`. */
export const withoutSequence = (frame: string): string => frame.replace(/^id: (.*?)\d+\n/, 'id: $1#\n');
