// Migration 012_listings_covering on a store made by the version before it (migrated down to the
// migration that precedes 012, rows in it): up and down keep every page of /videos, /subscriptions,
// /streams/markers, /games/top and /streams the same; after `up` the listing indexes hold the whole
// page (SQLite: every one of them; PostgreSQL: games_top_live, INCLUDE) and after `down` they are
// what they were; text far longer than a PostgreSQL index entry may hold (video descriptions,
// stream titles, marker descriptions, plan names: no length limit before 014) can still be written
// after `up`, and the longest game name a record may give fits games_top_live's entry. The store
// goes up to 013 only: 014 limits that text (test/store/migration-listings-pg.test.ts).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { migrateToLatest } from '../../src/store/migrate.ts';
import * as m013 from '../../src/store/migrations/013_live_moves.ts';
import type { Database } from '../../src/store/schema.ts';
import { forEachStore } from '../support/apps.ts';
import { type StoreKind, tempStore } from '../support/stores.ts';
import { allPages, covering, writeRows } from './listing-rows.ts';

// Incompressible: 6,000 hex digits, twice what a PostgreSQL B-tree entry may hold.
const LONG = Array.from({ length: 6000 }, (_, i) => ((i * 7919) % 16).toString(16)).join('');

const INDEXES = [
  ['videos_user_time', ['description', 'muted_segments', 'trending']],
  ['videos_game_trending', ['description', 'title']],
  ['subscriptions_broadcaster_time', ['plan_name', 'gifter_id']],
  ['markers_video_creator_time', ['description', 'position_seconds']],
  ['games_top_live', ['name', 'igdb_id']],
  ['streams_viewers', ['title', 'tags']],
  ['streams_user_viewers', ['title', 'is_mature']],
] as const;
const ON_POSTGRES = new Set(['games_top_live']);

const LATER = [m013];
const laterUp = async (db: Kysely<Database>) => {
  for (const m of LATER) await m.up(db as unknown as Kysely<unknown>);
};
const laterDown = async (db: Kysely<Database>) => {
  for (const m of [...LATER].reverse()) await m.down(db as unknown as Kysely<unknown>);
};

forEachStore('migration 012_listings_covering', (kind: StoreKind) => {
  it('keeps every page the same up and down, covering after up only, long text writable', async () => {
    const temp = await tempStore(kind);
    try {
      const db = temp.store.db;
      // The migration before 012, by name: whatever the store lists before it.
      const applied = (await sql<{ name: string }>`select name from kysely_migration`.execute(db)).rows
        .map((r) => r.name)
        .sort();
      const previous = applied[applied.indexOf('012_listings_covering') - 1] as string;
      assert.ok(previous, `no migration before 012 in ${applied}`);
      const down = await migrateToLatest(temp.store, previous);
      assert.equal(down.error, undefined);
      // Today's code reads the tables of the migrations after 012 (013's log of moves, which
      // /streams and /games/top pages read): they are made beside the older indexes, as a store
      // that had them would hold them, and removed again before the migrator runs.
      await laterUp(db);
      assert.deepEqual(
        await covering(kind, db, INDEXES),
        INDEXES.map(() => false),
      );
      for (let n = 0; n < 24; n++) await writeRows(db, n, (s) => (n === 5 ? `${s} ${LONG}` : s));
      const before = await allPages(db);

      await laterDown(db);
      const up = await migrateToLatest(temp.store, '013_live_moves');
      assert.equal(up.error, undefined);
      assert.deepEqual(await allPages(db), before);
      assert.deepEqual(
        await covering(kind, db, INDEXES),
        INDEXES.map(([index]) => kind === 'sqlite' || ON_POSTGRES.has(index)),
      );
      await writeRows(db, 30, (s) => `${s} ${LONG}`);
      // What writeRows(30) wrote, each row by its key, the stream before its game.
      for (const [table, column, value] of [
        ['markers', 'id', 'm30'],
        ['subscriptions', 'user_id', 230],
        ['videos', 'id', 7030],
        ['streams', 'id', 9030],
        ['games', 'id', 530],
      ] as const)
        await sql`delete from ${sql.table(table)} where ${sql.ref(column)} = ${value}`.execute(db);
      assert.deepEqual(await allPages(db), before);

      const back = await migrateToLatest(temp.store, previous);
      assert.equal(back.error, undefined);
      await laterUp(db);
      assert.deepEqual(await allPages(db), before);
      assert.deepEqual(
        await covering(kind, db, INDEXES),
        INDEXES.map(() => false),
      );
    } finally {
      await temp.drop();
    }
  });
});
