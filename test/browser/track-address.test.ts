// The dashboard's "Add a track" teaches the track address stream players play, and says so when a track is added in
// a form they would refuse at Play (the track is added all the same). Desktop and phone.
import t from 'tap';
import { chromiumMissing, launch } from './browser.js';
import { seededDaemon } from './seed.js';
import { eventually, PHONE, signIn } from './session.js';

/** Messages stay until dismissed, so a check never races their timer. */
const STAY = { path: '/?toastMs=600000' };

t.test('adding a track in the dashboard', { skip: chromiumMissing() }, async (t) => {
  const { d, api, s } = await seededDaemon(t);
  const browser = await launch(t);
  const id = s.playlists['Sunday morning']!;
  const sizes = [
    ['desktop', {}],
    ['phone', PHONE],
  ] as const;

  for (const [size, options] of sizes) {
    t.test(
      `${size}: the location field teaches file:albums/…, and a file:/// track is added with a warning naming that form`,
      async (t) => {
        const { page, console } = await signIn(browser, d.base, 'admin', d.adminPassword, options, STAY);
        await page.getByRole('link', { name: 'Playlists' }).click();
        await page.getByRole('button', { name: /^Sunday morning/ }).click();
        await page.getByRole('heading', { name: 'Sunday morning' }).waitFor();
        const location = page.getByLabel('Location (URI)');
        const placeholder = (await location.getAttribute('placeholder')) ?? '';
        t.match(placeholder, /^file:albums\//, `the placeholder shows the relative form (${placeholder})`);
        t.notMatch(placeholder, 'file:///', 'not the absolute one');

        const title = `Old form on ${size}`;
        await page.getByLabel('Title').fill(title);
        await location.fill(`file:///music/${size}.flac`);
        await page.getByRole('button', { name: 'Add track' }).click();
        const warning = page.locator('#toasts .toast-text', {
          hasText: `track "${title}" cannot play on stream players`,
        });
        await warning.waitFor();
        t.match(
          await warning.textContent(),
          /file:albums\/track\.flac/,
          'the warning names the form stream players play',
        );
        await eventually(
          async () =>
            (await api.get(`/api/playlists/${id}`)).body.tracks.some(
              (track: { title: string }) => track.title === title,
            ),
          'the track is added',
        );
        t.ok(await warning.isVisible(), 'and the warning is on screen');
        t.same(console.errors, []);
      },
    );
  }
});
