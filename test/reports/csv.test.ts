import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';

// The figures of a game report add up: with the data they are drawn from (Clips Created is what
// GET /clips lists), and with each other (no one watches more than was broadcast).

const DAY_MS = 86_400_000;
const addDays = (day: string, n: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
const pathOf = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};

type Row = Record<string, string>;

forEachStore('game report figures that add up', (store: StoreKind) => {
  let t: TestApp;
  let appToken: string;
  /** every game that has a report, with its owner */
  let games: { id: string; owner: number }[];
  before(async () => {
    t = await startTestApp(store);
    appToken = await t.appToken();
    games = (
      await t.store.db
        .selectFrom('games')
        .select(['id', 'owner_id'])
        .where('owner_id', 'is not', null)
        .orderBy('id')
        .execute()
    ).map((g) => ({ id: String(g.id), owner: Number(g.owner_id) }));
    assert.ok(games.length >= 3, 'the demo data has game reports');
  });
  after(() => t.close());

  /** The game's report as its owner downloads it (its whole range without dates), row by row. */
  async function report(game: { id: string; owner: number }, query = ''): Promise<Row[]> {
    const token = await t.userToken(['analytics:read:games'], game.owner);
    const issued = await t.get(`/helix/analytics/games?game_id=${game.id}${query}`, bearer(token));
    assert.equal(issued.statusCode, 200, issued.body);
    const res = await t.get(pathOf(issued.json().data[0].URL));
    assert.equal(res.statusCode, 200, res.body);
    return parse(res.body, { columns: true });
  }

  /** How many clips of the game GET /clips lists per UTC day of created_at, over `query`'s clips. */
  async function clipsPerDay(gameId: string, query = ''): Promise<Map<string, number>> {
    const perDay = new Map<string, number>();
    let cursor: string | undefined;
    do {
      const res = await t.get(
        `/helix/clips?game_id=${gameId}&first=100${query}${cursor ? `&after=${cursor}` : ''}`,
        bearer(appToken),
      );
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      for (const c of body.data as { created_at: string }[]) {
        const day = c.created_at.slice(0, 10);
        perDay.set(day, (perDay.get(day) ?? 0) + 1);
      }
      cursor = body.pagination.cursor;
    } while (cursor);
    return perDay;
  }

  describe('Clips Created', () => {
    it("is, on every day of every demo game report, the number of the game's clips GET /clips lists created that day (UTC)", async () => {
      let clips = 0;
      for (const g of games) {
        const expected = await clipsPerDay(g.id);
        const rows = await report(g);
        assert.ok(rows.length > 300, `game ${g.id}: a long report`);
        for (const r of rows) {
          assert.equal(
            r['Clips Created'],
            String(expected.get(r.Date as string) ?? 0),
            `game ${g.id}, ${r.Date}`,
          );
          clips += Number(r['Clips Created']);
        }
      }
      assert.ok(clips > 0, 'the reports count some clips');
    });

    it('counts clips written after seeding: on a day without stored figures, and by UTC day edges', async () => {
      const g = games[0] as { id: string; owner: number };
      const stored = new Set(
        (
          await t.store.db.selectFrom('game_days').select('day').where('game_id', '=', Number(g.id)).execute()
        ).map((d) => d.day),
      );
      const first = [...stored].sort()[0] as string;
      let gap = addDays(first, 1);
      while (stored.has(gap)) gap = addDays(gap, 1);
      const next = addDays(gap, 1);
      const at = (day: string) => Date.parse(`${day}T00:00:00Z`) / 1000;
      const any = await t.store.db.selectFrom('clips').selectAll().limit(1).executeTakeFirstOrThrow();
      const added = [
        { id: 'AddsUpGapFirstSecond', game_id: Number(g.id), created_at: at(gap) },
        { id: 'AddsUpGapLastSecond', game_id: Number(g.id), created_at: at(next) - 1 },
        { id: 'AddsUpNextDay', game_id: Number(g.id), created_at: at(next) },
        // another game's clip on the same day counts for that game only
        { id: 'AddsUpOtherGame', game_id: Number(games[1]?.id), created_at: at(gap) + 60 },
      ];
      const range = `&started_at=${gap}T00:00:00Z&ended_at=${next}T00:00:00Z`;
      const before = await report(g, range);
      await t.store.db
        .insertInto('clips')
        .values(added.map((c) => ({ ...any, ...c })))
        .execute();
      try {
        const rows = await report(g, range);
        assert.deepEqual(
          rows.map((r) => r.Date),
          [gap, next],
        );
        const [onGap, onNext] = rows as [Row, Row];
        assert.equal(Number(onGap['Clips Created']), Number(before[0]?.['Clips Created']) + 2);
        assert.equal(Number(onNext['Clips Created']), Number(before[1]?.['Clips Created']) + 1);
        // the day without stored figures reports zeros but for its clips
        assert.equal(onGap.Views, '0');
        assert.equal(onGap['Hours Watched'], '0');
        for (const r of rows) {
          const listed = await clipsPerDay(
            g.id,
            `&started_at=${r.Date}T00:00:00Z&ended_at=${addDays(r.Date as string, 1)}T00:00:00Z`,
          );
          assert.equal(r['Clips Created'], String(listed.get(r.Date as string) ?? 0), r.Date);
        }
      } finally {
        await t.store.db
          .deleteFrom('clips')
          .where(
            'id',
            'in',
            added.map((c) => c.id),
          )
          .execute();
      }
    });
  });

  // The rule: minutes_watched <= unique_viewers * minutes_broadcast. A unique viewer can watch at
  // most every broadcast of the game that day, from start to end, so the minutes all of them watch
  // are at most their number times the minutes broadcast (per viewer, not per view: views count a
  // viewer again each time they come back, and so can exceed it). The CSV shows hours rounded to
  // 2 decimals, each off by at most 0.005: the rule in its figures is HW - 0.005 <= UV * (HB + 0.005).
  describe('Hours Watched', () => {
    it('is never more than unique viewers x hours broadcast, on any row of any demo game report', async () => {
      let rows = 0;
      for (const g of games) {
        for (const r of await report(g)) {
          const watched = Number(r['Hours Watched']);
          const bound = Number(r['Unique Viewers']) * (Number(r['Hours Broadcast']) + 0.005) + 0.005;
          assert.ok(watched <= bound, `game ${g.id}, ${r.Date}: ${JSON.stringify(r)}`);
          if (watched > 0) rows++;
        }
      }
      assert.ok(rows > 1000, 'rows with hours watched');
    });

    it('holds exactly, in minutes, for every stored day of every game', async () => {
      const days = await t.store.db.selectFrom('game_days').selectAll().execute();
      assert.ok(days.length > 1000);
      const over = days.filter((d) => d.minutes_watched > d.unique_viewers * d.minutes_broadcast);
      assert.deepEqual(over, []);
    });
  });
});
