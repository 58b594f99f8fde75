// The receiver kinds' registry: each kind's module listed once, in the order the API lists them. Every other list of
// kinds derives from this one: the kinds' names (a TypeScript union), the API's, events' and backups' schemas, the
// playback source, the store's check, MQTT's switches and the names the dashboard shows.
import type { ReceiverKind } from './receiver.js';
import { shairport } from './shairport.js';
import { squeezelite } from './squeezelite.js';
import { upnp } from './upnp.js';

/** Every receiver kind's module. The next kind (Spotify Connect, AirPlay 2) is one more module here. */
export const RECEIVER_KIND_LIST = [shairport, upnp, squeezelite] as const;

/** A receiver kind's name, as the API, the store and MQTT say it. */
export type ReceiverKindName = (typeof RECEIVER_KIND_LIST)[number]['kind'];

/** Every kind's name, in the registry's order. */
export const RECEIVER_KIND_NAMES: readonly ReceiverKindName[] = RECEIVER_KIND_LIST.map((module) => module.kind);

/** Each kind's module by its name. */
export const RECEIVER_KIND_MODULES: Readonly<Record<ReceiverKindName, ReceiverKind<ReceiverKindName>>> =
  Object.fromEntries(RECEIVER_KIND_LIST.map((module) => [module.kind, module])) as Record<
    ReceiverKindName,
    ReceiverKind<ReceiverKindName>
  >;

/** Whether `name` is a kind this build knows (a stored row or a backup may name one it no longer does). */
export function isReceiverKind(name: string): name is ReceiverKindName {
  return Object.hasOwn(RECEIVER_KIND_MODULES, name);
}

/** Names as a sentence's list: `airplay, upnp or squeezelite` (every kind's name unless given). */
export function kindsInWords(names: readonly string[] = RECEIVER_KIND_NAMES, conjunction = 'or'): string {
  return names.length < 2 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} ${conjunction} ${names.at(-1)}`;
}
