// Query plans of GET /streams (and GET /streams/followed: the user's follows, then their streams by
// user_id, or for a user of many follows the walk of streams_viewers with a probe of follows per
// stream): every page shape (no filter; one or several users, games, languages;
// their combinations; first page, after a cursor, before a cursor) is an index range or an ordered
// walk of an index in the page's order, with no sort and no full read of a table (on SQLite, of an
// index that holds the whole page: migration 012; on PostgreSQL an Index Only Scan: 014), and the game names come from primary-key probes
// of games, on SQLite (EXPLAIN QUERY PLAN) and on PostgreSQL
// (plain EXPLAIN on a seeded, analyzed store; no planner switches). The SQL is what the route runs:
// the first statement streamsPage executes, recorded as it runs.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { type CompiledQuery, sql } from 'kysely';
import type { PageQuery } from '../../src/store/page.ts';
import { FOLLOWS_IN_HAND, type StreamFilters, streamsPage } from '../../src/store/streams.ts';
import { userIdsByLogins } from '../../src/store/users.ts';
import { forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';
import { middleKey, queryPlans } from './plans.ts';

const LANGUAGES = ['en', 'de', 'fr', 'es', 'ja', 'pt', 'ko'];
/** Users (no user rows needed) who follow 3,000 and 3 of the live channels. */
const MANY_FOLLOWS = 80_000_001;
const FEW_FOLLOWS = 80_000_002;

forEachStore('query plans of /streams', (kind: StoreKind) => {
  let t: TestApp;
  let games: number[];
  let users: number[];
  /** the game of users[3]'s stream */
  let userGame: number;

  before(async () => {
    t = await startTestApp(kind, { users: 3000 });
    // A platform has many games and many live channels: 3,000 more games and 30,000 more live
    // streams, spread over the games (a few big, a long tail) and the languages.
    await t.store.db
      .insertInto('games')
      .values(
        Array.from({ length: 3000 }, (_, i) => ({
          id: 1_000_000 + i,
          name: `Extra game ${i}`,
          igdb_id: '',
          owner_id: null,
          viewer_count: 0,
          stream_count: 0,
        })),
      )
      .execute();
    games = (await t.store.db.selectFrom('games').select('id').orderBy('id').execute()).map((g) => g.id);
    const extra = Array.from({ length: 30_000 }, (_, i) => ({
      id: 50_000_000_000 + i,
      user_id: 90_000_000 + i,
      game_id: games[i % 7 === 0 ? i % 5 : (i * 31) % games.length] as number,
      title: `Extra stream ${i}`,
      viewer_count: (i * 7919) % 5000,
      language: LANGUAGES[i % LANGUAGES.length] as string,
      started_at: 1_750_000_000,
      tags: '[]',
      is_mature: 0,
    }));
    for (let i = 0; i < extra.length; i += 2000)
      await t.store.db
        .insertInto('streams')
        .values(extra.slice(i, i + 2000))
        .execute();
    // Two users' follows (GET /streams/followed): one follows 3,000 of the live channels, one 3.
    await t.store.db
      .insertInto('follows')
      .values(
        extra
          .filter((_, i) => i % 10 === 0)
          .map((s, i) => ({ from_id: MANY_FOLLOWS, to_id: s.user_id, followed_at: 1_750_000_000 + i })),
      )
      .execute();
    await t.store.db
      .insertInto('follows')
      .values(
        [extra[5], extra[15_000], extra[29_999]].map((s) => ({
          from_id: FEW_FOLLOWS,
          to_id: (s as (typeof extra)[number]).user_id,
          followed_at: 1_750_000_000,
        })),
      )
      .execute();
    const some = extra.filter((_, i) => i % 97 === 0);
    users = some.map((s) => s.user_id);
    userGame = (some[3] as (typeof some)[number]).game_id;
    // Statistics of the tables read (scoped: a database-wide ANALYZE would touch other schemas).
    // Vacuumed too, as autovacuum keeps a served store: an index-only scan's cost counts the table
    // pages not yet marked all-visible, and a store fresh from its inserts has none marked.
    if (kind === 'postgres') await sql`vacuum analyze streams, games, users, follows`.execute(t.store.db);
  });
  after(() => t.close());

  const { captured, plan } = queryPlans(kind, () => t);
  /** The first statement of a page: all of a first page; after a cursor, the rows not moved since its epoch. */
  const firstStatement = async (f: StreamFilters, page: PageQuery) =>
    (await captured((db) => streamsPage(db, f, page)))[0] as CompiledQuery;

  /**
   * streams is read through one of `indexes` (a range, or, for a first page with no selector, an
   * ordered walk from the top), starting at the cursor's key when there is one; games by primary
   * key; nothing else is read whole and nothing is sorted.
   */
  function assertPlan(lines: string[], indexes: readonly string[], o: { keyed: boolean; walk: boolean }) {
    const text = lines.join('\n');
    const names = indexes.join('|');
    if (kind === 'sqlite') {
      const search = new RegExp(`^SEARCH streams USING (COVERING )?INDEX (${names}) \\(`);
      const walk = new RegExp(`^SCAN streams USING (COVERING )?INDEX (${names})$`);
      assert.ok(
        lines.some((l) => search.test(l) || (o.walk && walk.test(l))),
        `expected ${names}:\n${text}`,
      );
      // The listing indexes hold every column of the page (migration 012): streams' rows are not read.
      assert.ok(
        lines.every((l) => !/^(SEARCH|SCAN) streams USING INDEX streams_/.test(l)),
        `a listing index that does not cover the page:\n${text}`,
      );
      assert.ok(!lines.some((l) => l.startsWith('SCAN') && !(o.walk && walk.test(l))), `full scan:\n${text}`);
      if (o.keyed)
        assert.ok(
          lines.some((l) => search.test(l) && /\)[<>]\(/.test(l)),
          `no keyed range:\n${text}`,
        );
      assert.ok(
        lines.some((l) => /^SEARCH games USING INDEX sqlite_autoindex_games_1 \(id=\?\)/.test(l)),
        `games not probed by primary key:\n${text}`,
      );
      assert.doesNotMatch(text, /TEMP B-TREE/, `sort:\n${text}`);
    } else {
      // The listing indexes hold the whole page (INCLUDE, migration 014): the table is not read.
      assert.match(text, new RegExp(`Index Only Scan (Backward )?using (${names}) on streams\\b`), text);
      assert.match(text, /Index Scan using games_pkey on games/, `games not probed by primary key:\n${text}`);
      assert.doesNotMatch(text, /Seq Scan/, `full scan:\n${text}`);
      assert.doesNotMatch(text, /Sort|Bitmap|Hash/, `sort or unordered read:\n${text}`);
      if (o.keyed) assert.match(text, /Index Cond: .*ROW\(/, `no keyed range:\n${text}`);
    }
  }

  // The unique index on user_id (001) serves a one-user first page on SQLite, which knows it
  // holds at most one row; streams_user_viewers serves the keyed pages and PostgreSQL.
  const ONE_USER = ['streams_user_viewers', 'sqlite_autoindex_streams_2'];
  const shapes: [string, () => StreamFilters, readonly string[]][] = [
    ['no filter', () => ({}), ['streams_viewers']],
    ['one game', () => ({ gameIds: [games[0] as number] }), ['streams_game_viewers']],
    [
      'one game, one language',
      () => ({ gameIds: [games[0] as number], languages: ['de'] }),
      ['streams_game_viewers'],
    ],
    [
      'one game, several languages',
      () => ({ gameIds: [games[1] as number], languages: ['de', 'fr'] }),
      ['streams_game_viewers'],
    ],
    [
      'one game, several users',
      () => ({ gameIds: [games[2] as number], userIds: users }),
      ['streams_game_viewers'],
    ],
    ['several games', () => ({ gameIds: games.slice(0, 40) }), ['streams_viewers']],
    ['several rarely streamed games', () => ({ gameIds: games.slice(-3) }), ['streams_viewers']],
    [
      'several games, one language',
      () => ({ gameIds: games.slice(0, 40), languages: ['ja'] }),
      ['streams_language_viewers'],
    ],
    ['one language', () => ({ languages: ['de'] }), ['streams_language_viewers']],
    ['several languages', () => ({ languages: ['de', 'fr', 'ko'] }), ['streams_viewers']],
    ['one user', () => ({ userIds: [users[3] as number] }), ONE_USER],
    ['one user, one game', () => ({ userIds: [users[3] as number], gameIds: [userGame] }), ONE_USER],
    ['several users', () => ({ userIds: users.slice(0, 2) }), ['streams_viewers']],
    ['100 users', () => ({ userIds: users.slice(0, 100) }), ['streams_viewers']],
    [
      '100 users, several languages',
      () => ({ userIds: users.slice(0, 100), languages: ['de', 'en'] }),
      ['streams_viewers'],
    ],
  ];

  for (const [name, filters, indexes] of shapes)
    for (const where of ['first page', 'after', 'before'] as const)
      it(`${name}, ${where}: ${indexes[0]} in page order, games by primary key, no sort`, async () => {
        const f = filters();
        const { key } = await middleKey((page) => streamsPage(t.store.db, f, page));
        const page: PageQuery =
          where === 'first page'
            ? { first: 20 }
            : where === 'after'
              ? { first: 20, after: key }
              : { first: 20, before: key };
        const lines = await plan(await firstStatement(f, page));
        assertPlan(lines, indexes, {
          keyed: where !== 'first page',
          walk: where === 'first page' && indexes[0] === 'streams_viewers',
        });
      });

  // GET /streams/followed, after one range of the follows primary key (the user's follows, at most
  // FOLLOWS_IN_HAND + 1). A user of more follows: the streams_viewers walk of a page, each stream's
  // channel checked with one probe of the follows primary key (PostgreSQL's statistics of follows
  // must not turn it into a join of the user's follows and a sort). A user of fewer: the followed
  // channels' live streams, probes of the streams' unique user_id, ordered in hand, no sort.
  const followsRange = (lines: string[]) => {
    const text = lines.join('\n');
    if (kind === 'sqlite')
      assert.match(
        text,
        /^SEARCH follows USING COVERING INDEX sqlite_autoindex_follows_1 \(from_id=\?\)/m,
        text,
      );
    // follows_from_time (from_id, followed_at, to_id) serves the range as well
    else assert.match(text, /Index Only Scan using (follows_pk|follows_from_time) on follows/, text);
    assert.doesNotMatch(text, /Seq Scan|^SCAN|Sort|TEMP B-TREE/m, text);
  };
  for (const where of ['first page', 'after'] as const) {
    it(`followed by a user of 3,000 follows (> ${FOLLOWS_IN_HAND}), ${where}: streams_viewers in page order, follows by primary key, no sort`, async () => {
      const f: StreamFilters = { followedBy: MANY_FOLLOWS };
      const { key, rows } = await middleKey((page) => streamsPage(t.store.db, f, page));
      assert.equal(rows, 3000);
      const page: PageQuery = where === 'first page' ? { first: 20 } : { first: 20, after: key };
      const [follows, walk] = await captured((db) => streamsPage(db, f, page));
      followsRange(await plan(follows as CompiledQuery));
      const lines = await plan(walk as CompiledQuery);
      assertPlan(lines, ['streams_viewers'], { keyed: where === 'after', walk: where === 'first page' });
      const text = lines.join('\n');
      if (kind === 'sqlite')
        assert.match(
          text,
          /^SEARCH fo (EXISTS )?USING COVERING INDEX sqlite_autoindex_follows_1 \(from_id=\? AND to_id=\?\)/m,
          text,
        );
      else assert.match(text, /Index Only Scan using follows_pk on follows fo/, text);
    });
    it(`followed by a user of 3 follows, ${where}: the followed channels' streams by user_id, no sort, no walk`, async () => {
      const f: StreamFilters = { followedBy: FEW_FOLLOWS };
      const all = await streamsPage(t.store.db, f, { first: 100 });
      assert.equal(all.rows.length, 3);
      const page: PageQuery =
        where === 'first page' ? { first: 2 } : { first: 2, after: all.ends?.first, epoch: all.epoch };
      const [follows, streams] = await captured((db) => streamsPage(db, f, page));
      followsRange(await plan(follows as CompiledQuery));
      const text = (await plan(streams as CompiledQuery)).join('\n');
      if (kind === 'sqlite')
        assert.match(
          text,
          /^SEARCH streams USING (COVERING )?INDEX (sqlite_autoindex_streams_2|streams_user_viewers) \(user_id=\?\)/m,
          text,
        );
      else
        assert.match(
          text,
          /(Index (Only )?Scan using (streams_user_id_key|streams_user_viewers) on streams|Bitmap Index Scan on (streams_user_id_key|streams_user_viewers))/,
          text,
        );
      assert.doesNotMatch(text, /Seq Scan|^SCAN streams|Sort|TEMP B-TREE/m, text);
      assert.doesNotMatch(text, /streams_viewers\b/, 'no walk of the listing');
    });
  }

  it('a page writes its LIMIT into the SQL text and binds every filter value', async () => {
    const q = await firstStatement({ gameIds: games.slice(0, 3), languages: ['de'] }, { first: 20 });
    assert.match(q.sql, /limit 21$/);
    assert.deepEqual(q.parameters, [...games.slice(0, 3), 'de']);
  });

  it('users named by login: one lookup through the unique index on users.login', async () => {
    const logins = (await t.store.db.selectFrom('users').select('login').limit(50).execute()).map(
      (u) => u.login,
    );
    let compiled: CompiledQuery | undefined;
    const db = t.store.db.withPlugin({
      transformQuery: (args) => {
        compiled = t.store.db.getExecutor().compileQuery(args.node, args.queryId);
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    assert.equal((await userIdsByLogins(db, logins)).length, 50);
    const text = (await plan(compiled as CompiledQuery)).join('\n');
    if (kind === 'sqlite')
      assert.match(
        text,
        /^SEARCH users USING (COVERING )?INDEX sqlite_autoindex_users_2 \(login=\?\)/m,
        text,
      );
    // a set of rows, in no order: PostgreSQL may collect it as a bitmap of the index's matches
    else
      assert.match(
        text,
        /(Index (Only )?Scan using users_login_key on users|Bitmap Index Scan on users_login_key)/,
        text,
      );
    assert.doesNotMatch(text, /Seq Scan|^SCAN/m, text);
  });
});
