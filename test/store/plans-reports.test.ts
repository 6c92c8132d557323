// Query plans of the analytics report download: each 500-day window of a game report reads the
// game's stored days over their primary key and counts its clips per day over clips_game_day, both
// index ranges in the order the report needs (no full scan, no sort), on SQLite (EXPLAIN QUERY
// PLAN) and on PostgreSQL (plain EXPLAIN on a seeded, analyzed store; no planner switches). The SQL
// is exactly what the store functions run.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import { clipsCreatedPerDay, reportDays } from '../../src/store/analytics.ts';
import { forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';
import { gameWithMostClips, queryPlans } from './plans.ts';

forEachStore('query plans of the report download', (kind: StoreKind) => {
  let t: TestApp;
  let game: string;
  before(async () => {
    t = await startTestApp(kind, { users: 3000 });
    game = String(await gameWithMostClips(t.store.db));
    // Statistics of the tables read (scoped: a database-wide ANALYZE would touch other schemas).
    if (kind === 'postgres') await sql`analyze clips, game_days`.execute(t.store.db);
  });
  after(() => t.close());

  const { captured, plan, assertIndexed } = queryPlans(kind, () => t);
  const window = { from: '2019-01-01', to: '2020-05-15' };

  it("a window's clip counts: a range of clips_game_day in day order, no sort", async () => {
    const counts = await clipsCreatedPerDay(t.store.db, game, window);
    assert.ok(counts.size > 0, 'the window holds clips');
    const [q] = (await captured((db) => clipsCreatedPerDay(db, game, window))).slice(-1);
    const lines = await plan(q as NonNullable<typeof q>);
    if (kind === 'sqlite') assertIndexed(lines, 'clips', 'clips_game_day');
    else {
      // PostgreSQL reads the same range in index order (an index-only scan once the visibility map
      // is set) or, before vacuum has set it, as a bitmap grouped in a hash: either way only the
      // game's clips of the window, bounded by the day range.
      const text = lines.join('\n');
      assert.match(text, /(Index (Only )?Scan|Bitmap Index Scan) (using|on) clips_game_day/, text);
      assert.match(text, /Index Cond: .*game_id = .*created_at \/ 86400.*>=.*<=/, text);
      assert.doesNotMatch(text, /Seq Scan/, `full scan:\n${text}`);
    }
  });

  it("a window's stored days: a range of the game_days primary key, no sort", async () => {
    const [q] = (await captured((db) => reportDays(db, 'games', game, window))).slice(-1);
    assertIndexed(await plan(q as NonNullable<typeof q>), 'game_days', 'game_days_pk');
  });
});
