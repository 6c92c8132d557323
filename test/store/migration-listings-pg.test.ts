// Migration 014_listings_covering_pg on a store at the migration before it (013, rows in it): up
// and down keep every page of /streams, /streams/markers and /subscriptions (and the others) the
// same; after `up` the listing indexes of those three hold the whole page on PostgreSQL too
// (INCLUDE) and after `down` they are what 012 left; the longest text a record may give there, in
// 4-byte characters, fits an entry. A store holding text past the limits is refused by `up` on
// both stores, with one message naming the rows and the SQL that shortens them, and nothing
// changed; once shortened, `up` goes through.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { MAX_TAGS } from '../../src/records/kinds.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import type { Database } from '../../src/store/schema.ts';
import { forEachStore } from '../support/apps.ts';
import { type StoreKind, tempStore } from '../support/stores.ts';
import { allPages, covering, wide, writeRows } from './listing-rows.ts';

const INDEXES = [
  ['subscriptions_broadcaster_time', ['plan_name', 'gifter_id']],
  ['markers_video_creator_time', ['description', 'position_seconds']],
  ['streams_viewers', ['title', 'tags']],
  ['streams_game_viewers', ['title', 'started_at']],
  ['streams_language_viewers', ['tags', 'is_mature']],
  ['streams_user_viewers', ['title', 'is_mature']],
] as const;

const BEFORE = '013_live_moves';

/** Whether the three listings' indexes hold their pages (all of them or none). */
async function coveringAll(kind: StoreKind, db: Kysely<Database>): Promise<boolean> {
  const out = await covering(kind, db, INDEXES);
  assert.ok(
    out.every((h) => h === out[0]),
    `some indexes hold the page, some not: ${out}`,
  );
  return out[0] as boolean;
}

forEachStore('migration 014_listings_covering_pg', (kind: StoreKind) => {
  it('keeps every page the same up and down, covering on PostgreSQL after up only', async () => {
    const temp = await tempStore(kind);
    try {
      const db = temp.store.db;
      assert.equal((await migrateToLatest(temp.store, BEFORE)).error, undefined);
      // SQLite's indexes hold the page since 012; PostgreSQL's from 014 on.
      assert.equal(await coveringAll(kind, db), kind === 'sqlite');
      for (let n = 0; n < 24; n++) await writeRows(db, n);
      const before = await allPages(db);

      assert.equal((await migrateToLatest(temp.store)).error, undefined);
      assert.deepEqual(await allPages(db), before);
      assert.equal(await coveringAll(kind, db), true);

      assert.equal((await migrateToLatest(temp.store, BEFORE)).error, undefined);
      assert.deepEqual(await allPages(db), before);
      assert.equal(await coveringAll(kind, db), kind === 'sqlite');
    } finally {
      await temp.drop();
    }
  });

  it('refuses a store holding text past the limits, changing nothing, then goes through once it is cut', async () => {
    const temp = await tempStore(kind);
    try {
      const db = temp.store.db;
      assert.equal((await migrateToLatest(temp.store, BEFORE)).error, undefined);
      for (let n = 0; n < 8; n++)
        await writeRows(db, n, (s, max) => (n === 5 || n === 6 ? `${s} ${wide(max)}` : s));
      await db
        .updateTable('streams')
        .set({ tags: JSON.stringify(Array.from({ length: MAX_TAGS + 1 }, (_, i) => `t${i}`)) })
        .where('id', '=', 9002)
        .execute();
      const before = await allPages(db);

      const refused = await migrateToLatest(temp.store);
      const message = String((refused.error as Error | undefined)?.message);
      assert.doesNotMatch(message, /\n/);
      for (const part of [
        'stream title: must be at most 140 characters: 2 rows of streams (9005, 9006)',
        'stream tags: must hold at most 10 tags of at most 25 characters: 1 row of streams (9002)',
        'marker description: must be at most 140 characters: 2 rows of markers (m5, m6)',
        'subscription plan_name: must be at most 256 characters: 2 rows of subscriptions (100/206, 101/205)',
        'nothing was changed',
        `update streams set title = substr(title, 1, 140) where length(title) > 140;`,
      ])
        assert.ok(message.includes(part), `${part} not in: ${message}`);
      const applied = (await sql<{ name: string }>`select name from kysely_migration`.execute(db)).rows;
      assert.ok(!applied.some((r) => r.name === '014_listings_covering_pg'));
      assert.equal(await coveringAll(kind, db), kind === 'sqlite');
      assert.deepEqual(await allPages(db), before);

      // The SQL the message gives, statement by statement, brings the store within the limits.
      const fixes = message.slice(message.indexOf('in SQL: ') + 'in SQL: '.length);
      for (const statement of fixes.split(/;(?: \(or [^)]*\))? ?/).filter((s) => s.trim()))
        await sql.raw(statement).execute(db);
      assert.equal((await migrateToLatest(temp.store)).error, undefined);
      assert.equal(await coveringAll(kind, db), true);
    } finally {
      await temp.drop();
    }
  });
});
