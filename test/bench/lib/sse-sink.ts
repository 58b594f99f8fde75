// Event-stream subscriber process for the HTTP benchmark: holds open streams on a server and reads what they get.
import net from 'node:net';

interface Stream {
  socket: net.Socket;
  frames: number;
  bytes: number;
}

const streams = new Map<string, Stream[]>();

/** One raw GET of the stream; resolves once the answer's head came (200), rejects otherwise. */
function open(port: number, path: string, headers: Record<string, string>): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const stream: Stream = { socket, frames: 0, bytes: 0 };
    let head = '';
    let started = false;
    const timer = setTimeout(() => fail(new Error(`no answer to GET ${path} within 10 s`)), 10_000);
    const fail = (err: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    };
    socket.on('error', fail);
    socket.on('data', (chunk: Buffer) => {
      if (!started) {
        head += chunk.toString('latin1');
        if (!head.includes('\r\n\r\n')) return;
        if (!head.startsWith('HTTP/1.1 200')) return fail(new Error(`GET ${path}: ${head.split('\r\n')[0]}`));
        started = true;
        clearTimeout(timer);
        resolve(stream);
        return;
      }
      stream.bytes += chunk.length;
      // One "data:" line per message (the server writes whole frames: count them as they come).
      let at = -1;
      while ((at = chunk.indexOf('\ndata: ', at + 1, 'latin1')) >= 0) stream.frames++;
    });
    const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n${lines.join('')}\r\n`,
    );
  });
}

type Message =
  | { type: 'open'; name: string; port: number; path: string; headers: Record<string, string>; count: number }
  | { type: 'counts' }
  | { type: 'close'; name: string };

process.on('message', (m: Message) => {
  void (async () => {
    try {
      if (m.type === 'open') {
        const opened: Stream[] = [];
        for (let i = 0; i < m.count; i++) opened.push(await open(m.port, m.path, m.headers));
        streams.set(m.name, opened);
        process.send?.({ type: 'opened', name: m.name });
      } else if (m.type === 'counts') {
        const counts: Record<string, { frames: number; bytes: number }> = {};
        for (const [name, list] of streams)
          counts[name] = {
            frames: list.reduce((n, s) => n + s.frames, 0),
            bytes: list.reduce((n, s) => n + s.bytes, 0),
          };
        process.send?.({ type: 'counts', counts });
      } else if (m.type === 'close') {
        for (const s of streams.get(m.name) ?? []) s.socket.destroy();
        streams.delete(m.name);
        process.send?.({ type: 'closed', name: m.name });
      }
    } catch (err) {
      process.send?.({ type: 'error', message: (err as Error).message });
    }
  })();
});
process.on('disconnect', () => process.exit(0));
process.send?.({ type: 'ready' });
