// The events of a request leave for the event streams in the turn that answers it, before its answer: the daemon
// and the clients share this process's event loop, so a stream that has not received them by the time the answer is
// read (and a check queued behind it runs) got them in a later loop iteration.
import net from 'node:net';
import t from 'tap';
import { client } from '../helpers/client.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { eventOf, openStream } from '../helpers/sse.js';

/** Sends one PUT over a socket of its own; resolves in the turn whose read brought its status line. */
function putOnSocket(base: string, path: string, key: string, body: string): Promise<string> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    let head = '';
    socket.setEncoding('latin1');
    socket.on('error', reject);
    socket.on('data', (chunk: string) => {
      head += chunk;
      const end = head.indexOf('\r\n');
      if (end < 0) return;
      socket.destroy();
      resolve(head.slice(0, end));
    });
    socket.write(
      `PUT ${path} HTTP/1.1\r\nHost: ${url.host}\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
}

t.test("a volume change's events are on the open streams by the time its 204 is read", async (t) => {
  const d = await startTestDaemon(t);
  const admin = client(d.base, d.adminKey);
  const zones = (await admin.get('/api/zones')).body as Array<{ id: string }>;
  const player = (await admin.post('/api/players', { name: 'Turn', input: { channel: 1 } })).body;
  await admin.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [zones[0]!.id, zones[1]!.id] });
  const stream = openStream(d.base, '/api/stream/events', { 'X-API-Key': d.adminKey });
  t.teardown(() => stream.close());
  await stream.next((m) => m.retry !== undefined, 5000, 'the retry line');
  const before = stream.messages.length;

  const status = await putOnSocket(d.base, `/api/players/${player.id}/volume`, d.adminKey, '{"volume":0.35}');
  // Queued behind every read of the poll that brought the answer: a frame sent before the answer was read with it.
  const received = await new Promise<string[]>((resolve) =>
    setImmediate(() =>
      resolve(
        stream.messages
          .slice(before)
          .filter((m) => m.data !== undefined)
          .map((m) => {
            const { type, payload } = eventOf(m) as { type: string; payload: Record<string, unknown> };
            return `${type} ${payload.zoneId ?? payload.playerId} ${payload.volume}`;
          }),
      ),
    ),
  );
  t.equal(status, 'HTTP/1.1 204 No Content');
  t.same(
    received.filter((line) => line.startsWith('player.')),
    [`player.volumeChanged ${player.id} 0.35`],
    "the change's player event had arrived",
  );
  t.same(
    received.filter((line) => line.startsWith('zone.')).map((line) => line.split(' ')[1]),
    [zones[0]!.id, zones[1]!.id],
    'and both zone events',
  );
});
