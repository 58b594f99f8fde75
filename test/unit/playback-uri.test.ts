// Track URIs a stream player accepts, and file: paths resolved on a real folder with real symlinks.

import { mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { parseFolder, parseTrackUri, resolveMusicFile } from '../../drivers/playback-uri.js';
import { tempDir } from '../helpers/daemon.js';

t.test('file: URIs name a path inside the music folder, written as is', async (t) => {
  t.same(parseTrackUri('file:albums/Blue Train/01 Blue Train.flac'), {
    kind: 'file',
    relative: 'albums/Blue Train/01 Blue Train.flac',
  });
  t.same(parseTrackUri('file:./a//b.flac'), { kind: 'file', relative: 'a/b.flac' });
});

t.test('http and https URLs are streams', async (t) => {
  t.same(parseTrackUri('https://radio.example/live.ogg'), { kind: 'stream', url: 'https://radio.example/live.ogg' });
  t.same(parseTrackUri('HTTP://radio.example/x'), { kind: 'stream', url: 'HTTP://radio.example/x' });
});

t.test('every other form is refused with what is accepted', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['', /empty/],
    ['file:/etc/passwd', /absolute/],
    ['file:///etc/passwd', /absolute/],
    ['file:../outside.flac', /"\.\."/],
    ['file:a/../../b.flac', /"\.\."/],
    ['file:', /names no file/],
    ['ftp://host/x.mp3', /unsupported scheme/],
    ['smb://nas/x.flac', /unsupported scheme/],
    ['/music/a.flac', /unsupported scheme/],
    ['file:a.flac\nplay', /line break/],
    ['http://user:pw@radio.example/x', /credentials/],
    ['http://', /valid URL|no host/],
    [`file:${'x'.repeat(5000)}`, /longer than/],
  ];
  for (const [uri, message] of cases)
    t.throws(() => parseTrackUri(uri), { code: 'bad-uri', message }, JSON.stringify(uri.slice(0, 40)));
});

t.test('a folder for a listing is relative, the top is the empty path', async (t) => {
  t.equal(parseFolder(''), '');
  t.equal(parseFolder('a/b/'), 'a/b');
  t.throws(() => parseFolder('../x'), { code: 'bad-uri' });
  t.throws(() => parseFolder('/x'), { code: 'bad-uri' });
});

t.test('resolving follows symlinks and refuses whatever ends up outside the music folder', async (t) => {
  const base = tempDir('azc-uri-');
  t.teardown(() => rmSync(base, { recursive: true, force: true }));
  const root = path.join(base, 'music');
  mkdirSync(path.join(root, 'album'), { recursive: true });
  mkdirSync(path.join(base, 'outside'));
  writeFileSync(path.join(root, 'album/a.flac'), 'x');
  writeFileSync(path.join(base, 'outside/secret.flac'), 'x');
  symlinkSync(path.join(base, 'outside/secret.flac'), path.join(root, 'link-out.flac'));
  symlinkSync(path.join(base, 'outside'), path.join(root, 'dir-out'));
  symlinkSync(path.join(root, 'album/a.flac'), path.join(root, 'alias.flac'));
  symlinkSync(path.join(base, 'outside/not-yet.flac'), path.join(root, 'dangling-out.flac'));
  const real = realpathSync(root);

  t.same(await resolveMusicFile(real, 'album/a.flac'), {
    relative: 'album/a.flac',
    absolute: path.join(real, 'album/a.flac'),
    kind: 'file',
  });
  t.same(
    await resolveMusicFile(real, 'alias.flac'),
    { relative: 'album/a.flac', absolute: path.join(real, 'album/a.flac'), kind: 'file' },
    'an inside link resolves to its target',
  );
  t.match(await resolveMusicFile(real, 'album/missing.flac'), { relative: 'album/missing.flac', kind: 'missing' });
  t.match(await resolveMusicFile(real, 'no/such/folder.flac'), { kind: 'missing' });
  t.match(await resolveMusicFile(real, 'album'), { kind: 'folder' });
  t.match(
    await resolveMusicFile(real, 'dangling-out.flac'),
    { kind: 'missing' },
    'a dangling link is missing, never followed later',
  );
  await t.rejects(resolveMusicFile(real, 'link-out.flac'), { code: 'bad-uri', message: /outside the music folder/ });
  await t.rejects(resolveMusicFile(real, 'dir-out/secret.flac'), { code: 'bad-uri' });
  await t.rejects(
    resolveMusicFile(real, 'dir-out/missing.flac'),
    { code: 'bad-uri' },
    'even for a file that does not exist',
  );
});
