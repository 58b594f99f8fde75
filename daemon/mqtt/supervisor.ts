// Runs the MQTT bridge with the settings that apply now and replaces it when an admin changes them: no restart. The
// MQTT client is loaded only once a broker URL is set.
import type { MqttConfig } from '../config.js';
import type { BridgeControl, BridgeStatus } from '../domain/settings/index.js';
import type { EventBus } from '../domain/shared/index.js';
import type { BridgeDeps, MqttBridge } from './bridge.js';
import { type BridgeIdentity, defaultBaseTopic, type ResolvedBridgeOptions, resolveBridgeOptions } from './options.js';

export interface SupervisorDeps {
  /** The settings that apply now (start-up ones merged with the dashboard's). */
  settings(): MqttConfig;
  /** The appliance as Home Assistant shows it; asked at each start (the listen port is known by then). */
  identity(): BridgeIdentity;
  /** Everything else a bridge with these options needs: the domain, the account it acts as, the broker's memory. */
  bridgeDeps(options: ResolvedBridgeOptions): Omit<BridgeDeps, 'options'>;
  /** The domain's bus: a restore (configuration.replaced) has the bridge resync. */
  bus: EventBus;
}

export class BridgeSupervisor implements BridgeControl {
  private bridge: MqttBridge | undefined;
  /** Starts and stops run one after the other: two quick settings changes never leave two bridges. */
  private queue: Promise<void> = Promise.resolve();
  private stopped = false;
  /** The settings the running bridge (or the lack of one) was started with. */
  private startedWith: string | undefined;

  constructor(private readonly deps: SupervisorDeps) {}

  /** Undefined while no broker URL is set (health then leaves the field out). */
  get status(): BridgeStatus | undefined {
    return this.bridge?.status;
  }

  topics(): { baseTopic: string; discoveryPrefix: string } {
    const config = this.deps.settings();
    return {
      baseTopic: config.baseTopic || defaultBaseTopic(this.deps.identity().udn),
      discoveryPrefix: config.discoveryPrefix,
    };
  }

  /** Starts a bridge on the settings that apply now, and follows restores (resync) until stopped. */
  start(): Promise<void> {
    this.deps.bus.subscribe(
      'mqtt-supervisor',
      (event) => {
        if (event.type === 'configuration.replaced') this.resync();
      },
      { internal: true },
    );
    return this.apply();
  }

  /**
   * Stops the bridge that runs (its `offline` goes out first) and starts one with the settings that apply now.
   * Resolves once the new one is connecting; it never waits for the broker.
   */
  apply(): Promise<void> {
    const run = this.queue.then(async () => {
      await this.bridge?.stop();
      this.bridge = undefined;
      const config = this.deps.settings();
      this.startedWith = JSON.stringify(config);
      if (this.stopped || !config.url) return;
      const options = resolveBridgeOptions(config, this.deps.identity());
      // Loaded only when a broker is configured: the MQTT client is the largest module tree the daemon has.
      const { MqttBridge } = await import('./bridge.js');
      if (this.stopped) return;
      this.bridge = new MqttBridge({ options, ...this.deps.bridgeDeps(options) });
      this.bridge.start();
    });
    this.queue = run.catch(() => {
      // Its caller gets the error; the queue only waits for the turn to end.
    });
    return run;
  }

  /**
   * After a restore: the bridge publishes the difference to what it sees now, or, when the restore brought other
   * bridge settings (a backup carries them), is replaced by one on those.
   */
  resync(): void {
    if (JSON.stringify(this.deps.settings()) !== this.startedWith) void this.apply();
    else this.bridge?.resync();
  }

  stop(): Promise<void> {
    this.deps.bus.removeListeners('mqtt-supervisor');
    this.stopped = true;
    return this.apply();
  }
}
