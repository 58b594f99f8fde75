// SSE client process: holds many raw-socket event streams, can publish volume changes, and times each delivery.
import http from 'node:http';
import net from 'node:net';
import { summarize } from './stats.js';

/** Wall clock with sub-millisecond resolution, comparable between processes on the same machine. */
const now = (): number => performance.timeOrigin + performance.now();

interface Stream {
  socket: net.Socket;
  headDone: boolean;
  head: string;
  carry: string;
  received: number;
  closed: boolean;
}

const streams = new Set<Stream>();
/** Delivery records: the volume text of a volumeChanged event and when it arrived. */
const receivedKeys: string[] = [];
const receivedAt: number[] = [];
let record = true;
let totalEvents = 0;

function parseVolumes(stream: Stream, text: string, at: number): void {
  const data = stream.carry + text;
  const end = data.lastIndexOf('\n\n');
  if (end < 0) {
    stream.carry = data.length > 65536 ? '' : data;
    return;
  }
  stream.carry = data.slice(end + 2);
  let pos = 0;
  for (;;) {
    const hit = data.indexOf('volumeChanged"', pos);
    if (hit < 0 || hit > end) break;
    stream.received++;
    const v = data.indexOf('"volume":', hit);
    pos = hit + 14;
    if (v < 0 || v > end) continue;
    let stop = v + 9;
    while (stop < data.length && '0123456789.eE-+'.includes(data[stop]!)) stop++;
    if (record) {
      receivedKeys.push(data.slice(v + 9, stop));
      receivedAt.push(at);
    }
  }
  // Every message has one data line: count them all (the soak checks that streams keep receiving).
  let d = -1;
  while ((d = data.indexOf('data: ', d + 1)) >= 0 && d < end) totalEvents++;
}

function openStream(port: number, key: string, timeoutMs: number): Promise<Stream | null> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const stream: Stream = { socket, headDone: false, head: '', carry: '', received: 0, closed: false };
    let settled = false;
    const settle = (ok: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (ok) {
        streams.add(stream);
        resolve(stream);
      } else {
        socket.destroy();
        resolve(null);
      }
    };
    const timer = setTimeout(() => settle(false), timeoutMs);
    socket.setNoDelay(true);
    socket.on('error', () => settle(false));
    socket.on('close', () => {
      stream.closed = true;
      streams.delete(stream);
      settle(false);
    });
    socket.on('data', (chunk: Buffer) => {
      const at = now();
      const text = chunk.toString('latin1');
      if (!stream.headDone) {
        stream.head += text;
        const endOfHead = stream.head.indexOf('\r\n\r\n');
        if (endOfHead < 0) return;
        stream.headDone = true;
        const status = Number(stream.head.slice(9, 12));
        const rest = stream.head.slice(endOfHead + 4);
        stream.head = '';
        if (status !== 200) return settle(false);
        settle(true);
        if (rest) parseVolumes(stream, rest, at);
        return;
      }
      parseVolumes(stream, text, at);
    });
    socket.write(
      `GET /api/stream/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\nX-API-Key: ${key}\r\n\r\n`,
    );
  });
}

/** Opens `count` streams with at most `concurrency` handshakes in flight. */
async function connectMany(
  port: number,
  key: string,
  count: number,
  concurrency: number,
): Promise<{ open: number; failed: number; ms: number }> {
  const started = performance.now();
  let next = 0;
  let failed = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      if (!(await openStream(port, key, 15_000))) failed++;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return { open: streams.size, failed, ms: performance.now() - started };
}

/** Sends `count` volume PUTs at a fixed rate (on schedule even if one is slow); returns each one's send time. */
async function publish(port: number, key: string, playerId: string, rate: number, count: number, first: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  const sends: Array<[string, number]> = [];
  const putLatencies: number[] = [];
  let failures = 0;
  const interval = 1000 / rate;
  const start = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const due = start + i * interval - performance.now();
    if (due > 0) await new Promise((resolve) => setTimeout(resolve, due));
    const volume = Math.round((first + i / 1000) * 1000) / 1000;
    const body = JSON.stringify({ volume });
    pending.push(
      new Promise<void>((resolve) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            method: 'PUT',
            path: `/api/players/${playerId}/volume`,
            agent,
            headers: {
              'content-type': 'application/json',
              'x-api-key': key,
              'content-length': Buffer.byteLength(body),
            },
            timeout: 10_000,
          },
          (res) => {
            res.resume();
            res.once('end', () => {
              putLatencies.push(now() - sentAt);
              if (res.statusCode !== 204) failures++;
              resolve();
            });
          },
        );
        req.once('timeout', () => req.destroy());
        req.once('error', () => {
          failures++;
          resolve();
        });
        const sentAt = now();
        sends.push([JSON.stringify(volume), sentAt]);
        req.end(body);
      }),
    );
  }
  await Promise.all(pending);
  agent.destroy();
  return { sends, putLatencyMs: summarize(putLatencies), failures };
}

/** Keeps `count` streams open, each living a random lifetime, reopening as they close (the soak's churn). */
function churn(port: number, key: string, count: number, minLifeMs: number, maxLifeMs: number, durationS: number) {
  const stats = { opened: 0, closed: 0, failed: 0 };
  const deadline = performance.now() + durationS * 1000;
  let stopped = false;
  const cycle = async () => {
    while (!stopped && performance.now() < deadline) {
      const stream = await openStream(port, key, 10_000);
      if (!stream) {
        stats.failed++;
        await new Promise((resolve) => setTimeout(resolve, 200));
        continue;
      }
      stats.opened++;
      const life = minLifeMs + Math.random() * (maxLifeMs - minLifeMs);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(life, Math.max(0, deadline - performance.now())));
        stream.socket.once('close', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (!stream.closed) stream.socket.destroy();
      stats.closed++;
    }
  };
  const report = setInterval(
    () => process.send?.({ type: 'churn-stats', ...stats, open: streams.size, events: totalEvents }),
    5000,
  );
  const workers = Array.from({ length: count }, async (_, i) => {
    // Stagger the first connections over a second so they do not arrive as one burst.
    await new Promise((resolve) => setTimeout(resolve, (i * 1000) / count));
    await cycle();
  });
  return {
    stop: () => {
      stopped = true;
    },
    done: Promise.all(workers).then(() => {
      clearInterval(report);
      return { ...stats, open: streams.size, events: totalEvents };
    }),
  };
}

let activeChurn: ReturnType<typeof churn> | undefined;
const cpuAtStart = process.cpuUsage();
const wallAtStart = performance.now();

process.on('message', (message: any) => {
  const reply = (m: unknown) => process.send?.(m);
  const fail = (err: Error) => reply({ type: 'error', message: err.message });
  switch (message?.type) {
    case 'connect':
      connectMany(message.port, message.key, message.count, message.concurrency ?? 32).then(
        (r) => reply({ type: 'connected', ...r }),
        fail,
      );
      break;
    case 'publish':
      publish(message.port, message.key, message.playerId, message.rate, message.count, message.first).then(
        (r) => reply({ type: 'published', ...r }),
        fail,
      );
      break;
    case 'forget':
      // Drop what arrived so far (a warm-up) and start recording afresh.
      receivedKeys.length = 0;
      receivedAt.length = 0;
      for (const s of streams) s.received = 0;
      reply({ type: 'forgotten' });
      break;
    case 'report': {
      record = false;
      const sendTimes = new Map<string, number>(message.sends as Array<[string, number]>);
      const latencies: number[] = [];
      let unmatched = 0;
      for (let i = 0; i < receivedKeys.length; i++) {
        const sent = sendTimes.get(receivedKeys[i]!);
        if (sent === undefined) unmatched++;
        else latencies.push(receivedAt[i]! - sent);
      }
      const perStream = [...streams].map((s) => s.received);
      const cpu = process.cpuUsage(cpuAtStart);
      reply({
        type: 'report',
        latencies: latencies.map((l) => Math.round(l * 1000) / 1000),
        unmatched,
        open: streams.size,
        minPerStream: perStream.length ? Math.min(...perStream) : 0,
        maxPerStream: perStream.length ? Math.max(...perStream) : 0,
        cpuShare: (cpu.user + cpu.system) / 1000 / (performance.now() - wallAtStart),
      });
      break;
    }
    case 'churn':
      activeChurn = churn(
        message.port,
        message.key,
        message.count,
        message.minLifeMs,
        message.maxLifeMs,
        message.durationS,
      );
      activeChurn.done.then((r) => reply({ type: 'churn-done', ...r }), fail);
      break;
    case 'close':
      activeChurn?.stop();
      for (const s of streams) s.socket.destroy();
      setTimeout(() => process.exit(0), 50);
      break;
  }
});
process.on('disconnect', () => process.exit(0));
// Bounded: no client process outlives an hour and a bit, whatever the parent does.
setTimeout(() => process.exit(4), 65 * 60_000).unref();
process.send?.({ type: 'ready' });
