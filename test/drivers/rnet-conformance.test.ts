// The RNET driver passes the shared conformance suite: real serialport, socat pty, byte-exact emulator.
import t from 'tap';
import { RnetDriver } from '../../drivers/rnet/driver.js';
import { RnetEmulator } from '../../drivers/rnet/emulator.js';
import { createPtyPair } from '../helpers/pty.js';
import { driverConformance } from './conformance.js';
import { FAST, STEPS, fromEmulated, observed, toEmulated } from './rnet-rig.js';

driverConformance(t, {
  expect: { zones: 6, inputs: 6, volumeSteps: STEPS },
  async create(t) {
    const pty = await createPtyPair();
    const emulator = new RnetEmulator({ controllers: 1 });
    await emulator.attachPath(pty.b);
    const driver = new RnetDriver({ serialPort: pty.a, ...FAST });
    t.teardown(async () => {
      await driver.stop();
      await emulator.close();
      await pty.close();
    });
    return {
      driver,
      // As heard on a real bus: the change is made and the keypad's event goes out on it.
      keypad: (channel, change) => emulator.keypad(channel, toEmulated(change)),
      hardware: (channel) => fromEmulated(emulator.state(channel)),
      observed: () => observed(emulator),
      volumeWrites: (channel) => emulator.commands.filter((c) => c.startsWith(`volume ${channel} `)).length,
    };
  },
});
