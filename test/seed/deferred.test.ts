// What a seed leaves for after its rows: the subscription totals, counted once the subscriptions are
// in (their triggers dropped while the rows go in, then created again), and on SQLite with two
// threads the side tables, written into side files by a thread of their own and copied in
// (src/seed/side.ts). The store ends as a seed in one thread leaves it, rowids included; a seed
// that fails leaves it as it was, with no side file.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { SPEC_SCOPES } from '../../src/auth/scopes.ts';
import { dayStart, generate } from '../../src/seed/generate.ts';
import { seedStore } from '../../src/seed/index.ts';
import { DATA_TABLES } from '../../src/store/bulk.ts';
import type { Store } from '../../src/store/db.ts';
import { TIER_POINTS } from '../../src/store/subscriptions.ts';
import { bearer, forEachStore, startTestApp, TEST_NOW, type TestApp } from '../support/apps.ts';
import { helixd } from '../support/cli.ts';
import { cliDb, type StoreKind, tempStore } from '../support/stores.ts';

const ADMIN_TOKEN = 'admin-token-deferred-0123456789-abcdef';
const OPTIONS = { seed: 5, users: 300 };

/** The totals of each broadcaster, counted from the subscriptions themselves. */
async function recount(store: Store): Promise<Map<number, { total: number; points: number }>> {
  const rows = await store.db.selectFrom('subscriptions').select(['broadcaster_id', 'tier']).execute();
  const totals = new Map<number, { total: number; points: number }>();
  for (const r of rows) {
    const t = totals.get(r.broadcaster_id) ?? { total: 0, points: 0 };
    t.total++;
    t.points += TIER_POINTS[r.tier];
    totals.set(r.broadcaster_id, t);
  }
  return totals;
}

/** The triggers of the subscriptions, by name. */
async function subscriptionTriggers(store: Store): Promise<string[]> {
  const q =
    store.dialect === 'sqlite'
      ? sql<{ name: string }>`select name from sqlite_master
          where type = 'trigger' and tbl_name = 'subscriptions' order by name`
      : sql<{ name: string }>`select tgname as name from pg_trigger
          where tgrelid = 'subscriptions'::regclass and not tgisinternal order by tgname`;
  return (await q.execute(store.db)).rows.map((r) => r.name);
}

const sideFiles = (store: Store) => readdirSync(dirname(store.location)).filter((f) => f.includes('-seed-'));

forEachStore('subscription totals after a seed', (kind: StoreKind) => {
  // SQLite: in one thread and with the side writer; PostgreSQL: the generator in a worker.
  const runs = kind === 'sqlite' ? ([1, 2] as const) : ([2] as const);
  for (const threads of runs)
    describe(`${threads} thread${threads === 1 ? '' : 's'}`, () => {
      let t: TestApp;
      before(async () => {
        t = await startTestApp(kind, {
          ...OPTIONS,
          seedThreads: threads,
          config: { adminToken: ADMIN_TOKEN },
        });
      });
      after(() => t.close());

      it('are a recount of the subscriptions, row for row, and /subscriptions answers them', async () => {
        const counted = await recount(t.store);
        const stored = await t.store.db.selectFrom('subscription_totals').selectAll().execute();
        assert.deepEqual(
          new Map(stored.map((r) => [r.broadcaster_id, { total: r.total, points: r.points }])),
          counted,
        );
        const biggest = [...counted].sort((a, b) => b[1].total - a[1].total || a[0] - b[0]).slice(0, 3);
        for (const [broadcaster, expected] of biggest) {
          const token = await t.userToken(SPEC_SCOPES, broadcaster);
          const res = await t.get(
            `/helix/subscriptions?broadcaster_id=${broadcaster}&first=1`,
            bearer(token),
          );
          assert.equal(res.statusCode, 200, res.body);
          assert.deepEqual({ total: res.json().total, points: res.json().points }, expected);
        }
      });

      it('move with every write after it: the triggers are back', async () => {
        assert.deepEqual(await subscriptionTriggers(t.store), [
          'subscriptions_totals_delete',
          'subscriptions_totals_insert',
          'subscriptions_totals_update',
        ]);
        const demo = t.seed?.demoUserId as number;
        const subscribed = new Set(
          (
            await t.store.db
              .selectFrom('subscriptions')
              .select('user_id')
              .where('broadcaster_id', '=', demo)
              .execute()
          ).map((r) => r.user_id),
        );
        const users = await t.store.db.selectFrom('users').select('id').orderBy('id').execute();
        const newcomer = users.find((u) => u.id !== demo && !subscribed.has(u.id))?.id as number;
        const token = await t.userToken(SPEC_SCOPES, demo);
        const totals = async () => {
          const body = (
            await t.get(`/helix/subscriptions?broadcaster_id=${demo}&first=1`, bearer(token))
          ).json();
          return [body.total, body.points];
        };
        const [total, points] = await totals();
        const res = await t.inject({
          method: 'POST',
          url: '/admin/subscriptions',
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
          payload: {
            broadcaster_id: String(demo),
            user_id: String(newcomer),
            tier: '3000',
            plan_name: 'Channel Subscription (demo)',
            is_gift: false,
            gifter_id: '',
            created_at: '2026-06-01T00:00:00Z',
          },
        });
        assert.equal(res.statusCode, 201, res.body);
        assert.deepEqual(await totals(), [total + 1, points + 6]);
      });
    });
});

describe('the side writer (SQLite, two threads)', () => {
  let inThread: TestApp;
  let withSide: TestApp;
  before(async () => {
    inThread = await startTestApp('sqlite', { ...OPTIONS, seedThreads: 1 });
    withSide = await startTestApp('sqlite', { ...OPTIONS, seedThreads: 2 });
  });
  after(async () => {
    await inThread.close();
    await withSide.close();
  });

  it('leaves the very rows of a seed in one thread, rowids and totals included, and no side file', async () => {
    for (const table of [...DATA_TABLES, 'subscription_totals'] as const) {
      if (['clients', 'tokens', 'auth_codes'].includes(table)) continue; // a secret drawn each time
      const rows = (a: TestApp) =>
        sql<unknown>`select rowid as "rowid", * from ${sql.table(table)} order by rowid`.execute(a.store.db);
      const x = (await rows(inThread)).rows;
      assert.ok(x.length > 0, table);
      assert.deepEqual((await rows(withSide)).rows, x, table);
    }
    assert.deepEqual(sideFiles(withSide.store), []);
  });

  it('answers every operation as a seed in one thread does', async () => {
    const demo = inThread.seed?.demoUserId as number;
    for (const q of [
      `/helix/subscriptions?broadcaster_id=${demo}&first=100`,
      `/helix/channels/followers?broadcaster_id=${demo}&first=100`,
      '/helix/analytics/games?first=100',
      '/helix/analytics/extensions?first=100',
    ]) {
      const bodies = [];
      for (const a of [inThread, withSide]) {
        const res = await a.get(q, bearer(await a.userToken(SPEC_SCOPES)));
        assert.equal(res.statusCode, 200, `${q}: ${res.body}`);
        bodies.push(res.body.replace(/"URL":"[^"]*"/g, '"URL":""'));
      }
      assert.equal(bodies[1], bodies[0], q);
    }
  });
});

describe('a seed that fails', () => {
  const o = { ...OPTIONS, anchor: dayStart(TEST_NOW) };
  /** A follows row the seed generates: written before it, the seed fails on it. */
  const generatedFollow = async () => {
    let first: object | undefined;
    await generate(o, async (table, rows) => {
      if (table === 'follows') first ??= rows[0];
    });
    return first as { from_id: number; to_id: number; followed_at: number };
  };

  forEachStore('leaves the store as it was', (kind: StoreKind) => {
    it('through the command line (one thread)', async () => {
      const temp = await tempStore(kind);
      try {
        await temp.store.db
          .insertInto('follows')
          .values(await generatedFollow())
          .execute();
        const db = cliDb({ url: temp.url, ...(temp.schema ? { schema: temp.schema } : {}) });
        const before = (await helixd(['export', '--db', db])).stdout;
        const triggers = await subscriptionTriggers(temp.store);
        const now = new Date(TEST_NOW).toISOString();
        const r = await helixd([
          'seed',
          '--db',
          db,
          '--users',
          String(o.users),
          '--seed',
          String(o.seed),
          '--now',
          now,
        ]);
        assert.notEqual(r.code, 0);
        assert.match(r.stderr, /unique|duplicate/i);
        assert.equal((await helixd(['export', '--db', db])).stdout, before);
        assert.deepEqual(await subscriptionTriggers(temp.store), triggers);
      } finally {
        await temp.drop();
      }
    });
  });

  it('with the side writer (SQLite, two threads): as it was, and no side file left', async () => {
    const temp = await tempStore('sqlite');
    try {
      await temp.store.db
        .insertInto('follows')
        .values(await generatedFollow())
        .execute();
      const before = (await helixd(['export', '--db', temp.url])).stdout;
      const triggers = await subscriptionTriggers(temp.store);
      await assert.rejects(seedStore(temp.store, o, { threads: 2 }), /UNIQUE/);
      assert.deepEqual(sideFiles(temp.store), []);
      assert.equal((await helixd(['export', '--db', temp.url])).stdout, before);
      assert.deepEqual(await subscriptionTriggers(temp.store), triggers);
      const follows = await temp.store.db.selectFrom('follows').selectAll().execute();
      assert.equal(follows.length, 1);
    } finally {
      await temp.drop();
    }
  });
});
