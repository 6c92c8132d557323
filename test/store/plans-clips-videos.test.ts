// Query plans of GET /clips and GET /videos: every paged query shape is an index range scan in the
// order of the page (no full scan of a table, no sort), on SQLite (EXPLAIN QUERY PLAN) and on
// PostgreSQL (plain EXPLAIN on a seeded, analyzed store; no planner switches). The SQL is the one
// the routes run: recorded as the store functions run it.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { type CompiledQuery, sql } from 'kysely';
import { type ClipFilters, type ClipSelector, clipsPage } from '../../src/store/clips.ts';
import type { Key, Page, PageQuery } from '../../src/store/page.ts';
import { type VideoQuery, type VideoSelector, videosPage } from '../../src/store/videos.ts';
import { forEachStore, startTestApp, TEST_NOW, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';
import { gameWithMostClips, middleKey, queryPlans } from './plans.ts';

const DAY = 86400;
const now = TEST_NOW / 1000;

forEachStore('query plans of /clips and /videos', (kind: StoreKind) => {
  let t: TestApp;
  const sel: Record<ClipSelector | VideoSelector, number> = { broadcaster_id: 0, user_id: 0, game_id: 0 };

  before(async () => {
    t = await startTestApp(kind, { users: 3000 });
    sel.broadcaster_id = sel.user_id = t.seed?.demoUserId as number;
    sel.game_id = await gameWithMostClips(t.store.db);
    // Statistics of the seeded tables (scoped: a database-wide ANALYZE would touch other schemas).
    // Vacuumed too, as autovacuum keeps a served store: an index-only scan's cost counts the table
    // pages not yet marked all-visible, and a store fresh from its inserts has none marked.
    if (kind === 'postgres') await sql`vacuum analyze clips, videos`.execute(t.store.db);
  });
  after(() => t.close());

  const { captured, plan } = queryPlans(kind, () => t);
  /** The one statement a store function runs. */
  const statement = async (run: Parameters<typeof captured>[0]) => (await captured(run))[0] as CompiledQuery;

  /**
   * `keyed`: a page after a cursor, whose key must bound the index range (same cost at any depth).
   * `covering`: the stores whose index holds every column the page reads, so that the table's rows
   * are not read at all: SQLite (migrations 010, 012) and, for /clips, PostgreSQL (011: an Index
   * Only Scan). PostgreSQL's /videos indexes do not cover: their title and description have no
   * length cap, and an index entry has one (docs/listing-layout.md).
   */
  function assertRangeScan(
    lines: string[],
    table: string,
    index: string,
    keyed: boolean,
    covering: 'none' | 'sqlite' | 'both' = 'none',
  ): void {
    const text = lines.join('\n');
    if (kind === 'sqlite') {
      const using = covering !== 'none' ? 'USING COVERING INDEX' : 'USING INDEX';
      assert.ok(
        lines.some((l) => l.startsWith(`SEARCH ${table} ${using} ${index} (`)),
        `expected a range of ${index}${covering !== 'none' ? ', covering' : ''}:\n${text}`,
      );
      if (keyed)
        assert.ok(
          lines.some((l) => l.startsWith(`SEARCH ${table}`) && /\)[<>]\(/.test(l)),
          `the cursor's key does not bound the range:\n${text}`,
        );
      assert.ok(!lines.some((l) => l.startsWith('SCAN')), `full scan:\n${text}`);
      assert.ok(!/TEMP B-TREE/.test(text), `sort:\n${text}`);
    } else {
      const scan = covering === 'both' ? 'Index Only Scan' : 'Index (Only )?Scan';
      assert.match(text, new RegExp(`${scan} (Backward )?using ${index} on ${table}`), text);
      assert.doesNotMatch(text, /Seq Scan|Bitmap/, `full or unordered scan:\n${text}`);
      assert.doesNotMatch(text, /Sort/, `sort:\n${text}`);
      if (keyed)
        assert.match(text, /Index Cond: .*ROW\(/, `the cursor's key does not bound the range:\n${text}`);
    }
  }

  // Each shape is planned for a page in the middle of a walk over many rows (the key of the
  // middle row of the whole result), going forward and backward, and for the first page.
  async function keyInTheMiddle(pageOf: (page: PageQuery) => Promise<Page<unknown>>): Promise<Key> {
    const { key, rows } = await middleKey(pageOf);
    assert.ok(rows >= 100, `the shape should span several pages, it has ${rows} rows`);
    return key;
  }

  const clipFilters: [string, ClipFilters][] = [
    ['no filter', {}],
    ['is_featured=true', { isFeatured: true }],
    ['is_featured=false', { isFeatured: false }],
    ['a period', { period: { from: now - 730 * DAY, to: now } }],
    ['is_featured and a period', { isFeatured: true, period: { from: now - 1460 * DAY, to: now } }],
  ];
  for (const selector of ['broadcaster_id', 'game_id'] as const) {
    for (const [what, filters] of clipFilters) {
      for (const where of ['first page', 'after', 'before'] as const) {
        it(`clips by ${selector}, ${what}, ${where}: a range scan of a covering index (index-only on PostgreSQL), no sort`, async () => {
          const query = { selector, value: sel[selector], ...filters };
          const key = await keyInTheMiddle((page) => clipsPage(t.store.db, query, page));
          const page: PageQuery = where === 'first page' ? { first: 20 } : { first: 20, [where]: key };
          const name = selector === 'broadcaster_id' ? 'broadcaster' : 'game';
          const index =
            filters.isFeatured === undefined ? `clips_${name}_views` : `clips_${name}_featured_views`;
          assertRangeScan(
            await plan(await statement((db) => clipsPage(db, query, page))),
            'clips',
            index,
            where !== 'first page',
            'both',
          );
        });
      }
    }
  }

  it('page queries write their LIMIT into the SQL text, never as a bound parameter', async () => {
    // SQLite's planner reads a bound LIMIT, and a statement whose plan read a bound value is
    // prepared again each time that value is bound, which better-sqlite3 does on every run
    // (src/store/page.ts, rowLimit).
    const clips = { selector: 'game_id' as const, value: sel.game_id };
    const key = await keyInTheMiddle((page) => clipsPage(t.store.db, clips, page));
    const videos = { selector: 'user_id' as const, value: sel.user_id, sort: 'views' as const };
    for (const q of [
      await statement((db) => clipsPage(db, clips, { first: 20 })),
      await statement((db) => clipsPage(db, clips, { first: 7, after: key })),
      await statement((db) => videosPage(db, videos, { first: 100 })),
    ])
      assert.match(q.sql, /limit (21|8|101)$/, q.sql);
  });

  const videoFilters: [string, Partial<VideoQuery>][] = [
    ['no filter', {}],
    ['type', { type: 'archive' }],
    ['language', { language: 'en' }],
    ['a period', { since: now - 30 * DAY }],
    ['language, type and period', { language: 'en', type: 'archive', since: now - 30 * DAY }],
  ];
  for (const selector of ['user_id', 'game_id'] as const) {
    for (const sort of ['time', 'views', 'trending'] as const) {
      for (const [what, filters] of videoFilters) {
        for (const where of ['first page', 'after', 'before'] as const) {
          it(`videos by ${selector}, sort=${sort}, ${what}, ${where}: a range scan of a covering index (SQLite), no sort`, async () => {
            const query = { selector, value: sel[selector], sort, ...filters };
            const key = await keyInTheMiddle((page) => videosPage(t.store.db, query, page));
            const page: PageQuery = where === 'first page' ? { first: 20 } : { first: 20, [where]: key };
            const name = selector === 'user_id' ? 'user' : 'game';
            assertRangeScan(
              await plan(await statement((db) => videosPage(db, query, page))),
              'videos',
              `videos_${name}_${sort}`,
              where !== 'first page',
              'sqlite',
            );
          });
        }
      }
    }
  }
});
