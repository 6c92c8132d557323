// Query plans of GET /subscriptions, GET /streams/markers and GET /games/top: every paged query
// shape is an index range scan in the order of the page (no full scan of a table, no sort), of an
// index that holds the whole page (migration 012 on SQLite, 012 and 014 on PostgreSQL), and
// the lookups around it (and GET /subscriptions/user's one) are primary-key or index probes, on
// SQLite (EXPLAIN QUERY PLAN) and on PostgreSQL (plain EXPLAIN on a seeded, analyzed store; no
// planner switches). The SQL is exactly what the routes' store functions run: they are called with
// a Kysely instance whose plugin records each query, which is then compiled by the store's own
// dialect.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { type CompiledQuery, sql } from 'kysely';
import { topGames } from '../../src/store/games.ts';
import {
  hasMarkedVideo,
  markersPage,
  mostRecentVideo,
  userExists,
  videoById,
} from '../../src/store/markers.ts';
import type { PageQuery } from '../../src/store/page.ts';
import {
  broadcasterTotals,
  subscriptionOfUser,
  subscriptionsOfUsers,
  subscriptionsPage,
} from '../../src/store/subscriptions.ts';
import { usersByIds } from '../../src/store/users.ts';
import { forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';
import { middleKey, queryPlans } from './plans.ts';

forEachStore('query plans of /subscriptions, /streams/markers and /games/top', (kind: StoreKind) => {
  let t: TestApp;
  let demo: number;
  let video: number;

  before(async () => {
    t = await startTestApp(kind, { users: 3000 });
    demo = t.seed?.demoUserId as number;
    video = (await mostRecentVideo(t.store.db, demo))?.id as number;
    // A platform has many more games than live ones: 20,000 more, one in five live.
    const extra = Array.from({ length: 20_000 }, (_, i) => ({
      id: 1_000_000 + i,
      name: `Extra game ${i}`,
      igdb_id: '',
      owner_id: null,
      viewer_count: i % 5 === 0 ? (i * 7919) % 5000 : 0,
      stream_count: i % 5 === 0 ? 1 : 0,
    }));
    for (let i = 0; i < extra.length; i += 2000)
      await t.store.db
        .insertInto('games')
        .values(extra.slice(i, i + 2000))
        .execute();
    // Statistics of the tables read (scoped: a database-wide ANALYZE would touch other schemas).
    // The 20,000 new games are vacuumed too, as autovacuum would soon do: the cost of an index-only
    // scan of games_top_live depends on the visibility map, and whether autovacuum had yet come to
    // the new rows decided, on a loaded machine, between that scan and a scan with a sort.
    if (kind === 'postgres') {
      await sql`vacuum analyze games`.execute(t.store.db);
      await sql`analyze subscriptions, subscription_totals, markers, videos, users`.execute(t.store.db);
    }
  });
  after(() => t.close());

  const { captured, plan, assertIndexed } = queryPlans(kind, () => t);

  const pages = (key: PageQuery['after']): [string, PageQuery][] => [
    ['first page', { first: 20 }],
    ['after', { first: 20, after: key }],
    ['before', { first: 20, before: key }],
  ];

  for (const where of ['first page', 'after', 'before']) {
    for (const names of [false, true])
      it(`subscriptions page, ${where}${names ? ', names joined' : ''}: a range of subscriptions_broadcaster_time (covering)${names ? ', users by primary key' : ''}, no sort`, async () => {
        const { key, rows } = await middleKey((page) => subscriptionsPage(t.store.db, demo, page));
        assert.ok(rows > 1000);
        const page = pages(key).find(([w]) => w === where)?.[1] as PageQuery;
        const [q] = await captured((db) => subscriptionsPage(db, demo, page, names));
        const lines = await plan(q as CompiledQuery);
        assertIndexed(lines, 'subscriptions', 'subscriptions_broadcaster_time', {
          keyed: where !== 'first page',
          covering: true,
        });
        if (names) {
          assertIndexed(lines, 'users', 'users_pkey', { alias: 'u' });
          assertIndexed(lines, 'users', 'users_pkey', { alias: 'g' });
        }
      });

    it(`markers page, ${where}: a range of markers_video_creator_time (covering), no sort`, async () => {
      const { key, rows } = await middleKey((page) => markersPage(t.store.db, video, demo, page));
      assert.ok(rows > 100);
      const page = pages(key).find(([w]) => w === where)?.[1] as PageQuery;
      const [q] = await captured((db) => markersPage(db, video, demo, page));
      assertIndexed(await plan(q as CompiledQuery), 'markers', 'markers_video_creator_time', {
        keyed: where !== 'first page',
        covering: true,
      });
    });

    it(`top games page, ${where}: a range of games_top_live, covering, no sort`, async () => {
      const { key, rows } = await middleKey((page) => topGames(t.store.db, page));
      assert.ok(rows > 1000);
      const page = pages(key).find(([w]) => w === where)?.[1] as PageQuery;
      const [q] = await captured((db) => topGames(db, page));
      assertIndexed(await plan(q as CompiledQuery), 'games', 'games_top_live', {
        walk: where === 'first page',
        keyed: where !== 'first page',
        covering: true,
      });
    });
  }

  it('page queries write their LIMIT, and top games its live-games predicate, into the SQL text', async () => {
    // Values SQLite's planner reads (a LIMIT; the value a partial index's WHERE is checked
    // against) make a prepared statement be prepared again each time they are bound, which
    // better-sqlite3 does on every run (src/store/page.ts, rowLimit; src/store/games.ts).
    const queries = [
      ...(await captured((db) => subscriptionsPage(db, demo, { first: 20 }))),
      ...(await captured((db) => markersPage(db, video, demo, { first: 20 }))),
      ...(await captured((db) => topGames(db, { first: 20 }))),
    ];
    assert.equal(queries.length, 3);
    for (const q of queries) assert.match(q.sql, /limit 21$/, q.sql);
    assert.match(queries[2]?.sql ?? '', /"stream_count" > 0 /);
  });

  it('subscriptions total and points: primary-key lookups of users and subscription_totals', async () => {
    const [q] = await captured((db) => broadcasterTotals(db, demo));
    const lines = await plan(q as CompiledQuery);
    assertIndexed(lines, 'users', 'users_pkey');
    assertIndexed(lines, 'subscription_totals', 'subscription_totals_pkey', { alias: 't' });
  });

  it('the users a page names (subscribers, gifters, clip and video owners): primary-key lookups', async () => {
    const some = (await subscriptionsPage(t.store.db, demo, { first: 100 })).rows.map((r) => r.user_id);
    const [q] = await captured((db) => usersByIds(db, some));
    assertIndexed(await plan(q as CompiledQuery), 'users', 'users_pkey');
  });

  for (const names of [false, true])
    it(`subscriptions of given users${names ? ', names joined' : ''}: primary-key probes, no sort`, async () => {
      const some = (await subscriptionsPage(t.store.db, demo, { first: 100 })).rows.map((r) => r.user_id);
      const [q] = await captured((db) => subscriptionsOfUsers(db, demo, some, names));
      const lines = await plan(q as CompiledQuery);
      assertIndexed(lines, 'subscriptions', 'subscriptions_pk');
      if (names) assertIndexed(lines, 'users', 'users_pkey', { alias: 'u' });
    });

  it("a user's own subscription (GET /subscriptions/user): one primary-key probe, the broadcaster and gifter by primary key", async () => {
    const gift = await t.store.db
      .selectFrom('subscriptions')
      .selectAll()
      .where('broadcaster_id', '=', demo)
      .where('is_gift', '=', 1)
      .orderBy('user_id')
      .limit(1)
      .executeTakeFirstOrThrow();
    assert.equal((await subscriptionOfUser(t.store.db, demo, gift.user_id))?.gifter_id, gift.gifter_id);
    const [q] = await captured((db) => subscriptionOfUser(db, demo, gift.user_id));
    const lines = await plan(q as CompiledQuery);
    assertIndexed(lines, 'subscriptions', 'subscriptions_pk');
    assertIndexed(lines, 'users', 'users_pkey', { alias: 'b' });
    assertIndexed(lines, 'users', 'users_pkey', { alias: 'g' });
  });

  it("markers lookups: the video by primary key, the user's most recent video from videos_user_time, the editor probe from markers_video_creator_time", async () => {
    let [q] = await captured((db) => videoById(db, video));
    let lines = await plan(q as CompiledQuery);
    assertIndexed(lines, 'videos', 'videos_pkey');
    [q] = await captured((db) => mostRecentVideo(db, demo));
    lines = await plan(q as CompiledQuery);
    assertIndexed(lines, 'videos', 'videos_user_time');
    [q] = await captured((db) => hasMarkedVideo(db, video, demo));
    assertIndexed(await plan(q as CompiledQuery), 'markers', 'markers_video_creator_time');
    [q] = await captured((db) => userExists(db, demo));
    assertIndexed(await plan(q as CompiledQuery), 'users', 'users_pkey');
  });
});
