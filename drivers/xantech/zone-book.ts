// Desired vs hardware state of the Xantech zones: the shared status-line book, zones 1..8 or 1..16.
import { StatusZoneBook, type Write as StatusWrite } from '../status-zone-book.js';
import { SOURCE_COUNT, VOLUME_STEPS, isZone, type ZoneStatus } from './protocol.js';

export type Write = StatusWrite<'SS'>;

/** Per zone, the desired state (as wire values) and the known state (the last report, plus our acknowledged sets). */
export class ZoneBook extends StatusZoneBook<'SS', ZoneStatus> {
  constructor(zones: number) {
    super({
      source: 'SS',
      volumeSteps: VOLUME_STEPS,
      sourceCount: SOURCE_COUNT,
      checkZone: (channel) => (isZone(channel, zones) ? undefined : `no zone ${channel}; zones are 1..${zones}`),
    });
  }
}
