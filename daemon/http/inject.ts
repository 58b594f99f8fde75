// inject(): a request sent through the whole pipeline in this process, its answer recorded as the wire would carry it.
// Tests and in-process callers use it; the uWS adapter (server.ts) is the pipeline's other front door.
import { type Compiled, type Dispatcher, EMPTY_QUERY, PipelineRequest, type ResponseSink } from './dispatch.js';
import { type ApiResult, CAPTURED_HEADERS, type RequestHeaders } from './route.js';
import { readAll } from './streamed-body.js';

/** A request sent with inject(): `path` may carry a query; a body that is not a string or Buffer is sent as JSON. */
export interface InjectRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** The client address the request appears to come from (login throttling keys on it). */
  remoteAddress?: string;
}

// biome-ignore lint/suspicious/noExplicitAny: tests read the JSON body of any route without declaring its shape
export interface InjectResponse<T = any> {
  status: number;
  headers: Headers;
  /** The parsed body when the response is JSON (problem details included); otherwise undefined. */
  body: T;
  text: string;
}

/** inject() hands a streamed body to its sink in pieces of this size, as a socket would bring it. */
const PIECE_BYTES = 64 * 1024;

/**
 * The whole pipeline in one call, with no socket. Routes that write to a socket themselves (the event stream) are
 * refused with an Error rather than answered.
 */
export async function inject(dispatcher: Dispatcher, sent: InjectRequest): Promise<InjectResponse> {
  const method = sent.method.toUpperCase();
  const queryAt = sent.path.indexOf('?');
  const path = queryAt === -1 ? sent.path : sent.path.slice(0, queryAt);
  const rawQuery = queryAt === -1 ? '' : sent.path.slice(queryAt + 1);
  const body = encodeBody(sent.body);
  const given: Record<string, string> = {};
  for (const [name, value] of Object.entries(sent.headers ?? {})) given[name.toLowerCase()] = value;
  if (body) {
    given['content-length'] ??= String(body.length);
    if (!Buffer.isBuffer(sent.body) && typeof sent.body !== 'string') given['content-type'] ??= 'application/json';
  }
  // The headers the socket adapter would read for this route, and no others (Dispatcher.headersRead).
  const lookup = dispatcher.find(method, path);
  const reads = dispatcher.headersRead(lookup);
  const headers = {} as RequestHeaders;
  for (const name of CAPTURED_HEADERS) headers[name] = reads[name] ? (given[name] ?? '') : '';
  const request = new InProcessRequest(
    dispatcher,
    method,
    path,
    rawQuery,
    rawQuery ? new URLSearchParams(rawQuery) : EMPTY_QUERY,
    headers,
    dispatcher.requestId(headers['x-request-id']),
  );
  if (sent.remoteAddress !== undefined) request.address = sent.remoteAddress;
  const recorder = new RecordedResponse();
  let compiled: Compiled | undefined;
  try {
    compiled = dispatcher.match(request, recorder, lookup);
  } catch (err) {
    return answer(dispatcher, recorder, request, dispatcher.failure(request, err));
  }
  if (!compiled) return recorder.reply();
  if (compiled.route.kind === 'raw') {
    throw new Error(
      `inject() cannot open ${method} ${compiled.route.path}: it writes to a socket; use the daemon's HTTP address`,
    );
  }
  let result: ApiResult;
  try {
    if (compiled.body) {
      dispatcher.checkDeclaredLength(request);
      if (body && body.length > dispatcher.bodyLimit(request)) throw dispatcher.tooLarge(request);
    }
    const sink = dispatcher.openBody(request);
    for (let at = 0; sink && body && at < body.length; at += PIECE_BYTES)
      sink.write(body.subarray(at, at + PIECE_BYTES));
    result = await dispatcher.run(request, sink ? undefined : body, false);
  } catch (err) {
    result = dispatcher.failure(request, err);
  }
  return answer(dispatcher, recorder, request, result);
}

function answer(
  dispatcher: Dispatcher,
  recorder: RecordedResponse,
  request: PipelineRequest,
  result: ApiResult,
): InjectResponse {
  dispatcher.respond(recorder, request, result, false);
  if (result.stream && request.method !== 'HEAD') recorder.end(readAll(result.stream));
  dispatcher.log(request, result.status);
  return recorder.reply();
}

/** A request that came through inject(): its client address is whatever the caller says. */
class InProcessRequest extends PipelineRequest {
  address = '127.0.0.1';

  get ip(): string {
    return this.address;
  }
}

const NO_BYTES = Buffer.alloc(0);

/** Collects what the pipeline writes, as the wire would carry it (uWS adds Content-Length the same way). */
class RecordedResponse implements ResponseSink {
  private status = 0;
  private readonly headers = new Headers();
  private body: Buffer = NO_BYTES;

  writeStatus(status: string): this {
    this.status = Number.parseInt(status, 10);
    return this;
  }

  writeHeader(key: string, value: string): this {
    this.headers.append(key, value);
    return this;
  }

  end(body: string | Buffer = ''): this {
    this.body = Buffer.isBuffer(body) ? body : Buffer.from(body);
    this.headers.set('Content-Length', String(this.body.length));
    return this;
  }

  endWithoutBody(): this {
    return this;
  }

  reply(): InjectResponse {
    // zlib only for a compressed answer: start-up does not load it (ARCHITECTURE.md, "Memory").
    const gzipped = this.headers.get('content-encoding') === 'gzip';
    const text = (gzipped ? process.getBuiltinModule('node:zlib').gunzipSync(this.body) : this.body).toString('utf8');
    const json = text !== '' && /json/.test(this.headers.get('content-type') ?? '');
    return { status: this.status, headers: this.headers, body: json ? JSON.parse(text) : undefined, text };
  }
}

function encodeBody(body: unknown): Buffer | undefined {
  if (body === undefined) return undefined;
  if (Buffer.isBuffer(body)) return body;
  return Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
}
