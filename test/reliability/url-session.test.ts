// A postgres:// URL may carry session settings (`?options=-c name=value`, `?statement_timeout=`),
// and pg lets them replace the ones helixd gives beside the URL. While serving, helixd's query
// deadline (--query-timeout) is kept whatever the URL says, and the start says so: a query past it
// is a 503 and PostgreSQL stops working on it (the server's statement_timeout), where the URL's
// `statement_timeout=0` would have left it waiting on the server for ever. The URL's other settings
// (its search_path here) still apply. PostgreSQL only: a SQLite --db is a file path, its deadline a
// pragma helixd sets after opening.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { loadConfig } from '../../src/config.ts';
import { type Running, startServer } from '../../src/server.ts';
import { bearer } from '../support/apps.ts';
import { STORE_KINDS, type TempStore, tempStore } from '../support/stores.ts';

const DEADLINE_MS = 500;
const skip = STORE_KINDS.find((k) => k.kind === 'postgres')?.skip ?? false;

for (const [name, settings] of [
  ['options=-c statement_timeout=0', (schema: string) => `-c statement_timeout=0 -c search_path=${schema}`],
  ['statement_timeout=0', (schema: string) => `-c search_path=${schema}`],
] as const)
  describe(`serving a postgres:// URL with ${name} [postgres]`, { skip }, () => {
    let temp: TempStore;
    let running: Running;
    const printed: string[] = [];
    let lock: pg.Client;

    before(async () => {
      temp = await tempStore('postgres');
      const schema = temp.schema as string;
      const url =
        `${temp.url}?options=${encodeURIComponent(settings(schema))}` +
        (name.startsWith('statement_timeout') ? '&statement_timeout=0' : '');
      running = await startServer(
        loadConfig({ db: url, port: 0, logLevel: 'silent', users: 10, queryTimeout: `${DEADLINE_MS}ms` }, {}),
        (l) => printed.push(l),
      );
      lock = new pg.Client({ connectionString: temp.url });
      await lock.connect();
      await lock.query(`set search_path = ${schema}`);
    });
    after(async () => {
      await lock?.end();
      await running?.stop();
      await temp?.drop();
    });

    it("says at start that the URL's statement_timeout gives way to the query deadline", () => {
      assert.ok(
        printed.includes(
          `helixd: --db sets statement_timeout=0; serving keeps the query deadline instead (--query-timeout, ${DEADLINE_MS} ms)`,
        ),
        printed.join('\n'),
      );
    });

    it("keeps the URL's other settings: the store is in its search_path's schema", async () => {
      const users = await lock.query('select count(*)::int n from users');
      assert.equal(users.rows[0].n, 10, 'the demo data went into the schema');
    });

    it('a query past the deadline is a 503, and PostgreSQL stops working on it', async () => {
      const seed = (await running.app.inject({ method: 'GET', url: '/units/clients' })).json();
      const client = seed.data[0];
      const minted = await running.app.inject({
        method: 'POST',
        url: `/oauth2/token?client_id=${client.ID}&client_secret=${client.Secret}&grant_type=client_credentials`,
      });
      assert.equal(minted.statusCode, 200, minted.body);
      const headers = { ...bearer(minted.json().access_token), 'client-id': client.ID };

      // The games' table is locked by another session: the page's query waits for it.
      await lock.query('begin');
      await lock.query('lock table games in access exclusive mode');
      try {
        const res = await running.app.inject({ method: 'GET', url: '/helix/games/top', headers });
        assert.equal(res.statusCode, 503, res.body);
        // The server's own deadline cancels the waiting query; without it the query would wait
        // for the lock as long as it is held.
        const waiting = async () =>
          (
            await lock.query(
              `select count(*)::int n from pg_stat_activity
               where pid <> pg_backend_pid() and wait_event_type = 'Lock' and query ilike '%games%'`,
            )
          ).rows[0].n as number;
        const until = Date.now() + 10_000;
        let n = await waiting();
        while (n > 0 && Date.now() < until) {
          await new Promise((r) => setTimeout(r, 100));
          n = await waiting();
        }
        assert.equal(n, 0, 'no query of helixd still waits for the lock');
      } finally {
        await lock.query('rollback');
      }
      const res = await running.app.inject({ method: 'GET', url: '/helix/games/top', headers });
      assert.equal(res.statusCode, 200, res.body);
    });
  });
