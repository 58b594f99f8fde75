// DNS rebinding: over a real socket, a request under a name that is not the appliance's is refused with 421 before
// any route, file or credential check; the appliance's own names and an added name are answered.
import t from 'tap';
import http from 'node:http';
import { startTestDaemon } from '../helpers/daemon.js';
import { mdnsHostname } from '../../daemon/discovery/mdns-hostname.js';

function get(base: string, path: string, host: string): Promise<{ status: number; type: string; body: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('a request under a foreign host name gets 421 on the API, the dashboard and the device description', async (t) => {
  const d = await startTestDaemon(t);
  for (const path of ['/api/health', '/api/openapi.json', '/', '/description.xml', '/api/zones']) {
    const res = await get(d.base, path, 'rebind.attacker.example:8080');
    t.equal(res.status, 421, path);
    t.match(res.type, /^application\/problem\+json/);
    t.match(JSON.parse(res.body), { status: 421, title: 'Misdirected Request', detail: /rebind\.attacker\.example.*allowedHosts/ });
  }
});

t.test("the appliance's address, localhost, its mDNS name and an added name are answered", async (t) => {
  const d = await startTestDaemon(t, { config: { allowedHosts: ['audio.example.lan'] } });
  const port = new URL(d.base).port;
  const mdns = `${mdnsHostname(d.daemon.services.udn)}.local`;
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `${mdns}:${port}`, `audio.example.lan:${port}`, 'AUDIO.EXAMPLE.LAN']) {
    t.equal((await get(d.base, '/api/health', host)).status, 200, host);
  }
  t.equal((await get(d.base, '/api/health', `other.example.lan:${port}`)).status, 421, 'a name not added is still refused');
});

t.test('the refusal is documented on every route of the OpenAPI document', async (t) => {
  const d = await startTestDaemon(t);
  const doc = JSON.parse((await get(d.base, '/api/openapi.json', '127.0.0.1')).body) as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
  const operations = Object.values(doc.paths).flatMap((item) => Object.values(item));
  t.ok(operations.length > 20, 'control: the document lists the routes');
  t.same(operations.filter((op) => !op.responses['421']), [], 'every operation lists 421');
});
