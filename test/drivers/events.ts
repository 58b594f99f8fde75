// Waiting for driver events in tests: a promise for the next matching one, and the matchers the driver tests share.
import type { AmplifierDriver, DriverEvent } from '../../drivers/driver.js';
import { within } from '../helpers/wait-for.js';

type Of<K extends DriverEvent['type']> = Extract<DriverEvent, { type: K }>;

/**
 * The next event matching `test`. Unbounded by itself: a rig on virtual time awaits it with until(), a test on a
 * real line with nextEventWithin().
 */
export function nextEvent<E extends DriverEvent>(
  driver: AmplifierDriver,
  test: (event: DriverEvent) => event is E,
): Promise<E> {
  return new Promise((resolve) => {
    const off = driver.onEvent((event) => {
      if (!test(event)) return;
      off();
      resolve(event);
    });
  });
}

/** For tests on a real line (pty, tcp://): the next matching event within the suite's wait limit. */
export function nextEventWithin<E extends DriverEvent>(
  driver: AmplifierDriver,
  test: (event: DriverEvent) => event is E,
  what: string,
): Promise<E> {
  return within(nextEvent(driver, test), undefined, what);
}

export const isStatus =
  (online: boolean) =>
  (e: DriverEvent): e is Of<'status'> =>
    e.type === 'status' && e.online === online;

export const isZoneEvent =
  (channel: number) =>
  (e: DriverEvent): e is Of<'zone'> =>
    e.type === 'zone' && e.channel === channel;

export const isAvailability =
  (channel: number, available: boolean) =>
  (e: DriverEvent): e is Of<'availability'> =>
    e.type === 'availability' && e.channel === channel && e.available === available;

export const isDescribed = (e: DriverEvent): e is Of<'described'> => e.type === 'described';

export const zoneEvents = (events: readonly DriverEvent[], channel?: number): Array<Of<'zone'>> =>
  events.filter((e): e is Of<'zone'> => e.type === 'zone' && (channel === undefined || e.channel === channel));
