// The Monoprice emulator on its own: makes a socat pty pair, links the daemon's end at --path, and emulates the amplifier
// on the other end until SIGINT/SIGTERM, which remove the link again.
import { lstatSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type EmulatorOptions, MonopriceEmulator } from '../drivers/monoprice/emulator.js';
import { createPtyPair, type PtyPair } from '../test/helpers/pty.js';

const USAGE =
  'usage: npm run emulator:monoprice -- --path /tmp/ttyAMP [--units 1..3] [--byte-delay-ms 1.04]\n' +
  '  variants: [--echo bytes|line|none] [--no-prompt] [--absent prompt|silent] [--accept-sets-while-off]\n' +
  '  --path LINK    where to create the daemon end of the line (a symlink to a new pseudo-terminal)\n' +
  '  --attach PTY   instead: emulate on an existing pty end you made yourself with socat\n';

function arg(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

/** A path may be taken over only if nothing is there or it is a symlink (a link left by an earlier run). */
function checkFree(link: string): string | undefined {
  try {
    return lstatSync(link).isSymbolicLink() ? undefined : `${link} exists and is not a symlink; choose another --path`;
  } catch {
    return undefined;
  }
}

async function main(argv: string[]): Promise<number> {
  const link = arg(argv, '--path');
  const attach = arg(argv, '--attach');
  if (!link === !attach || argv.includes('--help')) {
    process.stderr.write(USAGE);
    return 2;
  }
  const emulator = new MonopriceEmulator({
    units: Number(arg(argv, '--units') ?? 1),
    byteDelayMs: Number(arg(argv, '--byte-delay-ms') ?? 1.04),
    echo: (arg(argv, '--echo') ?? 'bytes') as EmulatorOptions['echo'],
    promptAfterCommand: !argv.includes('--no-prompt'),
    absentUnits: (arg(argv, '--absent') ?? 'prompt') as EmulatorOptions['absentUnits'],
    ignoreSetsWhileOff: !argv.includes('--accept-sets-while-off'),
  });
  emulator.on('command', (command: string) => process.stderr.write(`emulator: ${JSON.stringify(command)}\n`));

  let pty: PtyPair | undefined;
  let deviceDir: string | undefined;
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      await emulator.close();
      // socat removes both links when it gets SIGTERM.
      await pty?.close();
      if (deviceDir) rmSync(deviceDir, { recursive: true, force: true });
      process.stderr.write(pty ? `emulator: stopped; ${pty.a} removed\n` : 'emulator: stopped\n');
    })());
  const finish = (code: number) => () => void stop().then(() => process.exit(code));
  process.once('SIGINT', finish(0));
  process.once('SIGTERM', finish(0));

  try {
    if (link) {
      const taken = checkFree(path.resolve(link));
      if (taken) throw new Error(taken);
      deviceDir = mkdtempSync(path.join(tmpdir(), 'azcd-emulator-'));
      pty = await createPtyPair({ a: path.resolve(link), b: path.join(deviceDir, 'amplifier') });
      await emulator.attachPath(pty.b);
    } else {
      await emulator.attachPath(attach!);
    }
  } catch (err) {
    process.stderr.write(`emulator: cannot start: ${(err as Error).message}\n`);
    await stop();
    return 1;
  }
  emulator.on('close', () => {
    process.stderr.write('emulator: port closed\n');
    finish(0)();
  });
  const daemonEnd = link ? path.resolve(link) : undefined;
  process.stderr.write(
    daemonEnd
      ? `emulator: ready, ${emulator.units} unit(s); daemon port ${daemonEnd}\n` +
          `  start the daemon with: npm start -- --driver monoprice --serial-port ${daemonEnd} --state-dir ${path.join(tmpdir(), 'azcd-monoprice')}\n`
      : `emulator: ready, ${emulator.units} unit(s) on ${attach}\n`,
  );
  return 0;
}

const code = await main(process.argv.slice(2));
if (code !== 0) process.exit(code);
