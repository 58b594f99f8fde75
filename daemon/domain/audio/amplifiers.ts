// The amplifiers one daemon drives: each a configured name, a stable key and a running driver.
import type { AmplifierDriver } from '../../../drivers/driver.js';
import type { AmplifierRef } from '../../store/audio-repo.js';
import { invalid } from '../shared/index.js';

export interface Amplifier {
  /** As configured; shown in the API (`output.amplifier`), health and Home Assistant. */
  name: string;
  /** Stored with its zones, players and inputs (config.ts amplifierKey). */
  key: string;
  driver: AmplifierDriver;
}

/** The single amplifier of --driver: named after its driver, whose name is also its key. */
export function singleAmplifier(driver: AmplifierDriver): Amplifier {
  return { name: driver.name, key: driver.name, driver };
}

export class Amplifiers {
  readonly list: readonly Amplifier[];
  /** By key, then driver family (looked up for every zone a request touches: no string is built for it). */
  private readonly byKey = new Map<string, Map<string, Amplifier>>();

  constructor(list: readonly Amplifier[]) {
    if (list.length === 0) throw new Error('at least one amplifier is needed');
    this.list = list;
    for (const amplifier of list) {
      if (!this.byKey.has(amplifier.key)) this.byKey.set(amplifier.key, new Map());
      this.byKey.get(amplifier.key)!.set(amplifier.driver.name, amplifier);
    }
  }

  /** The amplifier rows with this key and driver belong to; undefined when it is not configured. */
  find(key: string, driver: string): Amplifier | undefined {
    return this.byKey.get(key)?.get(driver);
  }

  /** The name shown for rows of an amplifier; the key for one no longer configured. */
  nameOf(key: string, driver: string): string {
    return this.find(key, driver)?.name ?? key;
  }

  /**
   * Why rows of this amplifier cannot be used, when it is not configured (another --driver, or taken out of the
   * config file's list); null when it is configured.
   */
  notConfigured(key: string, driver: string): string | null {
    return this.find(key, driver) ? null : `amplifier "${key}" (driver ${driver}) is not configured`;
  }

  /**
   * The amplifier a new zone, player or input goes on: the one named (case-insensitive), or the only one of the
   * driver named, or the only one there is. Anything ambiguous or unknown is a 400 that lists the choices.
   */
  choose(request: { amplifier?: string; driver?: string }, at: string): Amplifier {
    const names = this.list.map((a) => `"${a.name}"`).join(', ');
    let candidates = this.list;
    if (request.amplifier !== undefined) {
      const wanted = request.amplifier.trim().toLowerCase();
      candidates = candidates.filter((a) => a.name.toLowerCase() === wanted);
      if (candidates.length === 0) {
        throw invalid(`"${at}.amplifier" must name a configured amplifier (${names}), got "${request.amplifier}"`, {
          [`${at}.amplifier`]: [`must be one of ${names}`],
        });
      }
    }
    if (request.driver !== undefined) {
      const matching = candidates.filter((a) => a.driver.name === request.driver);
      if (matching.length === 0) {
        const allowed = [...new Set(candidates.map((a) => a.driver.name))];
        const what =
          request.amplifier !== undefined
            ? `the driver of amplifier "${candidates[0]!.name}"`
            : 'the configured amplifier driver';
        throw invalid(`"${at}.driver" must be "${allowed.join('" or "')}" (${what}), got "${request.driver}"`, {
          [`${at}.driver`]: [`must be "${allowed.join('" or "')}"`],
        });
      }
      candidates = matching;
    }
    if (candidates.length > 1) {
      throw invalid(
        `several amplifiers are configured: name one in "${at}.amplifier" (${candidates.map((a) => `"${a.name}"`).join(', ')})`,
        {
          [`${at}.amplifier`]: ['required when several amplifiers are configured'],
        },
      );
    }
    return candidates[0]!;
  }

  /**
   * The amplifier a new player or input device (`input`) or zone (`output`) goes on, as choose() picks it, with the
   * channel checked against the amplifier's inputs or zone outputs: a 400 listing them otherwise.
   */
  placeOn(request: { amplifier?: string; driver?: string; channel: number }, at: 'input' | 'output'): Amplifier {
    const amplifier = this.choose(request, at);
    const description = amplifier.driver.describe();
    const channels = (at === 'input' ? description.inputs : description.zones).map((c) => c.channel);
    if (!channels.includes(request.channel)) {
      const what = at === 'input' ? 'inputs' : 'zone outputs';
      throw invalid(
        `"${at}.channel" must be one of the amplifier's ${what} (${channels.join(', ')}), got ${request.channel}`,
        {
          [`${at}.channel`]: [at === 'input' ? 'not an input of the amplifier' : 'not a zone output of the amplifier'],
        },
      );
    }
    return amplifier;
  }
}

export function refOf(amplifier: Amplifier): AmplifierRef {
  return { key: amplifier.key, driver: amplifier.driver.name };
}
