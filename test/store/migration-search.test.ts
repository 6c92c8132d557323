// Migration 018_search on a store made by the version before it (migrated down to 017_video_links, users,
// games and streams in it): `up` fills the search keys from what the store holds (a login and a
// display name, a name from each word on, who is live), and from then on its triggers keep them
// with the writes; `down` removes the keys, their triggers and functions, and the tables are
// written as before. On both stores.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { searchCategories, searchChannels } from '../../src/store/search.ts';
import { forEachStore } from '../support/apps.ts';
import { type StoreKind, tempStore } from '../support/stores.ts';

const user = (id: number, login: string, display_name: string) => ({
  id,
  login,
  display_name,
  broadcaster_type: '',
  description: '',
  created_at: 1_600_000_000,
  email: '',
});
const game = (id: number, name: string) => ({
  id,
  name,
  igdb_id: '',
  owner_id: null,
  viewer_count: 0,
  stream_count: 0,
});

forEachStore('migration 018_search', (kind: StoreKind) => {
  it('fills the keys from the rows a store holds, keeps them with writes after, and goes down cleanly', async () => {
    const temp = await tempStore(kind);
    try {
      const db = temp.store.db;
      const down = await migrateToLatest(temp.store, '017_video_links');
      assert.equal(down.error, undefined);
      const tables = async () =>
        kind === 'sqlite'
          ? (
              await sql<{ name: string }>`select name from sqlite_master
                where name like 'search%' order by name`.execute(db)
            ).rows.map((r) => r.name)
          : (
              await sql<{ name: string }>`
                select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
                where n.nspname = current_schema() and c.relname like 'search%'
                union all select tgname from pg_trigger where tgname like 'search%'
                  and tgrelid in (select oid from pg_class where relnamespace =
                    (select oid from pg_namespace where nspname = current_schema()))
                union all select proname from pg_proc where proname like 'search%'
                  and pronamespace = (select oid from pg_namespace where nspname = current_schema())
                order by 1`.execute(db)
            ).rows.map((r) => r.name);
      assert.deepEqual(await tables(), [], 'nothing of 018 before it');
      await db
        .insertInto('users')
        .values([
          user(1, 'angel_of_death', 'Angel_of_Death'),
          user(2, 'zed', 'Zephyr'),
          user(3, 'other', 'Other'),
        ])
        .execute();
      await db
        .insertInto('games')
        .values([game(10, 'World of Warcraft'), game(11, 'Wordle')])
        .execute();
      await db
        .insertInto('streams')
        .values({
          id: 100,
          user_id: 2,
          game_id: 10,
          title: 't',
          viewer_count: 1,
          language: 'en',
          started_at: 1_700_000_000,
          tags: '[]',
          is_mature: 0,
        })
        .execute();

      const up = await migrateToLatest(temp.store);
      assert.equal(up.error, undefined);
      const channels = async (q: string, liveOnly = false) =>
        (await searchChannels(db, q, liveOnly, { first: 100 })).rows.map((r) => r.user_id);
      const categories = async (q: string) =>
        (await searchCategories(db, q, { first: 100 })).rows.map((r) => r.game_id);
      assert.deepEqual(await channels('angelofdeath'), [1]);
      assert.deepEqual(await channels('z'), [2], 'by login and display name, once');
      assert.deepEqual(await channels('zeph', true), [2], 'live, from the streams it found');
      assert.deepEqual(await channels('o', true), []);
      assert.deepEqual(await categories('wor'), [11, 10], 'wordle < world of warcraft');
      assert.deepEqual(await categories('warcraft'), [10]);

      // The triggers from now on: a new user, a renamed game, a stream gone offline.
      await db
        .insertInto('users')
        .values(user(4, 'ozone', 'Ozone'))
        .execute();
      await db.updateTable('games').set({ name: 'Wordplay' }).where('id', '=', 11).execute();
      await db.deleteFrom('streams').where('id', '=', 100).execute();
      assert.deepEqual(await channels('o'), [3, 4]);
      assert.deepEqual(await channels('z', true), []);
      assert.deepEqual(await categories('wordp'), [11]);
      assert.deepEqual(await categories('wordl'), []);

      const again = await migrateToLatest(temp.store, '017_video_links');
      assert.equal(again.error, undefined);
      assert.deepEqual(await tables(), [], 'nothing of 018 after down');
      // The tables are written as before 018, with nothing left to fire.
      await db
        .insertInto('users')
        .values(user(5, 'after', 'After'))
        .execute();
      await db.updateTable('games').set({ name: 'Later' }).where('id', '=', 10).execute();
      await db.deleteFrom('users').where('id', '=', 1).execute();
      const last = await migrateToLatest(temp.store);
      assert.equal(last.error, undefined);
      assert.deepEqual(await channels('after'), [5]);
      assert.deepEqual(await channels('angel'), []);
      assert.deepEqual(await categories('later'), [10]);
    } finally {
      await temp.drop();
    }
  });
});
