// Announcements: a sound played on some zones through a stream player, then every zone and the interrupted playback
// put back. They queue; the events tell when one starts and ends.

import type { Announcements } from '../domain/playback/index.js';
import { AnnouncementSchema } from '../domain/shared/index.js';
import { ok, type Route, route } from '../http/route.js';
import { IdParams, T, Uuid, UuidList, Volume } from '../http/schema.js';

const missing = { description: 'no such announcement, or one on zones outside your assignments' };

export function announcementRoutes(announcements: Announcements): Route[] {
  return [
    route({
      method: 'POST',
      path: '/api/announcements',
      access: 'writer',
      summary: 'Play a sound on zones through a stream player you may use, then put everything back as it was',
      description:
        'The zones are powered on, routed to a stream player of their amplifier that the caller may use (an Operator: one assigned to it) and set to the volume (each within its own limit), without ' +
        'pops; the sound plays to its end (at most playback.announcementMaxMs); then every zone goes back to its power, route, volume and ' +
        'mute, and the player to its queue, track and position. A zone someone changes while it plays keeps that change (listed in kept). ' +
        'Zones that cannot answer, or that no stream player feeds, are skipped (listed in skipped). Announcements play one after another. ' +
        'A stream player deleted or given another output while it plays one ends it there at once (detail says so) and its zones are put back.',
      tags: ['announcements'],
      body: T.Object({
        uri: T.String({
          minLength: 1,
          maxLength: 2048,
          description: 'file:<path in the music folder> (a file there now) or an http(s) URL',
          errorMessage: 'must be a string of 1 to 2048 characters',
        }),
        zoneIds: UuidList('the zones to announce on; duplicates are ignored'),
        volume: Volume,
        playerId: T.Optional(
          Uuid(
            'a stream player you may use to play it through (on its amplifier); chosen by the daemon among those when left out',
          ),
        ),
      }),
      responses: {
        202: { description: 'queued', schema: AnnouncementSchema },
        400: {
          description:
            'invalid body, unknown zone ids, a URI the appliance does not play or a file that is not in the music folder, or a playerId that is no stream player you may use',
        },
        409: {
          description:
            'none of the zones can answer, no stream player you may use feeds their amplifier, or the MPD that checks the sound cannot run',
        },
        429: {
          description: 'too many announcements wait (yours, or all: config limits); retry after Retry-After seconds',
        },
        503: {
          description:
            "the stream player's MPD that checks the sound starts or restarts; retry after Retry-After seconds",
        },
      },
      handle: async (req) => ({
        status: 202,
        body: await announcements.announce(req.caller, req.body, () => req.revalidate()),
      }),
    }),
    route({
      method: 'GET',
      path: '/api/announcements',
      access: 'user',
      summary: 'The announcements that play or wait, whose zones you may all see',
      tags: ['announcements'],
      responses: {
        200: { description: 'the one playing first, then those waiting in order', schema: T.Array(AnnouncementSchema) },
      },
      handle: (req) => ok(announcements.list(req.caller)),
    }),
    route({
      method: 'GET',
      path: '/api/announcements/{id}',
      access: 'user',
      summary: 'An announcement (the last 50 that ended are kept)',
      tags: ['announcements'],
      params: IdParams,
      responses: { 200: { description: 'the announcement', schema: AnnouncementSchema }, 404: missing },
      handle: (req) => ok(announcements.get(req.caller, req.params.id)),
    }),
    route({
      method: 'DELETE',
      path: '/api/announcements/{id}',
      access: 'writer',
      summary: 'Cancel an announcement: taken off the queue, or cut short (everything is put back)',
      tags: ['announcements'],
      params: IdParams,
      responses: {
        200: { description: 'the announcement, cancelled (or being cut short)', schema: AnnouncementSchema },
        404: missing,
        409: { description: 'it has ended already' },
      },
      handle: (req) => ok(announcements.cancel(req.caller, req.params.id)),
    }),
  ];
}
