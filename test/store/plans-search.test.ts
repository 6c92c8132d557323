// Query plans of GET /search/categories and GET /search/channels: a page is one statement whose
// subquery is one range of the search keys (migration 018) in page order, the primary key (key,
// id) or, for live channels only, the partial index search_channel_keys_live; after a cursor the
// range starts at the cursor's key; a second key of the same item is one probe of the (id, key)
// index. Around it, the page's games, or its users with their streams and the streams' games, by
// their keys. No table is read whole (neither users nor games) and nothing is sorted, on SQLite
// (EXPLAIN QUERY PLAN) and PostgreSQL (EXPLAIN on a seeded, analyzed store, no planner switches).
// The SQL is what the store functions run.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { type CompiledQuery, sql } from 'kysely';
import type { PageQuery } from '../../src/store/page.ts';
import { searchCategories, searchChannels } from '../../src/store/search.ts';
import { forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';
import { insertRows, middleKey, queryPlans } from './plans.ts';

forEachStore('query plans of /search/categories and /search/channels', (kind: StoreKind) => {
  let t: TestApp;

  before(async () => {
    t = await startTestApp(kind, { users: 3000 });
    const db = t.store.db;
    // A platform has many more users and games than this demo store: 30,000 more users and 20,000
    // more games, each with keys the searches below range over, so that neither table is one a
    // planner would read whole.
    const people = Array.from({ length: 30_000 }, (_, i) => ({
      id: 90_000_000 + i,
      login: `extra_user_${i}`,
      display_name: i % 3 === 0 ? `Other_Name_${i}` : `Extra_User_${i}`,
      broadcaster_type: '',
      description: '',
      created_at: 1_500_000_000 + i,
      email: '',
    }));
    await insertRows(db, 'users', people);
    const games = Array.from({ length: 20_000 }, (_, i) => ({
      id: 1_000_000 + i,
      name: `Extra Game ${i} Edition`,
      igdb_id: '',
      owner_id: null,
      viewer_count: 0,
      stream_count: 0,
    }));
    await insertRows(db, 'games', games);
    // And as many live streams as a platform of that size has (a third of the new users): a
    // lookup of 20 users' streams is then a probe each, never a read of the table.
    const streams = people
      .filter((_, i) => i % 3 === 1)
      .map((u, i) => ({
        id: 95_000_000 + i,
        user_id: u.id,
        game_id: 1_000_000 + (i % 20_000),
        title: `Stream ${i}`,
        viewer_count: i % 500,
        language: 'en',
        started_at: 1_780_000_000,
        tags: '[]',
        is_mature: 0,
      }));
    await insertRows(db, 'streams', streams);
    // Their channels (a live stream holds its channel's values), and as many again of users offline.
    const channels = people
      .filter((_, i) => i % 3 !== 0)
      .map((u, i) => ({
        broadcaster_id: u.id,
        title: `Stream ${i}`,
        game_id: 1_000_000 + (i % 20_000),
        language: 'en',
        delay: 0,
        tags: '[]',
        labels: '[]',
        is_branded_content: 0,
      }));
    await insertRows(db, 'channels', channels);
    // Statistics of the tables read (scoped: a database-wide ANALYZE would touch other schemas).
    if (kind === 'postgres')
      await sql`analyze users, games, streams, channels, search_channel_keys, search_game_keys`.execute(db);
  });
  after(() => t.close());

  const { captured, plan, assertIndexed } = queryPlans(kind, () => t);

  /** The plan of a page of `pageOf` at its first page or after the middle of all its rows. */
  async function planOf(
    pageOf: (db: TestApp['store']['db'], page: PageQuery) => Promise<unknown>,
    where: 'first page' | 'after',
    least: number,
  ): Promise<string[]> {
    const { key, rows } = await middleKey((page) => pageOf(t.store.db, page) as never);
    assert.ok(rows >= least, `${rows} rows to page through`);
    const page: PageQuery = where === 'after' ? { first: 20, after: key } : { first: 20 };
    const queries = await captured((db) => pageOf(db, page));
    return plan(queries[queries.length - 1] as CompiledQuery);
  }

  for (const where of ['first page', 'after'] as const) {
    for (const [query, least] of [
      ['e', 20_000],
      ['extra game 1', 10_000],
      // one game: the first page only
      ...(where === 'first page' ? ([['extra game 12345', 1]] as const) : []),
    ] as const)
      it(`categories "${query}", ${where}: a range of the game keys' primary key, games by primary key, no sort`, async () => {
        const lines = await planOf((db, page) => searchCategories(db, query, page), where, least);
        assertIndexed(lines, 'search_game_keys', 'search_game_keys_pkey', {
          alias: 'k',
          keyed: where === 'after',
        });
        assertIndexed(lines, 'search_game_keys', 'search_game_keys_game', { alias: 'o' });
        assertIndexed(lines, 'games', 'games_pkey', { alias: 'g' });
      });

    for (const [query, least] of [
      ['e', 30_000],
      ['extrauser1', 10_000],
      ['b', 100],
      ...(where === 'first page' ? ([['extrauser12345', 1]] as const) : []),
    ] as const)
      it(`channels "${query}", ${where}: a range of the channel keys' primary key, users and streams by key, no sort`, async () => {
        const lines = await planOf((db, page) => searchChannels(db, query, false, page), where, least);
        assertIndexed(lines, 'search_channel_keys', 'search_channel_keys_pkey', {
          alias: 'k',
          keyed: where === 'after',
        });
        assertIndexed(lines, 'search_channel_keys', 'search_channel_keys_user', { alias: 'o' });
        assertItems(lines);
      });

    it(`live channels "b", ${where}: a range of search_channel_keys_live (live rows only), no sort`, async () => {
      const lines = await planOf((db, page) => searchChannels(db, 'b', true, page), where, 20);
      assertIndexed(lines, 'search_channel_keys', 'search_channel_keys_live', {
        alias: 'k',
        keyed: where === 'after',
      });
      assertItems(lines);
    });
  }

  /** The page's users by primary key, each one's stream by its unique user_id, its game by primary key. */
  function assertItems(lines: string[]): void {
    assertIndexed(lines, 'users', 'users_pkey', { alias: 'u' });
    const text = lines.join('\n');
    if (kind === 'sqlite') {
      assert.match(text, /SEARCH s USING (COVERING )?INDEX \w+ \(user_id=\?\)/, text);
      assert.match(text, /SEARCH g USING INDEX sqlite_autoindex_games_1 \(id=\?\)/, text);
    } else {
      assert.match(
        text,
        /Index (Only )?Scan using \w+ on streams s\b.*\n\s+Index Cond: \(user_id = (k\.user_id|p\.user_id|u\.id)\)/,
        text,
      );
      assert.match(text, /Index Scan using games_pkey on games g/, text);
    }
  }

  it('a query of a rare beginning reads only its matches: a first page of 20 matches bounded by them', async () => {
    // The range's end is the query's last possible text: nothing past it is read. SQLite shows
    // both bounds in the search; PostgreSQL both in the index condition.
    const queries = await captured((db) => searchChannels(db, 'extrauser12', false, { first: 20 }));
    const text = (await plan(queries[queries.length - 1] as CompiledQuery)).join('\n');
    if (kind === 'sqlite') assert.match(text, /SEARCH k USING PRIMARY KEY \(key>\? AND key<\?\)/, text);
    else
      assert.match(
        text,
        /Index Cond: \(\(key >= 'extrauser12'::text\) AND \(key < 'extrauser13'::text\)\)/,
        text,
      );
  });
});
