// Cover art a UPnP sender names (DIDL-Lite's upnp:albumArtURI), fetched by the daemon only from the media server the
// renderer already plays from: bounded in size, time and type, one fetch at a time per renderer.
import type { CastMetadata } from './receiver.js';

/** The largest cover taken: a sender's is a few hundred KiB at most; more is refused, not cut. */
export const ARTWORK_MAX_BYTES = 1 << 20;
/** How long a fetch may take, from the request to the last byte. */
export const ARTWORK_TIMEOUT_MS = 5_000;

export type Artwork = NonNullable<CastMetadata['artwork']>;

/** The types taken, each with the bytes its files start with (what is served is what the bytes are). */
const IMAGE_TYPES: Record<string, Buffer> = {
  'image/jpeg': Buffer.from([0xff, 0xd8, 0xff]),
  'image/png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
};

/** A URL as it may be logged: without its query (a sender's URLs may carry a token there) or fragment. */
export function loggedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    // Not a URL: nothing of it is logged.
    return '(not a URL)';
  }
}

const PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };

/** An http(s) URL's host and port (its scheme's port when none is written); undefined for any other URL. */
function origin(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const port = PORTS[parsed.protocol];
  if (port === undefined || !parsed.hostname) return undefined;
  return `${parsed.hostname}:${parsed.port || port}`;
}

/**
 * Why the daemon does not fetch the cover `art` named for a track the renderer plays from `track`, or undefined when
 * it does: only an http(s) URL on the host and port the renderer was told to play from (CurrentTrackURI), which it
 * reaches already, so a sender gets no reach through the daemon it does not have through the renderer.
 */
export function artworkRefusal(art: string, track: string | undefined): string | undefined {
  const from = origin(art);
  if (from === undefined) return 'it is not an http(s) URL';
  // fetch() refuses such a URL naming it whole, password included; and no sender's cover needs one.
  if (/^[a-z]+:\/\/[^/?#]*@/i.test(art)) return 'it carries a user name or password';
  if (track === undefined) return 'the renderer was told no URI to play';
  if (origin(track) !== from) return 'it is not on the host and port of the URI the renderer plays';
  return undefined;
}

/** The image type `data` is, of those taken, or undefined. */
function imageType(data: Buffer): string | undefined {
  return Object.entries(IMAGE_TYPES).find(([, magic]) => data.subarray(0, magic.length).equals(magic))?.[0];
}

/**
 * Fetches a cover: no redirect followed (it could lead elsewhere), JPEG or PNG only (by its Content-Type and by its
 * bytes), at most ARTWORK_MAX_BYTES, read as it arrives so a larger one is dropped at the limit. Rejects saying why.
 */
export async function fetchArtwork(url: string, signal: AbortSignal): Promise<Artwork> {
  const response = await fetch(url, { redirect: 'error', signal, headers: { accept: 'image/jpeg, image/png' } });
  const reader = response.body?.getReader();
  try {
    if (response.status !== 200) throw new Error(`the server answered HTTP ${response.status}`);
    const said = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (!(said in IMAGE_TYPES)) throw new Error(`it is ${said || 'of no type'}, not image/jpeg or image/png`);
    const length = Number(response.headers.get('content-length') ?? Number.NaN);
    if (length > ARTWORK_MAX_BYTES) throw new Error(`it is ${length} bytes, over the ${ARTWORK_MAX_BYTES} taken`);
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const chunk = await reader?.read();
      if (!chunk || chunk.done) break;
      size += chunk.value.byteLength;
      if (size > ARTWORK_MAX_BYTES) throw new Error(`it is over the ${ARTWORK_MAX_BYTES} bytes taken`);
      chunks.push(chunk.value);
    }
    const data = Buffer.concat(chunks);
    const mime = imageType(data);
    if (mime !== said) throw new Error(`its bytes are not ${said}`);
    return { mime, data };
  } finally {
    // Whatever was not read is not waited for.
    await reader?.cancel().catch(() => undefined);
  }
}

/** Where a parser's late metadata goes (the supervisor), and what it logs meanwhile. */
export interface LateMetadata {
  metadata(metadata: Partial<CastMetadata>): void;
  log(message: string): void;
}

/**
 * One renderer run's covers: each new track's DIDL-Lite names one or none; a fetch under way is dropped when the next
 * track comes, so one at most runs, and only the last track's cover is reported.
 */
export class ArtworkFetcher {
  /** The URI the renderer was last told to play (CurrentTrackURI), as logged. */
  trackUri: string | undefined;
  private late: LateMetadata | undefined;
  private current: AbortController | undefined;

  listen(late: LateMetadata): void {
    this.late = late;
  }

  /** A track began whose DIDL-Lite names the cover `url` (or none). */
  track(url: string | null): void {
    this.current?.abort();
    this.current = undefined;
    if (url === null || !this.late) return;
    const refusal = artworkRefusal(url, this.trackUri);
    if (refusal !== undefined) {
      this.late.log(`the cover ${loggedUrl(url)} is not fetched: ${refusal}`);
      return;
    }
    const controller = new AbortController();
    this.current = controller;
    const late = this.late;
    const signal = AbortSignal.any([controller.signal, AbortSignal.timeout(ARTWORK_TIMEOUT_MS)]);
    fetchArtwork(url, signal).then(
      (artwork) => {
        if (this.current !== controller) return;
        this.current = undefined;
        late.metadata({ artwork });
      },
      (err: Error) => {
        if (this.current !== controller) return;
        this.current = undefined;
        // fetch() says "fetch failed" and puts why (a refused connection, a redirect) in its cause.
        const cause = (err.cause as Error | undefined)?.message;
        const why = err.name === 'TimeoutError' ? `it took over ${ARTWORK_TIMEOUT_MS} ms` : (cause ?? err.message);
        // A message that names the URL names it without its query.
        late.log(`the cover ${loggedUrl(url)} could not be fetched: ${why.split(url).join(loggedUrl(url))}`);
      },
    );
  }

  /** The run ended: a fetch under way is dropped and reports nothing. */
  close(): void {
    this.current?.abort();
    this.current = undefined;
    this.late = undefined;
  }
}
