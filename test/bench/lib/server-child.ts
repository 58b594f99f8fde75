// What the baseline servers share: each starts from a config its parent sends over IPC and reports where it listens.
import type { TemplatedApp, UwsModule } from '../../../daemon/http/uws.js';

/** Answers 404 to every other path, listens on a free port of 127.0.0.1 and tells the parent which. */
export function serve(app: TemplatedApp, uws: UwsModule, source: string, name: string): void {
  app.any('/*', (res) => {
    res.writeStatus('404 Not Found').end();
  });
  app.listen('127.0.0.1', 0, (socket) => {
    if (!socket) {
      process.send?.({ type: 'error', message: `${name}: cannot listen on 127.0.0.1` });
      process.exit(1);
    }
    process.send?.({ type: 'listening', port: uws.us_socket_local_port(socket), uws: source });
  });
}

/** Says it is ready, runs `start` with the config the parent sends, and ends with the parent. */
export function startOnConfig<C>(start: (config: C) => void): void {
  process.once('message', (message: { type: string; config: C }) => {
    if (message.type === 'config') start(message.config);
  });
  process.on('disconnect', () => process.exit(0));
  process.send?.({ type: 'ready' });
}
