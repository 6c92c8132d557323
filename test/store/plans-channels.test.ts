// Query plans of GET /channels and of the channel checks of the write path, on SQLite (EXPLAIN
// QUERY PLAN) and PostgreSQL (plain EXPLAIN on a seeded, analyzed store): the channels of a list of
// users are probes of the users, channels and games primary keys, and whether a channel names a
// game (a game's delete) is a probe of the partial index channels_game (migration 019), never a
// read of a whole table, never a sort.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { CompiledQuery } from 'kysely';
import { sql } from 'kysely';
import { channelsOf } from '../../src/store/channels.ts';
import { anyRowNames } from '../../src/store/records.ts';
import { forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';
import { insertRows, queryPlans } from './plans.ts';

forEachStore('query plans of GET /channels and the channel checks', (kind: StoreKind) => {
  let t: TestApp;
  let ids: number[];
  let game: number;

  before(async () => {
    t = await startTestApp(kind, { users: 3000 });
    const streams = await t.store.db
      .selectFrom('streams')
      .select(['user_id', 'game_id'])
      .limit(100)
      .execute();
    assert.ok(streams.length > 10, 'the demo data has live streams');
    ids = streams.map((s) => s.user_id);
    game = streams[0]?.game_id as number;
    const rows = await t.store.db.selectFrom('channels').select('broadcaster_id').limit(1).execute();
    assert.equal(rows.length, 1, 'the demo data has channels');
    // A platform has many more channels and games than this demo store: 30,000 more channels (no
    // user rows needed) of 20,000 more games, so that neither table is one a planner would read whole.
    const db = t.store.db;
    const games = Array.from({ length: 20_000 }, (_, i) => ({
      id: 1_000_000 + i,
      name: `Channel Game ${i}`,
      igdb_id: '',
      owner_id: null,
      viewer_count: 0,
      stream_count: 0,
    }));
    await insertRows(db, 'games', games);
    const channels = Array.from({ length: 30_000 }, (_, i) => ({
      broadcaster_id: 90_000_000 + i,
      title: `Channel ${i}`,
      game_id: 1_000_000 + (i % 20_000),
      language: 'en',
      delay: 0,
      tags: '[]',
      labels: '[]',
      is_branded_content: 0,
    }));
    await insertRows(db, 'channels', channels);
    if (kind === 'postgres') await sql`vacuum analyze users, channels, games, streams`.execute(db);
  });
  after(() => t.close());

  const { captured, plan, assertIndexed } = queryPlans(kind, () => t);
  const planOf = async (run: Parameters<typeof captured>[0]) => {
    const [q] = (await captured(run)).slice(-1);
    return plan(q as CompiledQuery);
  };

  it('GET /channels: 100 users, their channels and games, each by primary key', async () => {
    assert.equal((await channelsOf(t.store.db, ids)).length, ids.length);
    const lines = await planOf((db) => channelsOf(db, ids));
    const text = lines.join('\n');
    if (kind === 'sqlite') {
      assert.doesNotMatch(text, /^SCAN/m, text);
      assert.doesNotMatch(text, /TEMP B-TREE/, text);
      for (const table of ['u', 'c', 'g'])
        assert.match(text, new RegExp(`^SEARCH ${table} USING`, 'm'), text);
    } else {
      assert.doesNotMatch(text, /Seq Scan|Sort/, text);
      for (const [table, index] of [
        ['users u', 'users_pkey'],
        ['channels c', 'channels_pkey'],
        ['games g', 'games_pkey'],
      ])
        assert.match(
          text,
          new RegExp(`(Index (Only )?Scan using ${index} on ${table}|Bitmap Index Scan on ${index})`),
          text,
        );
    }
  });

  it("a game's delete asks whether a channel names it: a probe of channels_game", async () => {
    assert.equal(await anyRowNames(t.store.db, 'channels', 'game_id', game), true);
    assertIndexed(
      await planOf((db) => anyRowNames(db, 'channels', 'game_id', game)),
      'channels',
      'channels_game',
    );
  });
});
