import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { bearer, forEachStore, startTestApp, TEST_NOW, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';

const BOTH = ['analytics:read:games', 'analytics:read:extensions'];
const GAME_HEADER = [
  'Date',
  'Game Name',
  'Game ID',
  'Views',
  'Unique Viewers',
  'Hours Watched',
  'Broadcasters',
  'Hours Broadcast',
  'Clips Created',
  'Follows',
];
// docs/api.md: the columns third-party parsers of extension reports read, in this order.
const EXTENSION_HEADER = [
  'Date',
  'Extension Name',
  'Extension Client ID',
  'Installs',
  'Uninstalls',
  'Activations',
  'Unique Active Channels',
  'Renders',
  'Unique Renders',
  'Views',
  'Unique Viewers',
  'Unique Interactors',
  'Clicks',
  'Clicks Per Interactor',
  'Interaction Rate',
];

const DAY_MS = 86_400_000;
const addDays = (day: string, n: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
const daysFrom = (start: string, end: string) => {
  const out: string[] = [];
  for (let d = start; d <= end; d = addDays(d, 1)) out.push(d);
  return out;
};
const pathOf = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};
const hours = (minutes: number) => String(Number((minutes / 60).toFixed(2)));

forEachStore('GET /reports (signed report downloads)', (store: StoreKind) => {
  let t: TestApp;
  let token: string;
  let gameIds: string[];
  let extensionIds: string[];
  before(async () => {
    t = await startTestApp(store);
    token = await t.userToken(BOTH);
    const demo = t.seed?.demoUserId as number;
    gameIds = (
      await t.store.db.selectFrom('games').select('id').where('owner_id', '=', demo).orderBy('id').execute()
    ).map((r) => String(r.id));
    extensionIds = (
      await t.store.db
        .selectFrom('extensions')
        .select('id')
        .where('owner_id', '=', demo)
        .orderBy('id')
        .execute()
    ).map((r) => r.id);
  });
  after(() => t.close());

  /** A report URL from the operation, as its path and query (the app is injected, not listening). */
  async function issue(kind: 'games' | 'extensions', id: string, query = ''): Promise<string> {
    const param = kind === 'games' ? 'game_id' : 'extension_id';
    const res = await t.get(
      `/helix/analytics/${kind}?${param}=${id}${query ? `&${query}` : ''}`,
      bearer(token),
    );
    assert.equal(res.statusCode, 200, res.body);
    return pathOf(res.json().data[0].URL);
  }

  const forbiddenBody = (res: { statusCode: number; headers: Record<string, unknown>; json(): unknown }) => {
    assert.equal(res.statusCode, 403);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    const body = res.json() as { error: string; status: number; message: string };
    assert.equal(body.error, 'Forbidden');
    assert.equal(body.status, 403);
    return body.message;
  };

  describe('signature and expiry', () => {
    it('a URL works 299 s after issue and fails with 403 at 301 s', async () => {
      t.clock.set(TEST_NOW);
      const url = await issue('games', gameIds[0] as string);
      try {
        t.clock.set(TEST_NOW + 299_000);
        const ok = await t.get(url);
        assert.equal(ok.statusCode, 200);
        t.clock.set(TEST_NOW + 301_000);
        assert.match(forbiddenBody(await t.get(url)), /^The report URL expired at 2026-06-15T12:05:00Z/);
      } finally {
        t.clock.set(TEST_NOW);
      }
    });

    it('a URL stops working exactly 300 s after issue', async () => {
      const url = await issue('extensions', extensionIds[0] as string);
      try {
        t.clock.set(TEST_NOW + 300_000);
        assert.match(forbiddenBody(await t.get(url)), /expired/);
      } finally {
        t.clock.set(TEST_NOW);
      }
    });

    it('needs no token, and the same URL can be downloaded several times while valid', async () => {
      const url = await issue(
        'games',
        gameIds[1] as string,
        'started_at=2020-01-01T00:00:00Z&ended_at=2020-01-05T00:00:00Z',
      );
      const a = await t.get(url);
      const b = await t.get(url, bearer('not-a-token'));
      assert.equal(a.statusCode, 200);
      assert.equal(b.statusCode, 200);
      assert.equal(a.body, b.body);
    });

    it('a URL with any parameter changed, added twice or removed fails with 403', async () => {
      const url = await issue(
        'games',
        gameIds[0] as string,
        'started_at=2020-01-01T00:00:00Z&ended_at=2020-01-31T00:00:00Z',
      );
      const u = new URL(url, 'http://x');
      const variants: [string, string][] = [];
      const withParam = (name: string, value: string) => {
        const v = new URL(u);
        v.searchParams.set(name, value);
        return v.pathname + v.search;
      };
      const without = (name: string) => {
        const v = new URL(u);
        v.searchParams.delete(name);
        return v.pathname + v.search;
      };
      const sig = u.searchParams.get('signature') as string;
      const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
      variants.push(
        ['type', withParam('type', 'overview_v1')],
        ['started_at earlier', withParam('started_at', '2019-12-31')],
        ['started_at later', withParam('started_at', '2020-01-02')],
        ['ended_at', withParam('ended_at', '2020-02-29')],
        ['expires', withParam('expires', String(Number(u.searchParams.get('expires')) + 3600))],
        ['signature first char', withParam('signature', flip(sig, 0))],
        ['signature last char', withParam('signature', flip(sig, sig.length - 1))],
        ['signature truncated', withParam('signature', sig.slice(0, -1))],
        [
          'another game of the same user',
          url.replace(`/games/${gameIds[0]}.csv`, `/games/${gameIds[1]}.csv`),
        ],
        ['games to extensions', url.replace('/reports/games/', '/reports/extensions/')],
        ['started_at twice', `${url}&started_at=2020-01-01`],
      );
      for (const name of ['type', 'started_at', 'ended_at', 'expires', 'signature'])
        variants.push([`without ${name}`, without(name)]);
      assert.equal((await t.get(url)).statusCode, 200);
      for (const [what, changed] of variants) {
        const res = await t.get(changed);
        assert.equal(res.statusCode, 403, what);
        assert.match(forbiddenBody(res), /signature does not match/, what);
      }
    });

    it('a URL with a number or the signature spelled otherwise than issued fails with 403', async () => {
      const url = await issue('games', gameIds[0] as string);
      const u = new URL(url, 'http://x');
      const respelled = (name: string, value: string) => {
        const v = new URL(u);
        v.searchParams.set(name, value);
        return v.pathname + v.search;
      };
      const expires = u.searchParams.get('expires') as string;
      const sig = u.searchParams.get('signature') as string;
      // A 32-byte MAC is 43 characters: the last one carries 2 spare bits, which decoding ignores.
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const spare = `${sig.slice(0, -1)}${alphabet[alphabet.indexOf(sig.slice(-1)) ^ 1]}`;
      assert.deepEqual(Buffer.from(spare, 'base64url'), Buffer.from(sig, 'base64url'));
      const variants: [string, string][] = [
        ['expires with a leading zero', respelled('expires', `0${expires}`)],
        ['expires with a plus sign', respelled('expires', `+${expires}`)],
        ['signature with other spare bits', respelled('signature', spare)],
        ['signature padded', respelled('signature', `${sig}=`)],
      ];
      assert.equal((await t.get(url)).statusCode, 200);
      for (const [what, changed] of variants) {
        assert.notEqual(changed, url, what);
        assert.match(forbiddenBody(await t.get(changed)), /signature does not match/, what);
      }
    });

    it('a signature made with another secret fails with 403', async () => {
      const other = await startTestApp(store, { config: { secret: 'another-secret-0123456789' } });
      try {
        const tok = await other.userToken(BOTH);
        const res = await other.get(`/helix/analytics/games?game_id=${gameIds[0]}`, bearer(tok));
        const url = pathOf(res.json().data[0].URL);
        assert.equal((await other.get(url)).statusCode, 200);
        assert.match(forbiddenBody(await t.get(url)), /signature does not match/);
      } finally {
        await other.close();
      }
    });

    it('paths that are not a report are 404 with the Helix body', async () => {
      const url = await issue('games', gameIds[0] as string);
      for (const p of [url.replace('.csv?', '?'), url.replace('/reports/games/', '/reports/clips/')]) {
        const res = await t.get(p);
        assert.equal(res.statusCode, 404, p);
        assert.equal(res.json().status, 404);
      }
    });
  });

  describe('the CSV', () => {
    it('is text/csv, an attachment with a file name, and not cacheable', async () => {
      const id = gameIds[0] as string;
      const res = await t.get(
        await issue('games', id, 'started_at=2020-01-01T00:00:00Z&ended_at=2020-01-10T00:00:00Z'),
      );
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8');
      assert.equal(
        res.headers['content-disposition'],
        `attachment; filename="game-${id}-overview_v2-2020-01-01-to-2020-01-10.csv"`,
      );
      assert.equal(res.headers['cache-control'], 'private, no-store');
    });

    it('game report: a header row, then exactly one row per day of the range, ascending, with the store values', async () => {
      const id = Number(gameIds[0]);
      // a range around a day the store has no data for
      const days = await t.store.db
        .selectFrom('game_days')
        .selectAll()
        .where('game_id', '=', id)
        .orderBy('day')
        .execute();
      const byDay = new Map(days.map((d) => [d.day, d]));
      const gap = daysFrom(days[0]?.day as string, days[days.length - 1]?.day as string).find(
        (d) => !byDay.has(d),
      );
      assert.ok(gap, 'the seed leaves gaps');
      const start = addDays(gap, -20);
      const end = addDays(gap, 20);
      const res = await t.get(
        await issue('games', String(id), `started_at=${start}T00:00:00Z&ended_at=${end}T00:00:00Z`),
      );
      assert.ok(res.body.endsWith('\r\n'));
      const rows: string[][] = parse(res.body);
      assert.deepEqual(rows[0], GAME_HEADER);
      const expectedDays = daysFrom(start, end);
      assert.equal(rows.length - 1, 41);
      assert.deepEqual(
        rows.slice(1).map((r) => r[0]),
        expectedDays,
      );
      const game = await t.store.db
        .selectFrom('games')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      // Clips Created is counted from the game's clips (test/reports/csv.test.ts checks it at length).
      const clipsOn = new Map<string, number>();
      for (const c of await t.store.db
        .selectFrom('clips')
        .select('created_at')
        .where('game_id', '=', id)
        .execute()) {
        const day = new Date(Number(c.created_at) * 1000).toISOString().slice(0, 10);
        clipsOn.set(day, (clipsOn.get(day) ?? 0) + 1);
      }
      for (const r of rows.slice(1)) {
        const d = byDay.get(r[0] as string);
        const clips = String(clipsOn.get(r[0] as string) ?? 0);
        assert.deepEqual(
          r,
          d
            ? [
                d.day,
                game.name,
                String(id),
                String(d.views),
                String(d.unique_viewers),
                hours(d.minutes_watched),
                String(d.broadcasters),
                hours(d.minutes_broadcast),
                clips,
                String(d.follows),
              ]
            : [r[0], game.name, String(id), '0', '0', '0', '0', '0', clips, '0'],
        );
      }
    });

    it('extension report: the documented columns and the store values, one row per day', async () => {
      const id = extensionIds[0] as string;
      const start = '2021-03-01';
      const end = '2021-04-15';
      const res = await t.get(
        await issue('extensions', id, `started_at=${start}T00:00:00Z&ended_at=${end}T00:00:00Z`),
      );
      const rows: string[][] = parse(res.body);
      assert.deepEqual(rows[0], EXTENSION_HEADER);
      assert.deepEqual(
        rows.slice(1).map((r) => r[0]),
        daysFrom(start, end),
      );
      const x = await t.store.db
        .selectFrom('extensions')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      const days = await t.store.db
        .selectFrom('extension_days')
        .selectAll()
        .where('extension_id', '=', id)
        .where('day', '>=', start)
        .where('day', '<=', end)
        .execute();
      const byDay = new Map(days.map((d) => [d.day, d]));
      for (const r of rows.slice(1)) {
        const d = byDay.get(r[0] as string);
        const ratio = (a: number, b: number, n: number) => String(b === 0 ? 0 : Number((a / b).toFixed(n)));
        assert.deepEqual(
          r,
          d
            ? [
                d.day,
                x.name,
                id,
                ...[
                  d.installs,
                  d.uninstalls,
                  d.activations,
                  d.unique_active_channels,
                  d.renders,
                  d.unique_renders,
                  d.views,
                  d.unique_viewers,
                  d.unique_interactors,
                  d.clicks,
                ].map(String),
                ratio(d.clicks, d.unique_interactors, 2),
                ratio(d.unique_interactors, d.unique_viewers, 4),
              ]
            : [r[0], x.name, id, ...Array(12).fill('0')],
        );
      }
    });

    it('a one-day range is the header and one row', async () => {
      const res = await t.get(
        await issue(
          'games',
          gameIds[2] as string,
          'started_at=2022-02-02T00:00:00Z&ended_at=2022-02-02T00:00:00Z',
        ),
      );
      const rows: string[][] = parse(res.body);
      assert.equal(rows.length, 2);
      assert.equal(rows[1]?.[0], '2022-02-02');
    });

    it('a game without any data is a report too: no dates cover 2018-01-31 to 2 days back, all zeros', async () => {
      const id = 990_001;
      const demo = t.seed?.demoUserId as number;
      await t.store.db
        .insertInto('games')
        .values({ id, name: 'No Data Yet', igdb_id: '', owner_id: demo, viewer_count: 0, stream_count: 0 })
        .execute();
      try {
        const list = await t.get('/helix/analytics/games', bearer(token));
        assert.equal(list.statusCode, 200, list.body);
        const mine = (list.json().data as { game_id: string; URL: string; date_range: object }[]).find(
          (r) => r.game_id === String(id),
        );
        // No data, so yesterday's is not in: the default end is 2 days before the request.
        assert.deepEqual(mine?.date_range, {
          started_at: '2018-01-31T00:00:00Z',
          ended_at: '2026-06-13T00:00:00Z',
        });
        const whole: string[][] = parse((await t.get(pathOf(mine?.URL as string))).body);
        assert.deepEqual(
          whole.slice(1).map((r) => r[0]),
          daysFrom('2018-01-31', '2026-06-13'),
        );
        for (const row of whole.slice(1))
          assert.deepEqual(row.slice(1), ['No Data Yet', String(id), ...Array(7).fill('0')]);
        const window: string[][] = parse(
          (
            await t.get(
              await issue(
                'games',
                String(id),
                'started_at=2020-01-01T00:00:00Z&ended_at=2020-01-03T00:00:00Z',
              ),
            )
          ).body,
        );
        assert.deepEqual(
          window.slice(1).map((r) => r.join(',')),
          daysFrom('2020-01-01', '2020-01-03').map((d) => `${d},No Data Yet,${id},0,0,0,0,0,0,0`),
        );
      } finally {
        await t.store.db.deleteFrom('games').where('id', '=', id).execute();
      }
    });

    it('quotes names with commas, quotes and line breaks per RFC 4180', async () => {
      const id = Number(gameIds[1]);
      const old = await t.store.db
        .selectFrom('games')
        .select('name')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      const name = 'Say "Hi", World\r\nPart 2';
      await t.store.db.updateTable('games').set({ name }).where('id', '=', id).execute();
      try {
        const res = await t.get(
          await issue('games', String(id), 'started_at=2022-02-02T00:00:00Z&ended_at=2022-02-03T00:00:00Z'),
        );
        assert.ok(res.body.includes('"Say ""Hi"", World\r\nPart 2"'));
        const rows: string[][] = parse(res.body);
        assert.equal(rows.length, 3);
        assert.equal(rows[1]?.[1], name);
        assert.equal(rows[2]?.[1], name);
      } finally {
        await t.store.db.updateTable('games').set({ name: old.name }).where('id', '=', id).execute();
      }
    });

    it('a whole report (no dates) downloads through a real HTTP connection and parses with csv-parse', async () => {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const addr = t.app.server.address();
      assert.ok(addr && typeof addr === 'object');
      const origin = `http://127.0.0.1:${addr.port}`;
      const list = await fetch(`${origin}/helix/analytics/games`, {
        headers: { ...bearer(token), 'client-id': t.seed?.demoClientId as string },
      });
      assert.equal(list.status, 200);
      const reports = (await list.json()) as {
        data: { game_id: string; URL: string; date_range: { started_at: string; ended_at: string } }[];
      };
      assert.equal(reports.data.length, 3);
      for (const r of reports.data) {
        // The signature covers path and query, not the origin: any address of the deployment serves it.
        const res = await fetch(origin + pathOf(r.URL));
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8');
        assert.equal(res.headers.get('transfer-encoding'), 'chunked');
        const rows: string[][] = parse(await res.text(), { columns: false });
        const start = r.date_range.started_at.slice(0, 10);
        const end = r.date_range.ended_at.slice(0, 10);
        const expected = daysFrom(start, end);
        assert.ok(expected.length > 500 * 2, 'longer than a few store chunks');
        assert.deepEqual(rows[0], GAME_HEADER);
        assert.deepEqual(
          rows.slice(1).map((x) => x[0]),
          expected,
        );
        const stored = await t.store.db
          .selectFrom('game_days')
          .select(['day', 'views', 'follows'])
          .where('game_id', '=', Number(r.game_id))
          .where('day', '>=', start)
          .where('day', '<=', end)
          .execute();
        const byDay = new Map(stored.map((d) => [d.day, d]));
        for (const row of rows.slice(1)) {
          const d = byDay.get(row[0] as string);
          assert.equal(row[2], r.game_id);
          assert.equal(row[3], String(d?.views ?? 0));
          assert.equal(row[9], String(d?.follows ?? 0));
        }
        assert.ok(stored.length < expected.length, 'gaps became zero rows');
      }
    });
  });
});
