// Status text has one source, the daemon's table (http/problem.ts), which says what Node's http.STATUS_CODES says
// (kept apart so that start-up need not load Node's HTTP module): the status line uWS sends and each problem's title.

import { STATUS_CODES } from 'node:http';
import t from 'tap';
import { HttpError, STATUS_CODES as OWN_STATUS_CODES, statusLine, toProblem } from '../../daemon/http/problem.js';

t.test("the daemon's table has Node's text for every status Node knows, and no other status", async (t) => {
  t.same(
    Object.entries(OWN_STATUS_CODES).map(([code, text]) => [Number(code), text]),
    Object.entries(STATUS_CODES).map(([code, text]) => [Number(code), text]),
  );
});

const ANSWERED = [200, 201, 204, 304, 400, 401, 403, 404, 405, 409, 413, 415, 421, 429, 500, 503];

t.test(
  "every status the API answers with goes out with Node's text for it, in the status line and the problem title",
  async (t) => {
    for (const status of ANSWERED) {
      t.equal(statusLine(status), `${status} ${STATUS_CODES[status]}`, `status line of ${status}`);
      if (status >= 400)
        t.equal(
          toProblem(new HttpError(status, 'detail'), '/api/x', 'r-1').title,
          STATUS_CODES[status],
          `title of ${status}`,
        );
    }
  },
);

t.test('a status Node has no text for still gets a well-formed status line and a title', async (t) => {
  t.equal(STATUS_CODES[299], undefined);
  t.equal(statusLine(299), '299 Status');
  t.equal(toProblem(new HttpError(499, 'detail'), '/api/x', 'r-1').title, 'Error');
});
