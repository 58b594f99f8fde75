// The uWS loader picks the binary built for the running Node ABI, architecture and glibc, and never a JS fallback.
import t from 'tap';
import { chooseUws, currentRuntime, loadUws, type Runtime } from '../../daemon/http/uws.js';

const NODE_20 = { platform: 'linux', abi: '115', nodeVersion: 'v20.19.2' };
const NODE_22 = { platform: 'linux', abi: '127', nodeVersion: 'v22.12.0' };
const NODE_24 = { platform: 'linux', abi: '137', nodeVersion: 'v24.22.2' };

/** A fake require that has exactly the given module ids; records every id asked for. */
function loader(available: string[]) {
  const asked: string[] = [];
  const load = (pkg: string, file?: string) => {
    const id = file ? `${pkg}/${file}` : pkg;
    asked.push(id);
    if (available.includes(id)) return { App: () => id };
    throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
  };
  return { load, asked };
}

const rt = (base: Omit<Runtime, 'arch' | 'glibc'>, arch: string, glibc: string | undefined): Runtime => ({
  ...base,
  arch,
  glibc,
});

t.test('Node 20 loads the truffle binary on every board, armv7 and old glibc included', async (t) => {
  for (const arch of ['x64', 'arm64', 'arm']) {
    const { load } = loader([`@trufflesuite/uws-js-unofficial/binaries/uws_linux_${arch}_115.node`]);
    t.equal(
      chooseUws(rt(NODE_20, arch, '2.36'), load).source,
      `@trufflesuite/uws-js-unofficial (uws_linux_${arch}_115.node)`,
    );
  }
});

t.test('Node 22 and 24 load the btc-vision binary where glibc is 2.38 or newer', async (t) => {
  for (const [node, abi] of [
    [NODE_22, '127'],
    [NODE_24, '137'],
  ] as const) {
    for (const arch of ['x64', 'arm64']) {
      const { load } = loader([`@btc-vision/uwebsockets.js/uws_linux_${arch}_${abi}.node`]);
      t.equal(
        chooseUws(rt(node, arch, '2.41'), load).source,
        `@btc-vision/uwebsockets.js (uws_linux_${arch}_${abi}.node)`,
      );
    }
  }
});

t.test('an official uWebSockets.js the owner installed comes first', async (t) => {
  const { load } = loader(['uWebSockets.js', '@trufflesuite/uws-js-unofficial/binaries/uws_linux_x64_115.node']);
  t.equal(chooseUws(rt(NODE_20, 'x64', '2.36'), load).source, 'uWebSockets.js');
});

t.test(
  'Node 24 on bookworm (glibc 2.36) is refused with the combinations that work, without loading the binary',
  async (t) => {
    const { load, asked } = loader(['@btc-vision/uwebsockets.js/uws_linux_x64_137.node']);
    t.throws(() => chooseUws(rt(NODE_24, 'x64', '2.36'), load), {
      message:
        /Node v24\.22\.2 \(ABI 137\) on linux x64 with glibc 2\.36.*Node\.js 20 on Linux x64, arm64 or armv7.*Node\.js 22 or 24 on Linux x64 or arm64 with glibc 2\.38 or newer.*needs glibc 2\.38, this system has glibc 2\.36/,
    });
    t.same(asked, ['uWebSockets.js'], 'the binary that would fail on a missing symbol is not tried');
  },
);

t.test(
  'Node 22 on armv7 or on musl is refused, and no package entry point (a pure-JS fallback) is ever loaded',
  async (t) => {
    const everything = loader(['@trufflesuite/uws-js-unofficial', '@btc-vision/uwebsockets.js']);
    t.throws(() => chooseUws(rt(NODE_22, 'arm', '2.41'), everything.load), {
      message: /will not run on a pure-JS fallback.*No installed build has a binary/,
    });
    t.throws(() => chooseUws(rt(NODE_22, 'x64', undefined), everything.load), {
      message: /this system has another C library/,
    });
    t.same(everything.asked, ['uWebSockets.js', 'uWebSockets.js']);
  },
);

t.test('a binary that exists but cannot load is named in the refusal', async (t) => {
  const load = (pkg: string) => {
    if (pkg === 'uWebSockets.js') throw Object.assign(new Error('not found'), { code: 'MODULE_NOT_FOUND' });
    throw new Error("/lib/libc.so.6: version `GLIBC_2.38' not found\nmore");
  };
  t.throws(() => chooseUws(rt(NODE_20, 'x64', '2.36'), load), {
    message: /Tried: @trufflesuite\/uws-js-unofficial\/binaries\/uws_linux_x64_115\.node: .*GLIBC_2\.38' not found[;.]/,
  });
});

t.test('this machine loads a real binary and reports its glibc', async (t) => {
  const runtime = currentRuntime();
  t.equal(runtime.abi, process.versions.modules);
  if (process.platform === 'linux') t.match(runtime.glibc, /^\d+\.\d+$/);
  t.match(loadUws().source, /uws_linux_\w+_\d+\.node|^uWebSockets\.js$/);
  t.type(loadUws().module.App, 'function');
});
