// Health, the OpenAPI document and the UPnP device description.

import { ok, type Route, route } from '../http/route.js';
import { T } from '../http/schema.js';
import { BridgeStatusSchema } from './settings.js';

export interface HealthSource {
  version: string;
  startedAt: number;
  /** Each configured amplifier: its name, driver family and link state. */
  amplifiers(): Array<{ name: string; driver: string; online: boolean }>;
  /** How many zones of the configured amplifiers cannot answer (a unit not fitted or silent). */
  unavailableZones(): number;
  storeHealthy(): boolean;
  /** The MQTT bridge's state; undefined when no bridge is configured (the field is then left out). */
  mqtt?(): { state: string; detail?: string } | undefined;
}

export function systemRoutes(health: HealthSource, openApiJson: () => string, descriptionXml: () => string): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/health',
      access: 'public',
      summary: 'Liveness, version and amplifier link state (no secrets)',
      tags: ['system'],
      responses: {
        200: {
          description:
            'status is ok, or degraded when an amplifier is offline, a zone cannot answer (its unit is missing or silent) or the store fails',
          schema: T.Object({
            status: T.Union([T.Literal('ok'), T.Literal('degraded')]),
            version: T.String(),
            uptimeS: T.Integer(),
            drivers: T.Array(T.Object({ name: T.String(), online: T.Boolean() }), {
              description: 'one entry per amplifier, named by its driver (kept for older clients; see amplifiers)',
            }),
            amplifiers: T.Array(
              T.Object({
                name: T.String({ description: 'as configured; the driver name for the single amplifier of --driver' }),
                driver: T.String(),
                online: T.Boolean(),
              }),
              { description: 'each configured amplifier and whether its link is up' },
            ),
            unavailableZones: T.Integer({
              minimum: 0,
              description:
                'zones of the configured amplifiers that cannot answer now (a unit not fitted or silent); their writes answer 409. ' +
                'Zones of an amplifier that is not configured are not counted',
            }),
            mqtt: T.Optional(BridgeStatusSchema),
          }),
        },
      },
      handle: () => {
        const amplifiers = health.amplifiers();
        const drivers = amplifiers.map((a) => ({ name: a.driver, online: a.online }));
        const unavailableZones = health.unavailableZones();
        const healthy = health.storeHealthy() && amplifiers.every((a) => a.online) && unavailableZones === 0;
        // The bridge is reported but does not make the appliance degraded: the API and amplifier work without it.
        const mqtt = health.mqtt?.();
        return ok({
          status: healthy ? 'ok' : 'degraded',
          version: health.version,
          uptimeS: Math.floor((Date.now() - health.startedAt) / 1000),
          drivers,
          amplifiers,
          unavailableZones,
          ...(mqtt ? { mqtt } : {}),
        });
      },
    }),
    route({
      method: 'GET',
      path: '/api/openapi.json',
      access: 'public',
      summary: 'This API as OpenAPI 3.1, generated from the route schemas',
      tags: ['system'],
      responses: {
        200: {
          description: 'the OpenAPI document',
          schema: T.Object({ openapi: T.Literal('3.1.0') }, { description: 'OpenAPI 3.1' }),
        },
      },
      handle: () => ({ status: 200, raw: openApiJson(), contentType: 'application/json' }),
    }),
    route({
      method: 'GET',
      path: '/description.xml',
      access: 'public',
      summary: 'UPnP device description for SSDP discovery',
      tags: ['system'],
      responses: {
        200: {
          description: 'UPnP device description',
          contentType: 'text/xml',
          schema: T.String({ description: 'UPnP Device Architecture 1.0 XML' }),
        },
      },
      handle: () => ({ status: 200, raw: descriptionXml(), contentType: 'text/xml; charset="utf-8"' }),
    }),
  ];
}
