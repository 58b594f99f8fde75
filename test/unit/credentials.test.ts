// Credential extraction: X-API-Key, then Authorization: Bearer, then ?apiKey=; the first present one counts.
import t from 'tap';
import { extractCredential } from '../../daemon/http/credentials.js';

const KEY_A = `svc_${'a'.repeat(48)}`;
const KEY_B = `svc_${'b'.repeat(48)}`;
const KEY_C = `svc_${'c'.repeat(48)}`;

function extract(headers: { 'x-api-key'?: string; authorization?: string }, query = '') {
  // uWS reports an absent header as the empty string.
  return extractCredential(
    { 'x-api-key': headers['x-api-key'] ?? '', authorization: headers.authorization ?? '' },
    new URLSearchParams(query),
  );
}

t.test('X-API-Key wins over Authorization and ?apiKey=', async (t) => {
  t.same(extract({ 'x-api-key': KEY_A, authorization: `Bearer ${KEY_B}` }, `apiKey=${KEY_C}`), {
    source: 'x-api-key',
    value: KEY_A,
  });
});

t.test('Authorization wins over ?apiKey= when there is no X-API-Key', async (t) => {
  t.same(extract({ authorization: `Bearer ${KEY_B}` }, `apiKey=${KEY_C}`), { source: 'bearer', value: KEY_B });
});

t.test('?apiKey= is used when no header carries a credential', async (t) => {
  t.same(extract({}, `apiKey=${KEY_C}`), { source: 'query', value: KEY_C });
});

t.test('a percent-encoded ?apiKey= value is decoded', async (t) => {
  const encoded = [...KEY_C].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
  t.same(extract({}, `other=1&apiKey=${encoded}`), { source: 'query', value: KEY_C });
});

t.test('the Bearer scheme name is case-insensitive and surrounding blanks are ignored', async (t) => {
  t.same(extract({ authorization: `bearer ${KEY_B}` }), { source: 'bearer', value: KEY_B });
  t.same(extract({ authorization: `BEARER \t${KEY_B} ` }), { source: 'bearer', value: KEY_B });
});

t.test('blanks around an X-API-Key value are trimmed', async (t) => {
  t.same(extract({ 'x-api-key': ` ${KEY_A}\t` }), { source: 'x-api-key', value: KEY_A });
});

t.test('an Authorization header with another scheme is malformed, not skipped', async (t) => {
  t.equal(
    extract({ authorization: `Basic ${Buffer.from('admin:pw').toString('base64')}` }, `apiKey=${KEY_C}`),
    'malformed',
  );
});

t.test('a Bearer header without a token is malformed', async (t) => {
  t.equal(extract({ authorization: 'Bearer' }), 'malformed');
  t.equal(extract({ authorization: 'Bearer   ' }), 'malformed');
});

t.test('a Bearer header with two tokens is malformed', async (t) => {
  t.equal(extract({ authorization: `Bearer ${KEY_A} ${KEY_B}` }), 'malformed');
});

t.test('no credential at all is null', async (t) => {
  t.equal(extract({}), null);
  t.equal(extract({}, 'lastEventId=4'), null);
});

t.test('an empty ?apiKey= counts as no credential', async (t) => {
  t.equal(extract({}, 'apiKey='), null);
});
