// Writes from both workers of `helixd serve --workers 2` on one SQLite file, through the real
// program: each waits its turn for the file's write lock, none is refused. A transaction that reads
// before it writes (an admin PATCH reads the record, then writes it and its event) once asked for
// the lock at its first write, and SQLite answered SQLITE_BUSY at once, without waiting, whenever
// the other worker had committed since the read began: a 503 for a write that only had to wait.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ADMIN_TOKEN } from '../support/apps.ts';
import { request } from '../support/http.ts';
import { STORE_KINDS } from '../support/stores.ts';
import { type Served, serveOnTempStore } from './served.ts';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
/** Users written at once, each changed by PATCHes in flight together, each on a connection of its own. */
const USERS = 20;
const ROUNDS = 10;

const sqlite = STORE_KINDS.find((k) => k.kind === 'sqlite');

let s: Served;
before(async () => {
  s = await serveOnTempStore('sqlite', ['--workers', '2', '--drain', '0s', '--admin-token', ADMIN_TOKEN], 2);
  const users = Array.from({ length: USERS }, (_, i) => ({
    id: String(995100 + i),
    login: `turns_${i}`,
    display_name: `Turns_${i}`,
    broadcaster_type: '',
    description: '',
    created_at: '2024-01-01T00:00:00Z',
  }));
  const res = await request(s.port, '/admin/users', {
    method: 'POST',
    headers: admin,
    body: JSON.stringify(users),
  });
  assert.equal(res.status, 201, res.body);
});
after(() => s?.stop());

it('every write of both workers on one SQLite file is made: none answered 503', {
  skip: sqlite?.skip ?? false,
}, async () => {
  const answers = await Promise.all(
    Array.from({ length: USERS * ROUNDS }, (_, k) =>
      request(s.port, `/admin/users/${995100 + (k % USERS)}`, {
        method: 'PATCH',
        headers: admin,
        body: JSON.stringify({ description: `round ${Math.floor(k / USERS)}` }),
      }),
    ),
  );
  const refused = answers.filter((a) => a.status !== 200);
  assert.deepEqual(
    refused.map((a) => `${a.status} ${a.body}`).slice(0, 3),
    [],
    `${refused.length} of ${answers.length} writes refused`,
  );
});
