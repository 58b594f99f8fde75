// Desired vs hardware state of the Monoprice zones: the shared status-line book, addressed by unit.
import { StatusZoneBook, type Write as StatusWrite } from '../status-zone-book.js';
import { SOURCE_COUNT, VOLUME_STEPS, isZoneAddress, type ZoneStatus } from './protocol.js';

export type Write = StatusWrite<'CH'>;

/** Per zone, the desired state (as wire values) and the known state (the last read-back, plus our acknowledged sets). */
export class ZoneBook extends StatusZoneBook<'CH', ZoneStatus> {
  constructor() {
    super({
      source: 'CH',
      volumeSteps: VOLUME_STEPS,
      sourceCount: SOURCE_COUNT,
      checkZone: (channel) => (isZoneAddress(channel) ? undefined : `no zone ${channel}; zones are 11..16, 21..26, 31..36`),
    });
  }
}
