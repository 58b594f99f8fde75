// Access-log lines written straight to the logger's destination: the same JSON pino writes, without its
// generic serializer, because one line per request is the hottest log call there is.
import type { Logger } from 'pino';
import { destinationOf, redactUrl } from '../log.js';

export interface AccessEntry {
  requestId: string;
  method: string;
  url: string;
  status: number;
  ms: number;
}

export type AccessLog = (entry: AccessEntry) => void;

const INFO = 30;
/**
 * The methods the API serves, already in their JSON form (anything else is escaped as sent). A switch, not an
 * object: the method is a new string per request, and looking it up as a property name costs a string-table probe.
 */
function methodJson(method: string): string {
  switch (method) {
    case 'GET':
      return '"GET"';
    case 'PUT':
      return '"PUT"';
    case 'POST':
      return '"POST"';
    case 'DELETE':
      return '"DELETE"';
    case 'HEAD':
      return '"HEAD"';
    default:
      return JSON.stringify(method);
  }
}
/** Paths made only of characters JSON never escapes go into the line as they are. */
const PLAIN_PATH = /^[A-Za-z0-9/._~%!$&'()*+,;=:@?-]*$/;

export function createAccessLog(logger: Logger): AccessLog {
  const stream = destinationOf(logger);
  if (!stream) {
    return (e) =>
      logger.info(
        { reqId: e.requestId, method: e.method, path: redactUrl(e.url), status: e.status, ms: e.ms },
        'request',
      );
  }
  return (e) => {
    if (!logger.isLevelEnabled('info')) return;
    // The request id is restricted to [A-Za-z0-9._-]; the method and path come from the client: escaped.
    const url = redactUrl(e.url);
    stream.write(
      `{"level":${INFO},"time":${Date.now()},"service":"azcd","reqId":"${e.requestId}","method":${methodJson(e.method)},` +
        `"path":${PLAIN_PATH.test(url) ? `"${url}"` : JSON.stringify(url)},"status":${e.status},"ms":${e.ms},"msg":"request"}\n`,
    );
  };
}
