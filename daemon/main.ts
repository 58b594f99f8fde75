#!/usr/bin/env node
// azcd entry point: reads the configuration, starts the daemon, prints the first-start credentials, and stops the
// daemon on SIGTERM / SIGINT. Everything that starts and stops lives in app.ts.
import path from 'node:path';
import { createNotifier, fixMallocThresholds } from '../native/index.js';
import { Daemon, type InitialAdmin, VERSION } from './app.js';
import { ConfigError, helpText, loadConfig } from './config.js';
import { canListen } from './http/server.js';
import { createLogger, flushLogSync } from './log.js';
import { PROJECT_ROOT } from './paths.js';
import { printOut } from './runtime.js';

/** A shutdown that takes longer than this exits with status 1, so systemd is never left waiting. */
const SHUTDOWN_TIMEOUT_MS = 10_000;

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
  printOut(`${lines.join('\n')}\n`);
}

/**
 * Checks that host:port can be listened on before anything is created: a start that would fail there must not leave
 * a new state folder and a new administrator behind. The daemon binds the port for good later (port 0 needs no check).
 * uWS answers whether it can; only when it cannot is node's net server asked, for the reason to give (its listen loads
 * node's cluster module and what that loads, which a daemon that starts needs nowhere else).
 */
function checkListenAddress(host: string, port: number): Promise<void> {
  if (port === 0 || canListen(host, port)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = process.getBuiltinModule('node:net').createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => {
      const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
      const why =
        err.code === 'EADDRINUSE'
          ? 'the address is in use (another azcd or another program listens there); stop the other one, or give'
          : err.code === 'EADDRNOTAVAIL'
            ? 'it is not an address of this machine; give'
            : `${err.message}; give`;
      reject(
        new Error(
          `cannot listen on ${address}: ${why} this azcd another --port or --host. Nothing was created or changed`,
        ),
      );
    });
    // Free again by now: the daemon's own listen decides.
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

async function main(): Promise<void> {
  let loaded: ReturnType<typeof loadConfig>;
  try {
    loaded = loadConfig(process.argv.slice(2));
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(
        `${err.problems.map((problem) => `azcd: ${problem}\n`).join('')}azcd: every setting is listed by azcd --help\n`,
      );
      process.exit(2);
    }
    throw err;
  }
  if (loaded.help) {
    process.stdout.write(helpText(VERSION));
    return;
  }
  const { config } = loaded;
  const logger = createLogger(config.logLevel);
  const underSystemd = Boolean(process.env.NOTIFY_SOCKET || process.env.INVOCATION_ID);
  // The addon of this installation, named: left to search, the notifier tries each folder above its module, and
  // each failed require() is path work enough to get node's path code optimised during start (scripts/bundle.mjs).
  const addonPaths = [path.join(PROJECT_ROOT, 'native', 'build', 'Release', 'azc_notify.node')];
  const notifier = createNotifier((msg) => logger.warn(msg), { addonPaths });
  // Before the first administrator's password hash, the first large block freed.
  fixMallocThresholds({ addonPaths });
  await checkListenAddress(config.host, config.port);

  const daemon = new Daemon({ config, logger, notifier });
  // The handlers come before the start: a SIGTERM while it runs (systemd stopping a unit that is starting), or right
  // after the listening line, is a clean stop, not the default action's kill with the database open.
  let stopping = false;
  let starting: ReturnType<Daemon['start']> | undefined;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS);
    force.unref();
    try {
      // A signal during the start stops what the start made, once it is made.
      await starting?.catch(() => undefined);
      await daemon.stop();
    } catch (err) {
      logger.error({ err }, 'error during shutdown');
      process.exitCode = 1;
    }
    flushLogSync(logger);
    clearTimeout(force);
    process.exit(process.exitCode ?? 0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  starting = daemon.start(config.adminPassword);
  const { port, initialAdmin, services } = await starting;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const shown = config.host === '0.0.0.0' ? 'localhost' : host;
  printOut(
    `azcd ${VERSION} listening on http://${host}:${port} (dashboard: http://${shown}:${port}/, amplifiers: ${services.amplifiers.list.map((a) => (a.name === a.driver.name ? a.name : `${a.name} (${a.driver.name})`)).join(', ')})\n`,
  );
  if (initialAdmin) printCredentials(initialAdmin, underSystemd);
}

main().catch((err: unknown) => {
  process.stderr.write(`azcd: cannot start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
