// The cover art of the cast a stream player plays, as its sender gave it (AirPlay) or named it (UPnP): the image
// itself, revalidated by its ETag.

import type { Transport } from '../domain/playback/index.js';
import type { ApiResult, Route } from '../http/route.js';
import { route } from '../http/route.js';
import { IdParams, T } from '../http/schema.js';

const CACHE_CONTROL = 'private, no-cache';

/** Whether an If-None-Match names `etag` (or is `*`); a weak tag matches too (GET compares weakly). */
function matches(ifNoneMatch: string, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const named = tag.trim().replace(/^W\//, '');
    return named === '*' || named === etag;
  });
}

const headerDocs = {
  ETag: { description: 'a tag made from the image: send it back as If-None-Match to revalidate' },
  'Cache-Control': { description: 'private, no-cache: kept by the browser, revalidated before each use' },
};

export function artworkRoutes(transport: Transport): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/players/{id}/artwork',
      access: 'user',
      summary: 'The cover art of the cast a stream player plays, if its sender gave one',
      description:
        "The image (JPEG or PNG) of the cast holding the player's output: AirPlay's as its sender sent it, UPnP's fetched from the " +
        "sender's media server. The playback's artwork field gives this path with a version (?v=), which changes with the image. " +
        'Answers 304 to an If-None-Match naming its ETag.',
      tags: ['playback'],
      params: IdParams,
      query: T.Object({
        v: T.Optional(
          T.String({
            maxLength: 64,
            description: "the version the playback's artwork field names: only makes the URL change with the image",
          }),
        ),
      }),
      headers: ['if-none-match'],
      responses: {
        200: {
          description: 'the image, its type as Content-Type',
          schema: T.String({ contentMediaType: 'image/*' }),
          contentType: 'image/*',
          headers: headerDocs,
        },
        304: { description: 'the image is the one the If-None-Match names', headers: headerDocs },
        404: {
          description:
            'no such player (or not in your assignments), or no cover art: no cast plays on it, or its sender gave none',
        },
        409: { description: 'not a stream player' },
      },
      handle: (req): ApiResult => {
        const artwork = transport.artwork(req.caller, req.params.id);
        const etag = `"${artwork.version}"`;
        const headers = { ETag: etag, 'Cache-Control': CACHE_CONTROL };
        if (matches(req.headers['if-none-match'], etag)) return { status: 304, headers };
        return { status: 200, raw: artwork.data, contentType: artwork.mime, headers };
      },
    }),
  ];
}
