// Query plans of GET /channels/followers and GET /channels/followed: every page is a range of the
// follows index that fits (follows_to_time for a channel's followers, follows_from_time for a
// user's followed channels) in the page's order, with no full scan and no sort; the names are
// primary-key lookups of users; the one-user checks, `total` and the moderator probe are index
// probes or ranges; a channel's moderators (GET /moderation/moderators) are a range of the moderators
// primary key. On SQLite (EXPLAIN QUERY PLAN) and PostgreSQL (EXPLAIN on a seeded, analyzed
// store), with the SQL the store functions run.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { type CompiledQuery, sql } from 'kysely';
import { countFollows, followOfPair, oneSidedPage } from '../../src/store/follows.ts';
import { isModerator, moderatorsAmong, moderatorsPage } from '../../src/store/moderators.ts';
import type { PageQuery } from '../../src/store/page.ts';
import { forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';
import { middleKey, queryPlans } from './plans.ts';

/** A channel (no user row needed) that every user of the store moderates. */
const BIG_CHANNEL = 60_000_001;

forEachStore('query plans of /channels/followers and /channels/followed', (kind: StoreKind) => {
  let t: TestApp;
  let demo: number;
  /** the user who follows the most channels */
  let fan: number;

  before(async () => {
    t = await startTestApp(kind, { users: 3000 });
    demo = t.seed?.demoUserId as number;
    const top = await t.store.db
      .selectFrom('follows')
      .select((eb) => ['from_id', eb.fn.countAll().as('n')])
      .groupBy('from_id')
      .orderBy('n', 'desc')
      .orderBy('from_id')
      .executeTakeFirstOrThrow();
    fan = top.from_id;
    // GET /moderation/moderators: a channel moderated by every user, and 20,000 more rows of other
    // channels, so that the moderators table is not one a planner reads whole.
    const users = (await t.store.db.selectFrom('users').select('id').execute()).map((u) => u.id);
    const rows = [
      ...users.map((u) => ({ broadcaster_id: BIG_CHANNEL, user_id: u, created_at: 1_750_000_000 })),
      ...Array.from({ length: 20_000 }, (_, i) => ({
        broadcaster_id: 70_000_000 + (i % 2000),
        user_id: 71_000_000 + i,
        created_at: 1_750_000_000,
      })),
    ];
    for (let i = 0; i < rows.length; i += 2000)
      await t.store.db
        .insertInto('moderators')
        .values(rows.slice(i, i + 2000))
        .execute();
    // Statistics of the tables read (scoped: a database-wide ANALYZE would touch other schemas).
    if (kind === 'postgres') await sql`analyze follows, users, moderators`.execute(t.store.db);
  });
  after(() => t.close());

  const { captured, plan, assertIndexed } = queryPlans(kind, () => t);

  for (const where of ['first page', 'after'] as const) {
    it(`followers page, ${where}: a range of follows_to_time in page order, users by primary key, no sort`, async () => {
      const { key, rows } = await middleKey((page) => oneSidedPage(t.store.db, { to: demo }, page));
      assert.ok(rows > 1000);
      const page: PageQuery = where === 'after' ? { first: 20, after: key } : { first: 20 };
      const [q] = await captured((db) => oneSidedPage(db, { to: demo }, page));
      const lines = await plan(q as CompiledQuery);
      assertIndexed(lines, 'follows', 'follows_to_time', {
        keyed: where === 'after',
        covering: kind === 'sqlite',
      });
      assertIndexed(lines, 'users', 'users_pkey', { alias: 'u' });
    });

    it(`followed page, ${where}: a range of follows_from_time in page order, users by primary key, no sort`, async () => {
      const { key, rows } = await middleKey((page) => oneSidedPage(t.store.db, { from: fan }, page));
      assert.ok(rows > 20);
      const page: PageQuery = where === 'after' ? { first: 10, after: key } : { first: 10 };
      const [q] = await captured((db) => oneSidedPage(db, { from: fan }, page));
      const lines = await plan(q as CompiledQuery);
      assertIndexed(lines, 'follows', 'follows_from_time', {
        keyed: where === 'after',
        covering: kind === 'sqlite',
      });
      assertIndexed(lines, 'users', 'users_pkey', { alias: 'u' });
    });
  }

  it('page queries write their LIMIT into the SQL text', async () => {
    const queries = [
      ...(await captured((db) => oneSidedPage(db, { to: demo }, { first: 20 }))),
      ...(await captured((db) => oneSidedPage(db, { from: fan }, { first: 20 }))),
    ];
    assert.equal(queries.length, 2);
    for (const q of queries) assert.match(q.sql, /limit 21$/, q.sql);
  });

  it('one follower or one followed channel (user_id, broadcaster_id): a primary-key probe of follows, users by primary key', async () => {
    for (const show of ['from', 'to'] as const) {
      const [q] = await captured((db) => followOfPair(db, fan, demo, show));
      const lines = await plan(q as CompiledQuery);
      assertIndexed(lines, 'follows', 'follows_pk');
      assertIndexed(lines, 'users', 'users_pkey', { alias: 'u' });
    }
  });

  it('total: a count over an index range of follows, no table scan', async () => {
    // A count reads every entry of the range in any order: PostgreSQL may gather them with a
    // bitmap of the index, and SQLite counts a user's followed channels over the primary key
    // (from_id, to_id), which holds the same range as follows_from_time.
    const counted = async (sel: { from: number } | { to: number }, indexes: string[]) => {
      const [q] = await captured((db) => countFollows(db, sel));
      const lines = await plan(q as CompiledQuery);
      const text = lines.join('\n');
      const names = indexes.map((i) =>
        kind === 'sqlite' && i.endsWith('_pk') ? 'sqlite_autoindex_follows_1' : i,
      );
      const range =
        kind === 'sqlite'
          ? new RegExp(`^SEARCH follows USING (COVERING )?INDEX (${names.join('|')}) \\(`)
          : new RegExp(`(Bitmap Index Scan on|Index (Only )?Scan (Backward )?using) (${names.join('|')})\\b`);
      assert.ok(
        lines.some((l) => range.test(l.trim())),
        text,
      );
      assert.doesNotMatch(text, /^SCAN|Seq Scan/m, text);
    };
    await counted({ to: demo }, ['follows_to_time']);
    await counted({ from: fan }, ['follows_from_time', 'follows_pk']);
  });

  for (const where of ['first page', 'after'] as const)
    it(`moderators page (GET /moderation/moderators), ${where}: a range of the moderators primary key from the cursor, users by primary key, no sort`, async () => {
      const { key, rows } = await middleKey((page) => moderatorsPage(t.store.db, BIG_CHANNEL, page));
      assert.ok(rows > 1000);
      const page: PageQuery = where === 'after' ? { first: 20, after: key } : { first: 20 };
      const [q] = await captured((db) => moderatorsPage(db, BIG_CHANNEL, page));
      assert.match((q as CompiledQuery).sql, /limit 21$/);
      const lines = await plan(q as CompiledQuery);
      assertIndexed(lines, 'moderators', 'moderators_pk');
      assertIndexed(lines, 'users', 'users_pkey', { alias: 'u' });
      // The page starts at the cursor's user id within the channel's range, at any depth.
      const text = lines.join('\n');
      if (where === 'after')
        assert.match(
          text,
          kind === 'sqlite'
            ? /SEARCH moderators USING (COVERING )?INDEX sqlite_autoindex_moderators_1 \(broadcaster_id=\? AND user_id>\?\)/
            : /Index Cond: \(\(broadcaster_id = '\d+'::bigint\) AND \(user_id > '\d+'::bigint\)\)/,
          text,
        );
    });

  it('moderators among given users: primary-key probes of moderators, users by primary key, no sort', async () => {
    const some = (await moderatorsPage(t.store.db, BIG_CHANNEL, { first: 100 })).rows.map((r) => r.user_id);
    const [q] = await captured((db) => moderatorsAmong(db, BIG_CHANNEL, some.reverse()));
    const lines = await plan(q as CompiledQuery);
    assertIndexed(lines, 'moderators', 'moderators_pk');
    assertIndexed(lines, 'users', 'users_pkey', { alias: 'u' });
  });

  it('the moderator check: one primary-key probe of moderators', async () => {
    const mod = await t.store.db
      .selectFrom('moderators')
      .select('user_id')
      .where('broadcaster_id', '=', demo)
      .executeTakeFirstOrThrow();
    assert.equal(await isModerator(t.store.db, demo, mod.user_id), true);
    assert.equal(await isModerator(t.store.db, demo, demo), false);
    const [q] = await captured((db) => isModerator(db, demo, mod.user_id));
    assertIndexed(await plan(q as CompiledQuery), 'moderators', 'moderators_pk');
  });
});
