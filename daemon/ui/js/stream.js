// @ts-check
// Follows GET /api/stream/events with fetch + ReadableStream so the token travels in a header, never the URL.
// Parses SSE itself, resumes with the Last-Event-ID header and reconnects with jittered exponential back-off.

const MAX_BACKOFF_MS = 30_000;
/** The server pings every 15 s; silence for this long means the connection died without telling us. */
const SILENCE_MS = 40_000;

/**
 * @param {object} o
 * @param {string} [o.url]                  the stream's address (tests pass an absolute one)
 * @param {() => string|null} o.token       current session token
 * @param {(resumed: boolean) => void} o.onOpen   connected (resumed = a Last-Event-ID was sent)
 * @param {(event: StreamEvent) => void} o.onEvent   what the daemon sent (its own schemas)
 * @param {(state: 'connecting'|'live'|'reconnecting') => void} o.onState
 * @param {() => void} o.onUnauthorized     the credential no longer works
 */
export function followEvents(o) {
  let lastEventId = null;
  let retryMs = 2000;
  let failures = 0;
  let stopped = false;
  let controller = null;
  let retryTimer = null;
  let silenceTimer = null;

  const armSilence = () => {
    clearTimeout(silenceTimer);
    silenceTimer = setTimeout(() => controller?.abort(), SILENCE_MS);
  };

  async function connect() {
    if (stopped) return;
    controller = new AbortController();
    const headers = { Accept: 'text/event-stream' };
    const token = o.token();
    if (token) headers.Authorization = `Bearer ${token}`;
    if (lastEventId !== null) headers['Last-Event-ID'] = lastEventId;
    o.onState(failures ? 'reconnecting' : 'connecting');
    try {
      const res = await fetch(o.url ?? '/api/stream/events', {
        headers,
        signal: controller.signal,
        cache: 'no-store',
        credentials: 'omit',
      });
      if (res.status === 401) {
        stop();
        o.onUnauthorized();
        return;
      }
      if (!res.ok || !res.body) throw new Error(`event stream answered ${res.status}`);
      failures = 0;
      o.onState('live');
      o.onOpen(lastEventId !== null);
      armSilence();
      await read(res.body);
    } catch {
      // Network error, abort or a bad status: fall through to the reconnect below.
    }
    clearTimeout(silenceTimer);
    if (stopped) return;
    failures++;
    o.onState('reconnecting');
    const ceiling = Math.min(MAX_BACKOFF_MS, retryMs * 2 ** Math.min(failures - 1, 5));
    retryTimer = setTimeout(connect, ceiling / 2 + Math.random() * (ceiling / 2));
  }

  async function read(body) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    let data = [];
    let id = null;
    const dispatch = () => {
      if (id !== null) lastEventId = id;
      id = null;
      if (data.length === 0) return;
      const text = data.join('\n');
      data = [];
      let event;
      try {
        event = JSON.parse(text);
      } catch {
        return;
      }
      if (event && typeof event.type === 'string') o.onEvent(event);
    };
    for (;;) {
      const { value, done } = await reader.read();
      if (done || stopped) return;
      armSilence();
      buffer += value;
      for (;;) {
        const match = /\r\n|\r|\n/.exec(buffer);
        // A lone trailing CR may be the first half of CRLF: wait for the next chunk.
        if (!match || (match[0] === '\r' && match.index === buffer.length - 1)) break;
        const line = buffer.slice(0, match.index);
        buffer = buffer.slice(match.index + match[0].length);
        if (line === '') {
          dispatch();
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'data') data.push(value);
        else if (field === 'id' && !value.includes('\0')) id = value;
        else if (field === 'retry' && /^\d+$/.test(value)) retryMs = Number(value);
      }
    }
  }

  function stop() {
    stopped = true;
    clearTimeout(retryTimer);
    clearTimeout(silenceTimer);
    controller?.abort();
  }

  void connect();
  return { stop };
}
