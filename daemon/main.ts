#!/usr/bin/env node
// azcd entry point: configuration, start-up order, systemd notification, SSDP and graceful shutdown.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ConfigError, USAGE, loadConfig } from './config.js';
import { createLogger } from './log.js';
import { Daemon, VERSION, type InitialAdmin } from './app.js';
import type { SsdpAnnouncer } from './discovery/ssdp.js';
import { createNotifier, startWatchdog } from '../native/index.js';

/** Event-loop delay above which the watchdog is starved on purpose, so systemd restarts a wedged daemon. */
const WATCHDOG_MAX_LAG_MS = 5000;

function printCredentials(admin: InitialAdmin, underSystemd: boolean): void {
  const lines = underSystemd
    ? [`azcd: first administrator "${admin.username}" created; credentials are in ${admin.file} (mode 0600).`]
    : [
        'azcd: first start, created the administrator account (shown once; also saved in the file below):',
        `  username: ${admin.username}`,
        `  password: ${admin.password}`,
        `  API key:  ${admin.apiKey}`,
        `  saved in: ${admin.file} (mode 0600)`,
      ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function main(): Promise<void> {
  let loaded;
  try {
    loaded = loadConfig(process.argv.slice(2));
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`azcd: ${err.message}\n${USAGE}\n`);
      process.exit(2);
    }
    throw err;
  }
  if (loaded.help) {
    process.stdout.write(`azcd ${VERSION}\n${USAGE}\n`);
    return;
  }
  const { config } = loaded;
  const logger = createLogger(config.logLevel);
  const notifier = createNotifier((msg) => logger.warn(msg));
  const underSystemd = Boolean(process.env.NOTIFY_SOCKET || process.env.INVOCATION_ID);

  const daemon = await Daemon.create({ config, logger });
  const { port, initialAdmin } = await daemon.start(process.env.AZC_ADMIN_PASSWORD || undefined);
  const shown = config.host === '0.0.0.0' ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
  process.stdout.write(`azcd ${VERSION} listening on http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port} (dashboard: http://${shown}:${port}/, driver: ${daemon.driver.name})\n`);
  if (initialAdmin) printCredentials(initialAdmin, underSystemd);

  let ssdp: SsdpAnnouncer | undefined;
  if (config.ssdp) {
    // Loaded only when enabled: development runs never pay for node-ssdp and its dependencies.
    const { SsdpAnnouncer } = await import('./discovery/ssdp.js');
    ssdp = new SsdpAnnouncer({
      udn: daemon.udn,
      location: `http://${config.host}:${port}/description.xml`,
      interfaces: config.ssdpInterfaces.length ? config.ssdpInterfaces : undefined,
      version: VERSION,
      log: (level, msg, fields) => logger[level]({ component: 'ssdp', ...fields }, msg),
    });
    await ssdp.start();
  }

  const lag = monitorEventLoopDelay({ resolution: 50 });
  lag.enable();
  const stopWatchdog = startWatchdog(
    notifier,
    () => {
      const healthy = lag.max / 1e6 < WATCHDOG_MAX_LAG_MS && daemon.store.healthy();
      lag.reset();
      return healthy;
    },
    (msg) => logger.warn(msg),
  );
  const summary = () =>
    `listening on ${config.host}:${port}; amplifier ${daemon.driver.name} ${daemon.driver.online ? 'online' : 'offline'}; ${daemon.streams.size} event streams`;
  notifier.ready(summary());
  const unsubscribe = daemon.bus.subscribe((event) => {
    if (event.type === 'hardware.status') notifier.status(summary());
  });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    notifier.stopping();
    stopWatchdog();
    unsubscribe();
    lag.disable();
    const force = setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, 10_000);
    force.unref();
    try {
      await ssdp?.stop();
      await daemon.stop();
    } catch (err) {
      logger.error({ err }, 'error during shutdown');
      process.exitCode = 1;
    }
    logger.flush();
    clearTimeout(force);
    process.exit(process.exitCode ?? 0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`azcd: cannot start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
