// The coalescing steps a volume change passes on its way to the amplifier (ARCHITECTURE.md, "The write path"), as
// switches the benchmark turns off one at a time to measure what each gains. Production runs with all of them on:
// the switches are read once at start from AZCD_BENCH_UNCOALESCED, which only the benchmark sets.

/**
 * turn: a turn's requests are committed at the end of the turn that ran them, and answered in it (HttpServer's
 * endOfTurn); commit: the store's group commit, one transaction per turn with each row written once (Store.commitSoon);
 * mqtt-commands: the latest volume per command topic, applied once per turn (mqtt/commands.ts); mqtt-state: the
 * bridge's retained state, published once per turn after the last event of a change (mqtt/bridge.ts). The drivers'
 * own step (only the latest intent per zone goes on the wire) is not switchable: the serial line needs it.
 */
export const COALESCING_STEPS = ['turn', 'commit', 'mqtt-commands', 'mqtt-state'] as const;
export type CoalescingStep = (typeof COALESCING_STEPS)[number];

/** Which steps are on. */
export type Coalescing = Readonly<Record<CoalescingStep, boolean>>;

export const ALL_COALESCING: Coalescing = { turn: true, commit: true, 'mqtt-commands': true, 'mqtt-state': true };

/** The benchmark switch: a comma-separated list of steps to turn off. */
export const BENCH_SWITCH = 'AZCD_BENCH_UNCOALESCED';

/** The steps from the environment: all on unless the benchmark switch names some; an unknown name stops the start. */
export function coalescingFrom(env: NodeJS.ProcessEnv): Coalescing {
  const value = env[BENCH_SWITCH];
  if (!value) return ALL_COALESCING;
  const off = value
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = off.filter((name) => !(COALESCING_STEPS as readonly string[]).includes(name));
  if (unknown.length)
    throw new Error(
      `${BENCH_SWITCH} names ${unknown.join(', ')}; the steps are ${COALESCING_STEPS.join(', ')} (a benchmark switch: leave it unset)`,
    );
  return Object.fromEntries(COALESCING_STEPS.map((step) => [step, !off.includes(step)])) as Coalescing;
}

/** The steps turned off, for the start-up log line that says so. */
export const stepsOff = (coalescing: Coalescing): CoalescingStep[] =>
  COALESCING_STEPS.filter((step) => !coalescing[step]);
