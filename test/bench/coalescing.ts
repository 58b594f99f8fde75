// The write path's coalescing steps (ARCHITECTURE.md, "The write path"), each against a revision without it. The
// production code has no switch for them: BENCH_AGAINST names work trees of other revisions, each with its own
// `npm run build` (a commit with one step replaced by the plain code), as `name=/path/to/tree,...`; each runs as a
// daemon of its own beside this tree's build, in the same run, alternating: the volume PUT under wrk against bare
// uWS (the HTTP turn's end-of-turn flush, the group commit), MQTT volume-command bursts and the state fan-out of a
// PUT through a real mosquitto (the bridge's two steps). The Monoprice drag measures the drivers' intents
// (monoprice.ts: driver against one command per change) and needs no other revision.
import { existsSync } from 'node:fs';
import path from 'node:path';
import mqtt from 'mqtt';
import { MOSQUITTO, startBroker, Watcher } from '../helpers/mosquitto.js';
import { type BaselineProcess, startBaseline } from './lib/baseline.js';
import { type BenchDaemon, startBenchDaemon } from './lib/daemon-process.js';
import { type Fixture, setupPlayers } from './lib/fixture.js';
import { readCpuNs, readWriteCalls } from './lib/proc.js';
import { makeRow, type Row, type SectionOptions, skippedRow } from './lib/report.js';
import { median, round } from './lib/stats.js';
import { assertWrk, generatorBound, pinProcess, runWrk, type WrkResult } from './lib/wrk.js';
import { benchMonoprice } from './monoprice.js';

const SERVER_CORE = 0;
const GENERATOR_CORE = 1;
const CONNECTIONS = 10;
/** A burst of volume commands as a dragged Home Assistant slider sends them, one zone, as fast as the client writes. */
const BURST = 200;

/** A build to measure: this tree's (no checkout), or another revision's work tree. */
interface Variant {
  name: string;
  checkout?: string;
}

const AGAINST = 'BENCH_AGAINST';

/** This tree, then the revisions BENCH_AGAINST names; an entry without a build stops the run with its fix. */
export function variantsFrom(value: string | undefined): Variant[] {
  const others = (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry): Variant => {
      const eq = entry.indexOf('=');
      if (eq <= 0) throw new Error(`${AGAINST}: "${entry}" is not name=/path/to/work-tree`);
      const checkout = path.resolve(entry.slice(eq + 1));
      if (!existsSync(path.join(checkout, 'dist/daemon/main.js')))
        throw new Error(`${AGAINST}: ${checkout} has no build; run npm run build there`);
      return { name: entry.slice(0, eq), checkout };
    });
  return [{ name: 'this tree' }, ...others];
}

const spreadOf = (values: number[]): [number, number] => [Math.min(...values), Math.max(...values)];

export async function benchCoalescing(options: SectionOptions): Promise<Row[]> {
  const rows: Row[] = [];
  const variants = variantsFrom(process.env[AGAINST]);
  if (variants.length > 1) {
    rows.push(...(await httpSteps(options, variants)));
    rows.push(...(await mqttSteps(options, variants)));
  } else {
    rows.push(
      skippedRow(
        'coalescing',
        'PUT and MQTT against revisions without a step',
        `set ${AGAINST}=name=/path/to/work-tree,... (each a revision with its own npm run build)`,
      ),
    );
  }
  const drag = await benchMonoprice(options);
  rows.push(...drag.map((row) => ({ ...row, section: 'coalescing', name: `driver intents: ${row.name}` })));
  return rows;
}

/** The group volume PUT against bare uWS, this tree and each other revision, in alternating rounds. */
async function httpSteps(options: SectionOptions, variants: Variant[]): Promise<Row[]> {
  try {
    assertWrk();
  } catch (err) {
    return [skippedRow('coalescing', 'PUT /api/players/{id}/volume against other revisions', (err as Error).message)];
  }
  const durationS = options.quick ? 2 : 5;
  const rounds = options.quick ? 2 : 5;
  const daemons: BenchDaemon[] = [];
  const fixtures: Fixture[] = [];
  let baseline: BaselineProcess | undefined;
  try {
    for (const variant of variants) {
      const daemon = await startBenchDaemon({ logLevel: 'info', stdout: 'discard', checkout: variant.checkout });
      daemons.push(daemon);
      fixtures.push(await setupPlayers(daemon.base, daemon.adminKey));
      pinProcess(daemon.pid, SERVER_CORE);
    }
    // The bare server answers the PUT with the same head, a request id of the same length included.
    const me = await fixtures[0]!.api.get('/api/users/me');
    baseline = await startBaseline({
      canned: [],
      jsonPut: ['/api/players/:id/volume'],
      requestIdLength: (me.headers.get('x-request-id') ?? '').length,
    });
    pinProcess(baseline.pid, SERVER_CORE);
    const bareServer = baseline;
    options.log(
      `coalescing: ${variants.length} daemons and bare uWS on core ${SERVER_CORE}, wrk on core ${GENERATOR_CORE}; ${rounds} rounds of ${durationS} s`,
    );
    const load = (base: string, pid: number, key: string, playerId: string, title: string, seconds: number) =>
      runWrk({
        title,
        base,
        serverPid: pid,
        method: 'PUT',
        path: `/api/players/${playerId}/volume`,
        headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
        bodies: [JSON.stringify({ volume: 0.25 }), JSON.stringify({ volume: 0.75 })],
        connections: CONNECTIONS,
        durationS: seconds,
        core: GENERATOR_CORE,
      });
    const run = async (
      i: number | 'bare',
      title: string,
      seconds: number,
    ): Promise<{ wrk: WrkResult; writesPerRequest: number }> => {
      if (i === 'bare')
        return {
          wrk: await load(bareServer.base, bareServer.pid, '', fixtures[0]!.playerId, title, seconds),
          writesPerRequest: Number.NaN,
        };
      const d = daemons[i]!;
      const before = readWriteCalls(d.pid);
      const wrk = await load(d.base, d.pid, d.adminKey, fixtures[i]!.playerId, title, seconds);
      if (wrk.non2xx > 0 || wrk.errors > 0)
        throw new Error(`${title}: ${wrk.non2xx} non-2xx answers, ${wrk.errors} socket errors`);
      return { wrk, writesPerRequest: (readWriteCalls(d.pid) - before) / wrk.requests };
    };
    const warmup = options.quick ? 1 : 2;
    await run('bare', 'bare warm-up', warmup);
    for (let i = 0; i < daemons.length; i++) await run(i, `${variants[i]!.name} warm-up`, warmup);
    const bare: WrkResult[] = [];
    const subjects = variants.map(() => ({
      runs: [] as WrkResult[],
      writes: [] as number[],
      vsBare: [] as number[],
      vsOn: [] as number[],
    }));
    for (let round_ = 1; round_ <= rounds; round_++) {
      const b = (await run('bare', `bare round ${round_}`, durationS)).wrk;
      bare.push(b);
      const thisRound: number[] = [];
      for (let i = 0; i < daemons.length; i++) {
        const { wrk, writesPerRequest } = await run(i, `${variants[i]!.name} round ${round_}`, durationS);
        const s = subjects[i]!;
        s.runs.push(wrk);
        s.writes.push(writesPerRequest);
        s.vsBare.push(wrk.reqPerSec / b.reqPerSec);
        thisRound.push(wrk.reqPerSec);
        options.log(
          `coalescing: round ${round_} ${variants[i]!.name}: ${round(wrk.reqPerSec)} req/s (bare ${round(b.reqPerSec)}), ${round(wrk.serverCpuUsPerRequest)} µs CPU/req, ${round(writesPerRequest, 3)} write calls/req`,
        );
      }
      // What the step gains, per round: this tree against this variant.
      for (let i = 0; i < daemons.length; i++) subjects[i]!.vsOn.push(thisRound[0]! / thisRound[i]!);
    }
    const bareCpu = median(bare.map((r) => r.serverCpuUsPerRequest));
    return variants.map((variant, i) => {
      const s = subjects[i]!;
      const bound = [...s.runs, ...bare].filter(generatorBound).length;
      const cpu = median(s.runs.map((r) => r.serverCpuUsPerRequest));
      return makeRow({
        section: 'coalescing',
        name: `PUT /api/players/{id}/volume (2 zones), ${variant.name}`,
        value: median(s.runs.map((r) => r.reqPerSec)),
        unit: 'req/s',
        baseline: median(bare.map((r) => r.reqPerSec)),
        ratio: bound ? Number.NaN : median(s.vsBare),
        spread: bound ? undefined : spreadOf(s.vsBare),
        note:
          (bound ? `refused: wrk's core was full while the server's was not in ${bound} run(s); ` : '') +
          `CPU ${round(cpu)} µs/req (bare ${round(bareCpu)}); ${round(median(s.writes), 3)} write calls/req; ` +
          (i === 0
            ? 'the subject'
            : `this tree ÷ this: ${round(median(s.vsOn))} (${spreadOf(s.vsOn)
                .map((r) => round(r))
                .join('–')})`),
        details: {
          checkout: variant.checkout ?? 'this tree',
          reqPerSec: s.runs.map((r) => round(r.reqPerSec)),
          vsBare: s.vsBare,
          vsOn: s.vsOn,
          writesPerRequest: s.writes,
          cpuUsPerRequest: s.runs.map((r) => round(r.serverCpuUsPerRequest)),
        },
      });
    });
  } finally {
    for (const d of daemons) await d.stop();
    await baseline?.stop();
  }
}

interface MqttRun {
  /** Daemon CPU per command (burst) or per PUT (fan-out), µs. */
  cpuUs: number;
  /** Until the last value shows on the state topics, ms (per burst, or per PUT). */
  ms: number;
  /** State messages the hub received for it. */
  messages: number;
}

interface MqttSide {
  variant: Variant;
  daemon: BenchDaemon;
  fixture: Fixture;
  hub: Watcher;
  base: string;
  burst: MqttRun[];
  fanout: MqttRun[];
}

/** Volume-command bursts and a PUT's state fan-out through mosquitto, this tree against each other revision. */
async function mqttSteps(options: SectionOptions, variants: Variant[]): Promise<Row[]> {
  if (!existsSync(MOSQUITTO))
    return [
      skippedRow(
        'coalescing',
        'MQTT commands and state against other revisions',
        `${MOSQUITTO} is missing (apt-get install mosquitto)`,
      ),
    ];
  const cleanups: Array<() => unknown> = [];
  const t = { teardown: (fn: () => unknown) => void cleanups.push(fn) };
  const rounds = options.quick ? 2 : 5;
  const fanouts = options.quick ? 30 : 100;
  try {
    const broker = await startBroker(t);
    const sides: MqttSide[] = [];
    for (const [i, variant] of variants.entries()) {
      const base = `azc/bench-${i}`;
      const daemon = await startBenchDaemon({
        logLevel: 'warn',
        checkout: variant.checkout,
        args: ['--mqtt-url', broker.url, '--mqtt-account', 'admin', '--mqtt-base-topic', base],
      });
      cleanups.push(() => daemon.stop());
      const fixture = await setupPlayers(daemon.base, daemon.adminKey);
      // The group's two zones at one volume, so a group change moves both to the same value.
      for (const id of fixture.zoneIds.slice(0, 2)) await fixture.api.put(`/api/zones/${id}/volume`, { volume: 0.5 });
      const hub = await Watcher.connect(t, broker.url, [
        `${base}/zone/+/volume`,
        `${base}/player/+/volume`,
        `${base}/status`,
      ]);
      await hub.value(`${base}/status`, 'online');
      sides.push({ variant, daemon, fixture, hub, base, burst: [], fanout: [] });
    }
    const commander = await mqtt.connectAsync(broker.url);
    cleanups.push(() => commander.endAsync(true));
    for (let r = 0; r <= rounds; r++) {
      for (const side of sides) {
        // Intermediate values stay within 1-97; the last one (98-100) differs from the round before.
        const b = await burst(side, commander, 98 + (r % 3));
        const f = await fanout(side, fanouts, r * fanouts);
        // Round 0 warms each daemon up (JIT, page cache) and is not kept.
        if (r === 0) continue;
        side.burst.push(b);
        side.fanout.push(f);
        options.log(
          `coalescing: round ${r} ${side.variant.name}: burst of ${BURST} commands ${round(b.ms)} ms, ${round(b.cpuUs)} µs CPU/command, ${b.messages} state messages; ` +
            `PUT fan-out ${round(f.ms)} ms, ${round(f.cpuUs)} µs CPU/PUT, ${round(f.messages)} state messages/PUT`,
        );
      }
    }
    const on = sides[0]!;
    return sides.flatMap((side) => [
      mqttRow(
        `MQTT burst of ${BURST} volume commands to one zone, ${side.variant.name}`,
        'µs CPU/command',
        side.burst,
        side === on ? undefined : on.burst,
      ),
      mqttRow(
        `PUT group volume (2 zones): state fan-out to MQTT, ${side.variant.name}`,
        'µs CPU/PUT',
        side.fanout,
        side === on ? undefined : on.fanout,
      ),
    ]);
  } finally {
    for (const cleanup of cleanups.reverse())
      await Promise.resolve(cleanup()).catch(() => {
        // A cleanup that fails (a daemon already gone) must not stop the others.
      });
  }
}

/** BURST volume commands to a zone outside the PUT's group, published at once; done when the state shows `final`. */
async function burst(side: MqttSide, commander: mqtt.MqttClient, final: number): Promise<MqttRun> {
  const topic = `${side.base}/zone/${side.fixture.zoneIds[2]}/volume`;
  const seen = side.hub.received.length;
  const cpu = readCpuNs(side.daemon.pid);
  const started = performance.now();
  const shown = side.hub.value(topic, String(final));
  for (let n = 1; n <= BURST; n++) commander.publish(`${topic}/set`, String(n === BURST ? final : 1 + (n % 97)));
  await shown;
  const ms = performance.now() - started;
  const messages = side.hub.received.slice(seen).filter((m) => m.topic === topic).length;
  return { cpuUs: (readCpuNs(side.daemon.pid) - cpu) / 1000 / BURST, ms, messages };
}

/** `count` group-volume PUTs one after another, each done when both zones' and the player's state show it. */
async function fanout(side: MqttSide, count: number, from: number): Promise<MqttRun> {
  const { fixture, hub, base, daemon } = side;
  const topics = [
    `${base}/zone/${fixture.zoneIds[0]}/volume`,
    `${base}/zone/${fixture.zoneIds[1]}/volume`,
    `${base}/player/${fixture.playerId}/volume`,
  ];
  const seen = hub.received.length;
  const cpu = readCpuNs(daemon.pid);
  const started = performance.now();
  for (let n = 0; n < count; n++) {
    const percent = 10 + ((from + n) % 80);
    const arrived = hub.until(
      (w) => topics.every((topic) => w.latest.get(topic) === String(percent)),
      `the state of a ${percent}% PUT`,
    );
    const res = await fixture.api.put(`/api/players/${fixture.playerId}/volume`, { volume: percent / 100 });
    if (res.status !== 204) throw new Error(`PUT volume answered ${res.status}`);
    await arrived;
  }
  return {
    cpuUs: (readCpuNs(daemon.pid) - cpu) / 1000 / count,
    ms: (performance.now() - started) / count,
    messages: (hub.received.length - seen) / count,
  };
}

/** One variant's MQTT figure; against this tree (`on`) when it is another revision. */
function mqttRow(name: string, unit: string, runs: MqttRun[], on: MqttRun[] | undefined): Row {
  const ratios = on ? runs.map((run, k) => run.cpuUs / on[k]!.cpuUs) : [];
  return makeRow({
    section: 'coalescing',
    name,
    value: median(runs.map((x) => x.cpuUs)),
    unit,
    baseline: on && median(on.map((x) => x.cpuUs)),
    ratio: on ? median(ratios) : undefined,
    spread: on ? spreadOf(ratios) : undefined,
    note:
      `until the last value is on the state topics ${round(median(runs.map((x) => x.ms)))} ms; ${round(median(runs.map((x) => x.messages)))} state messages` +
      (on ? '; ratio: CPU of this revision ÷ this tree, per round' : '; the baseline of the variants below'),
    details: { runs },
  });
}
