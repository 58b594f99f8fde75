// Load-generator child for newline-delimited JSON-RPC over TCP (snapserver's control port): closed loop per connection.
import net from 'node:net';
import type { JsonRpcSpec, LoadResult } from './load.js';
import { summarize } from './stats.js';

function run(spec: JsonRpcSpec): Promise<LoadResult> {
  return new Promise((resolve) => {
    const latencies: number[] = [];
    let ok = 0;
    let failed = 0;
    let errors = 0;
    let notifications = 0;
    let nextId = 1;
    let open = spec.connections;
    const started = performance.now();
    const deadline = started + spec.durationS * 1000;
    const cpuBefore = process.cpuUsage();
    const finish = () => {
      if (--open > 0) return;
      const durationS = (performance.now() - started) / 1000;
      const cpu = process.cpuUsage(cpuBefore);
      resolve({
        title: spec.title,
        durationS,
        connections: spec.connections,
        pipelining: 1,
        overallRate: undefined,
        completed: ok + failed,
        ok,
        non2xx: failed,
        statusCodes: { result: ok, error: failed, notifications },
        errors,
        timeouts: 0,
        reqPerSec: ok / durationS,
        latencyMs: summarize(latencies),
        generatorCpuShare: (cpu.user + cpu.system) / 1000 / (durationS * 1000),
      });
    };
    for (let c = 0; c < spec.connections; c++) {
      const socket = net.connect({ host: spec.host, port: spec.port });
      socket.setNoDelay(true);
      let buffer = '';
      let pendingId = 0;
      let sentAt = 0;
      let turn = c;
      let done = false;
      const end = () => {
        if (done) return;
        done = true;
        socket.destroy();
        finish();
      };
      const send = () => {
        if (performance.now() >= deadline) return end();
        pendingId = nextId++;
        const body = spec.bodies[turn++ % spec.bodies.length]!;
        sentAt = performance.now();
        socket.write(`{"id":${pendingId},${body.slice(1)}\r\n`);
      };
      socket.on('connect', send);
      socket.on('error', () => {
        errors++;
        end();
      });
      socket.on('close', end);
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        buffer += chunk;
        let newline: number;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          // Responses carry our numeric id; notifications (Client.OnVolumeChanged to every control client) do not.
          const id = /^\{"id":(\d+),/.exec(line) ?? /"id":(\d+),"jsonrpc"/.exec(line);
          if (!id || Number(id[1]) !== pendingId) {
            notifications++;
            continue;
          }
          latencies.push(performance.now() - sentAt);
          if (line.includes('"error"')) failed++;
          else ok++;
          send();
        }
      });
    }
  });
}

process.once('message', (message: { type: string; spec: JsonRpcSpec }) => {
  if (message.type !== 'run') return;
  setTimeout(() => process.exit(3), (message.spec.durationS + 30) * 1000).unref();
  run(message.spec).then(
    (result) => process.send?.({ type: 'result', result }, () => process.exit(0)),
    (err: unknown) => {
      // A load that fails ends the child with the reason, instead of an unhandled rejection.
      process.stderr.write(`${(err as Error).stack ?? err}\n`);
      process.exit(1);
    },
  );
});
process.send?.({ type: 'ready' });
