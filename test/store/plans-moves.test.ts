// Query plans of the second statement of a page after a cursor of /streams, /streams/followed and
// /games/top (the rows moved since the walk's epoch, src/store/moves.ts): the log is read from the
// epoch on through its primary key, each entry's "first move of its row after the epoch" is one probe
// of the log's (id, seq) index, and the listed rows come by primary key; the moved rows are sorted
// (as many as moved during the walk), nothing is read whole. The first statement and the first page
// are the plans of plans-streams.test.ts and plans-subs-markers-games.test.ts.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { type CompiledQuery, sql } from 'kysely';
import { topGames } from '../../src/store/games.ts';
import type { PageQuery } from '../../src/store/page.ts';
import { type StreamFilters, streamsPage } from '../../src/store/streams.ts';
import { forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';
import { queryPlans } from './plans.ts';

forEachStore('query plans of the moved rows of /streams and /games/top', (kind: StoreKind) => {
  let t: TestApp;
  let epoch: number;

  before(async () => {
    t = await startTestApp(kind, { users: 2000 });
    const db = t.store.db;
    // 20 rounds of every stream's viewer count changing: a long log, of which a walk reads its end.
    for (let i = 1; i <= 20; i++)
      await sql`update streams set viewer_count = viewer_count + ${i % 2 === 0 ? i : -i}`.execute(db);
    const last = await db
      .selectFrom('stream_moves')
      .select(sql<number>`max(seq)`.as('n'))
      .executeTakeFirstOrThrow();
    epoch = Number(last.n) - 50;
    if (kind === 'postgres') await sql`analyze streams, games, stream_moves, game_moves, follows`.execute(db);
  });
  after(() => t.close());

  const { captured, plan: planLines } = queryPlans(kind, () => t);
  const plan = async (q: CompiledQuery) => (await planLines(q)).join('\n');
  /** The second statement a page after a cursor runs: the rows moved since the walk's epoch. */
  const movedStatement = async (run: Parameters<typeof captured>[0], before = 0) => {
    const queries = await captured(run);
    assert.equal(queries.length, before + 2, 'a page after a cursor runs two statements');
    return queries[before + 1] as CompiledQuery;
  };
  const streamsMoved = (f: StreamFilters, page: PageQuery) =>
    movedStatement((db) => streamsPage(db, f, page));

  function assertLogRead(text: string, log: string, listed: string) {
    if (kind === 'sqlite') {
      assert.match(text, /SEARCH m USING INTEGER PRIMARY KEY \(rowid>\?\)/, text);
      assert.match(
        text,
        new RegExp(`SEARCH f USING COVERING INDEX ${log}_row \\(\\w+=\\? AND seq>\\?\\)`),
        text,
      );
      assert.match(
        text,
        new RegExp(`SEARCH ${listed} USING INDEX sqlite_autoindex_${listed}_1 \\(id=\\?\\)`),
        text,
      );
      assert.doesNotMatch(text, /^SCAN/m, text);
    } else {
      assert.match(text, new RegExp(`Index Scan using ${log}_pkey on ${log} m`), text);
      assert.match(text, new RegExp(`Index Only Scan using ${log}_row on ${log} f`), text);
      assert.match(text, new RegExp(`Index Scan using ${listed}_pkey on ${listed}`), text);
      assert.doesNotMatch(text, /Seq Scan/, text);
    }
  }

  it('/streams after a cursor: the log from the epoch on, probes of its rows and of streams', async () => {
    const q = await streamsMoved({}, { first: 20, after: [1000, 1], epoch });
    assertLogRead(await plan(q), 'stream_moves', 'streams');
  });

  it('/streams of one game after a cursor: the same, the game checked on the logged values', async () => {
    const game = await t.store.db.selectFrom('streams').select('game_id').limit(1).executeTakeFirstOrThrow();
    const q = await streamsMoved({ gameIds: [game.game_id] }, { first: 20, after: [1000, 1], epoch });
    assertLogRead(await plan(q), 'stream_moves', 'streams');
  });

  it("/streams/followed after a cursor: the same, each moved row's channel one probe of the follows primary key", async () => {
    const fan = await t.store.db
      .selectFrom('follows')
      .select('from_id')
      .orderBy('from_id')
      .limit(1)
      .executeTakeFirstOrThrow();
    // After the read of the user's follows (src/store/streams.ts, followedPage).
    const q = await movedStatement(
      (db) => streamsPage(db, { followedBy: fan.from_id }, { first: 20, after: [1000, 1], epoch }),
      1,
    );
    const text = await plan(q);
    assertLogRead(text, 'stream_moves', 'streams');
    if (kind === 'sqlite')
      assert.match(
        text,
        /SEARCH fo (EXISTS )?USING COVERING INDEX sqlite_autoindex_follows_1 \(from_id=\? AND to_id=\?\)/,
        text,
      );
    else assert.match(text, /Index Only Scan using follows_pk on follows fo/, text);
  });

  it('/games/top after a cursor: the log from the epoch on, probes of its rows and of games', async () => {
    const last = await t.store.db
      .selectFrom('game_moves')
      .select(sql<number>`max(seq)`.as('n'))
      .executeTakeFirstOrThrow();
    const q = await movedStatement((db) =>
      topGames(db, { first: 20, after: [1000, 1], epoch: Number(last.n) - 20 }),
    );
    assertLogRead(await plan(q), 'game_moves', 'games');
  });
});
