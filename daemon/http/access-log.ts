// Access-log lines written straight to the logger's destination: the same JSON pino writes, without its
// generic serializer, because one line per request is the hottest log call there is.
import pino, { type Logger } from 'pino';
import { redactUrl } from '../log.js';

export interface AccessEntry {
  requestId: string;
  method: string;
  url: string;
  status: number;
  ms: number;
}

export type AccessLog = (entry: AccessEntry) => void;

const INFO = 30;

export function createAccessLog(logger: Logger): AccessLog {
  const stream = (logger as unknown as Record<symbol, { write(line: string): unknown }>)[pino.symbols.streamSym];
  if (!stream || typeof stream.write !== 'function') {
    return (e) => logger.info({ reqId: e.requestId, method: e.method, path: redactUrl(e.url), status: e.status, ms: e.ms }, 'request');
  }
  return (e) => {
    if (!logger.isLevelEnabled('info')) return;
    // The request id is restricted to [A-Za-z0-9._-]; the method and path come from the client: escaped.
    stream.write(
      `{"level":${INFO},"time":${Date.now()},"service":"azcd","reqId":"${e.requestId}","method":${JSON.stringify(e.method)},` +
        `"path":${JSON.stringify(redactUrl(e.url))},"status":${e.status},"ms":${e.ms},"msg":"request"}\n`,
    );
  };
}
