// Migration 010_clips_covering on a store made by the version before it (migrated to 009, clips in
// it): up and down keep every page of /clips by broadcaster and by game the same, the pages read
// the covering indexes on SQLite after `up` and not after `down`, and a clip with a title far
// longer than any index entry may hold on PostgreSQL can still be written, before and after.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { type ClipQuery, clipsPage, clipsPageQuery } from '../../src/store/clips.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import type { Database, NewClip } from '../../src/store/schema.ts';
import { forEachStore, type StoreKind, tempStore } from '../helpers.ts';
import { explain } from './plans.ts';

// Incompressible: 6,000 hex digits, twice what a PostgreSQL B-tree entry may hold.
const LONG_TITLE = Array.from({ length: 6000 }, (_, i) => ((i * 7919) % 16).toString(16)).join('');

function clip(n: number, title = `clip ${n}`): NewClip {
  return {
    id: `Clip${n}`,
    broadcaster_id: 100 + (n % 2),
    creator_id: 200 + (n % 5),
    video_id: n % 3 === 0 ? null : 300 + n,
    game_id: 400 + (n % 3),
    language: n % 4 === 0 ? 'de' : 'en',
    title,
    view_count: (n * 37) % 11,
    created_at: 1_600_000_000 + n * 86_400,
    duration_ds: 50 + n,
    vod_offset: n % 2 === 0 ? null : n * 10,
    is_featured: n % 3 === 1 ? 1 : 0,
  };
}

const QUERIES: ClipQuery[] = [100, 101].flatMap((value) => [
  { selector: 'broadcaster_id' as const, value },
  { selector: 'game_id' as const, value: value + 300 },
  { selector: 'game_id' as const, value: value + 301, isFeatured: true },
  { selector: 'broadcaster_id' as const, value, isFeatured: false },
  { selector: 'broadcaster_id' as const, value, period: { from: 1_600_000_000, to: 1_601_000_000 } },
]);

/** Every page of every query, 3 rows at a time, walked forward. */
async function allPages(db: Kysely<Database>): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const q of QUERIES) {
    let page = await clipsPage(db, q, { first: 3 });
    out.push(page);
    while (page.hasMore && page.ends) {
      page = await clipsPage(db, q, { first: 3, after: page.ends.last });
      out.push(page);
    }
  }
  return out;
}

forEachStore('migration 010_clips_covering', (kind: StoreKind) => {
  it('keeps every page the same up and down, covering on SQLite only after up, long titles writable', async () => {
    const temp = await tempStore(kind);
    try {
      const db = temp.store.db;
      const down = await migrateToLatest(temp.store, '009_clips_per_game_day');
      assert.equal(down.error, undefined);
      await db
        .insertInto('clips')
        .values([...Array.from({ length: 40 }, (_, n) => clip(n)), clip(40, LONG_TITLE)])
        .execute();
      const before = await allPages(db);
      assert.ok(before.length > QUERIES.length, 'the queries should span several pages');

      const usesCovering = async () => {
        const plans = await Promise.all(
          QUERIES.map(async (q) =>
            (await explain(kind, db, clipsPageQuery(db, q, { first: 3 }).compile())).join('\n'),
          ),
        );
        return plans.map((p) => / USING COVERING INDEX clips_\w+_views /.test(p));
      };

      const up = await migrateToLatest(temp.store);
      assert.equal(up.error, undefined);
      assert.deepEqual(await allPages(db), before);
      assert.deepEqual(
        await usesCovering(),
        QUERIES.map(() => kind === 'sqlite'),
      );
      await db
        .insertInto('clips')
        .values(clip(41, `${LONG_TITLE} again`))
        .execute();
      await sql`delete from clips where id = 'Clip41'`.execute(db);

      const back = await migrateToLatest(temp.store, '009_clips_per_game_day');
      assert.equal(back.error, undefined);
      assert.deepEqual(await allPages(db), before);
      assert.deepEqual(
        await usesCovering(),
        QUERIES.map(() => false),
      );
    } finally {
      await temp.drop();
    }
  });
});
