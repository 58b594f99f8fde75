// Starts the daemon's services one after another and stops the ones that started in reverse order, also when a
// later start fails, so nothing is left open (a bound port, an open database, a running driver).
import type { Logger } from './log.js';

interface Started {
  name: string;
  stop: () => unknown;
}

export class Lifecycle {
  private readonly started: Started[] = [];

  constructor(private readonly logger: Logger) {}

  /** Runs `start`; once it succeeded, `stop` is registered to run when the lifecycle stops. */
  async start<T>(name: string, start: () => T | Promise<T>, stop: () => unknown): Promise<T> {
    const value = await start();
    this.started.push({ name, stop });
    return value;
  }

  /** The names of the started services, in start order. */
  get names(): string[] {
    return this.started.map((s) => s.name);
  }

  /**
   * Stops every started service, last started first. A failing stop is logged and the others still stop; the
   * first failure is rethrown at the end.
   */
  async stop(): Promise<void> {
    let failure: unknown;
    for (const service of this.started.splice(0).reverse()) {
      try {
        await service.stop();
      } catch (err) {
        this.logger.error({ err, service: service.name }, 'error while stopping a service');
        failure ??= err;
      }
    }
    if (failure !== undefined) throw failure;
  }
}
