// Reads a server-sent-events stream over a raw loopback socket, so tests see exactly what the server sends.
import net from 'node:net';
import { Changes, waitFor } from './wait-for.js';

export interface SseMessage {
  id?: string;
  data?: string;
  comment?: string;
  retry?: string;
  event?: string;
}

export interface SseClient {
  status: Promise<number>;
  headers: Promise<Record<string, string>>;
  messages: SseMessage[];
  /** Resolves with the first message (from now or already received) that matches. */
  next(match: (m: SseMessage) => boolean, timeoutMs?: number, what?: string): Promise<SseMessage>;
  /** Resolves when the server ends or drops the stream. */
  closed: Promise<void>;
  isClosed(): boolean;
  /** The body received so far, decoded (an answer that is not a stream: a problem-details refusal). */
  body(): string;
  /** Stops reading from the socket (a stalled client). */
  pause(): void;
  resume(): void;
  close(): void;
}

export function openStream(base: string, path: string, headers: Record<string, string> = {}): SseClient {
  const url = new URL(base);
  const socket = net.connect(Number(url.port), url.hostname);
  const lines = [`GET ${path} HTTP/1.1`, `Host: ${url.host}`, 'Accept: text/event-stream'];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  const messages: SseMessage[] = [];
  const changes = new Changes();
  let resolveStatus!: (n: number) => void;
  let resolveHeaders!: (h: Record<string, string>) => void;
  const status = new Promise<number>((r) => (resolveStatus = r));
  const headerPromise = new Promise<Record<string, string>>((r) => (resolveHeaders = r));
  let closedFlag = false;
  const closed = new Promise<void>((resolve) => {
    socket.on('close', () => {
      closedFlag = true;
      resolve();
    });
  });
  socket.on('error', () => {
    // A reset is one way the server may end the stream: `closed` reports it.
  });
  let head = '';
  let headDone = false;
  let chunked = false;
  let raw = '';
  let text = '';
  let body = '';
  const deliver = (m: SseMessage) => {
    messages.push(m);
    changes.notify();
  };
  // Both parsers walk with an offset and cut the consumed prefix once per chunk: large backlogs stay linear.
  const parseEvents = () => {
    let start = 0;
    let idx: number;
    while ((idx = text.indexOf('\n\n', start)) >= 0) {
      const block = text.slice(start, idx);
      start = idx + 2;
      const m: SseMessage = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) m.comment = line.slice(1).trim();
        else {
          const c = line.indexOf(':');
          const field = line.slice(0, c);
          const value = line.slice(c + 1).replace(/^ /, '');
          if (field === 'data') m.data = m.data === undefined ? value : `${m.data}\n${value}`;
          else if (field === 'id' || field === 'retry' || field === 'event') m[field] = value;
        }
      }
      deliver(m);
    }
    if (start > 0) text = text.slice(start);
  };
  const decodeChunks = () => {
    // Transfer-Encoding: chunked: [CRLF] size CRLF data. uWS sends each chunk's closing CRLF in front of the
    // next one, so a chunk is complete once its data is here.
    let start = 0;
    const parts: string[] = [];
    let ended = false;
    for (;;) {
      if (raw.startsWith('\r\n', start)) start += 2;
      const crlf = raw.indexOf('\r\n', start);
      if (crlf < 0) break;
      const size = parseInt(raw.slice(start, crlf), 16);
      if (Number.isNaN(size) || raw.length < crlf + 2 + size) break;
      parts.push(raw.slice(crlf + 2, crlf + 2 + size));
      start = crlf + 2 + size;
      if (size === 0) {
        ended = true;
        break;
      }
    }
    if (start > 0) raw = raw.slice(start);
    body += parts.join('');
    text += parts.join('');
    // The last chunk: the server ended the stream, whether or not it keeps the connection.
    if (ended) socket.destroy();
  };
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    if (!headDone) {
      head += chunk;
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headDone = true;
      const [statusLine, ...headerLines] = head.slice(0, end).split('\r\n');
      const hdrs: Record<string, string> = {};
      for (const line of headerLines) {
        const c = line.indexOf(':');
        hdrs[line.slice(0, c).toLowerCase()] = line.slice(c + 1).trim();
      }
      chunked = /chunked/i.test(hdrs['transfer-encoding'] ?? '');
      resolveStatus(Number(statusLine!.split(' ')[1]));
      resolveHeaders(hdrs);
      chunk = head.slice(end + 4);
    }
    if (chunked) {
      raw += chunk;
      decodeChunks();
    } else {
      body += chunk;
      text += chunk;
    }
    parseEvents();
  });
  return {
    status,
    headers: headerPromise,
    messages,
    closed,
    isClosed: () => closedFlag,
    next(match, timeoutMs = 5000, what = 'an SSE message') {
      let checked = 0; // each message is matched once, however long the backlog
      const first = () => {
        for (; checked < messages.length; checked++) if (match(messages[checked]!)) return messages[checked];
        return undefined;
      };
      return waitFor(first, timeoutMs, { what, changes });
    },
    body: () => body,
    pause: () => socket.pause(),
    resume: () => socket.resume(),
    close: () => socket.destroy(),
  };
}

export const eventOf = (m: SseMessage): { type: string; payload: any } | undefined =>
  m.data ? (JSON.parse(m.data) as { type: string; payload: any }) : undefined;

export const isEvent =
  (type: string, where: (payload: any) => boolean = () => true) =>
  (m: SseMessage) => {
    const e = eventOf(m);
    return e !== undefined && e.type === type && where(e.payload);
  };
