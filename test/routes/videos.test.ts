import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { VideoRow } from '../../src/store/schema.ts';
import { rfc3339 } from '../../src/wire/datetime.ts';
import { hms } from '../../src/wire/links.ts';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { assertGolden } from '../support/golden.ts';
import type { StoreKind } from '../support/stores.ts';

interface WireVideo {
  id: string;
  user_id: string;
  created_at: string;
  view_count: number;
  language: string;
  type: string;
  [k: string]: unknown;
}

const DAY = 86400;
const ids = (res: { json(): { data: WireVideo[] } }) => res.json().data.map((v) => v.id);
const badRequest = (message: string) => ({ error: 'Bad Request', status: 400, message });
const ONE_OF = 'exactly one of "game_id", "id", "user_id" must be given';

/** The documented orders, computed here from the rows (most first, ties by id, higher first). */
const SORTS = {
  time: (v: VideoRow) => v.created_at,
  views: (v: VideoRow) => v.view_count,
  // docs/api.md: views decayed by age, e-folding time 10 days: ln(1 + views) - age / 864000 at the
  // test clock's now (its order is the same at any now)
  trending: (v: VideoRow, now = 0) => Math.log1p(v.view_count) - (now - v.created_at) / 864000,
} as const;
type Sort = keyof typeof SORTS;
const order = (rows: VideoRow[], sort: Sort, now = 0) =>
  [...rows].sort((a, b) => SORTS[sort](b, now) - SORTS[sort](a, now) || b.id - a.id).map((v) => String(v.id));

async function walk(t: TestApp, token: string, q: string): Promise<{ data: string[]; cursor?: string }[]> {
  const pages: { data: string[]; cursor?: string }[] = [];
  let cursor: string | undefined;
  do {
    const res = await t.get(`${q}${cursor ? `&after=${cursor}` : ''}`, bearer(token));
    assert.equal(res.statusCode, 200, res.body);
    pages.push({ data: ids(res), cursor: res.json().pagination.cursor });
    cursor = res.json().pagination.cursor;
  } while (cursor);
  return pages;
}

/** Back from the second-to-last page, following only the cursors the backward walk returns. */
async function walkBack(
  t: TestApp,
  token: string,
  q: string,
  pages: { cursor?: string }[],
): Promise<string[][]> {
  const back: string[][] = [];
  let cursor = pages[pages.length - 2]?.cursor;
  while (cursor) {
    const res = await t.get(`${q}&before=${cursor}`, bearer(token));
    assert.equal(res.statusCode, 200);
    back.push(ids(res));
    cursor = res.json().pagination.cursor;
  }
  return back;
}

forEachStore('GET /helix/videos', (kind: StoreKind) => {
  let t: TestApp;
  let token: string;
  let demo: number;
  let all: VideoRow[];
  let now: number;
  const get = (q: string) => t.get(`/helix/videos?${q}`, bearer(token));
  const mine = () => all.filter((v) => v.user_id === demo);
  const topGame = () => {
    const n = new Map<number, number>();
    for (const v of all) n.set(v.game_id, (n.get(v.game_id) ?? 0) + 1);
    return [...n].sort((a, b) => b[1] - a[1])[0]?.[0] as number;
  };

  before(async () => {
    t = await startTestApp(kind);
    token = await t.appToken();
    demo = t.seed?.demoUserId as number;
    all = await t.store.db.selectFrom('videos').selectAll().execute();
    now = Math.floor(t.clock.now() / 1000);
  });
  after(() => t.close());

  describe('selectors: one of id, user_id, game_id', () => {
    it('rejects a request with no selector with a 400 naming the three', async () => {
      const res = await get('sort=views');
      assert.deepEqual(res.json(), badRequest(`Missing required parameter: ${ONE_OF}`));
    });

    for (const [q, names] of [
      ['user_id=1&game_id=2', '"game_id" and "user_id"'],
      ['id=1&user_id=1', '"id" and "user_id"'],
    ] as const) {
      it(`rejects several selectors (${q}) with a 400 naming them`, async () => {
        const res = await get(q);
        assert.deepEqual(
          res.json(),
          badRequest(`The parameters ${names} cannot be used together: ${ONE_OF}`),
        );
      });
    }

    for (const p of ['user_id', 'game_id']) {
      it(`takes one ${p} only: a repeated one is a 400`, async () => {
        const res = await get(`${p}=1&${p}=2`);
        assert.deepEqual(res.json(), badRequest(`The parameter "${p}" may be given only once`));
      });
      it(`rejects a ${p} that is not a numeric ID with a 400`, async () => {
        const res = await get(`${p}=x1`);
        assert.deepEqual(
          res.json(),
          badRequest(`The parameter "${p}" was malformed: the value must be a numeric ID`),
        );
      });
    }

    it('user_id: the user videos, newest first (sort=time by default)', async () => {
      const res = await get(`user_id=${demo}`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(ids(res), order(mine(), 'time').slice(0, 20));
    });

    it('game_id: the game videos, newest first', async () => {
      const game = topGame();
      const pages = await walk(t, token, `/helix/videos?game_id=${game}&first=100`);
      assert.deepEqual(
        pages.flatMap((p) => p.data),
        order(
          all.filter((v) => v.game_id === game),
          'time',
        ),
      );
    });

    it('answers an unknown user with {"data": [], "pagination": {}}', async () => {
      const res = await get('user_id=1');
      assert.equal(res.body, '{"data":[],"pagination":{}}');
    });

    it('answers 404 for a game_id naming no game; a game without videos is an empty 200', async () => {
      assert.deepEqual((await get('game_id=9000000001')).json(), {
        error: 'Not Found',
        status: 404,
        message: 'The ID in the game_id query parameter was not found',
      });
      const id = 990_002;
      await t.store.db
        .insertInto('games')
        .values({ id, name: 'Quiet Game', igdb_id: '', owner_id: null, viewer_count: 0, stream_count: 0 })
        .execute();
      try {
        for (const q of [`game_id=${id}`, `game_id=${id}&period=day&sort=views`]) {
          const res = await get(q);
          assert.equal(res.statusCode, 200, q);
          assert.equal(res.body, '{"data":[],"pagination":{}}', q);
        }
      } finally {
        await t.store.db.deleteFrom('games').where('id', '=', id).execute();
      }
      // a game with videos, none of which passes the filters: still 200
      const filtered = await get(`game_id=${topGame()}&language=zz`);
      assert.equal(filtered.body, '{"data":[],"pagination":{}}');
    });
  });

  describe('id: one or more, at most 100, no optional parameter', () => {
    it('returns videos in input order, duplicates and unknown ids ignored, without a cursor', async () => {
      const [a, b] = [all[10], all[200]] as [VideoRow, VideoRow];
      const res = await get(`id=${b.id}&id=${a.id}&id=1&id=${b.id}`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(ids(res), [String(b.id), String(a.id)]);
      assert.deepEqual(res.json().pagination, {});
    });

    it('accepts 100 ids and rejects 101 with a 400', async () => {
      const hundred = all.slice(0, 100).map((v) => `id=${v.id}`);
      assert.equal((await get(hundred.join('&'))).json().data.length, 100);
      const res = await get([...hundred, 'id=1'].join('&'));
      assert.deepEqual(res.json(), badRequest('The parameter "id" may be given at most 100 times'));
    });

    it('rejects an id that is not a numeric ID with a 400', async () => {
      const res = await get(`id=${all[0]?.id}&id=abc`);
      assert.deepEqual(
        res.json(),
        badRequest('The parameter "id" was malformed: each value must be a numeric ID'),
      );
    });

    for (const [p, v] of [
      ['language', 'en'],
      ['after', 'x'],
      ['before', 'x'],
    ]) {
      it(`rejects ${p} together with id with a 400 naming it`, async () => {
        const res = await get(`id=${all[0]?.id}&${p}=${v}`);
        assert.deepEqual(res.json(), badRequest(`The parameter "${p}" cannot be used with "id"`));
      });
    }

    for (const [p, dflt, other] of [
      ['period', 'all', 'week'],
      ['sort', 'time', 'views'],
      ['type', 'all', 'archive'],
      ['first', '20', '5'],
    ]) {
      it(`accepts ${p}=${dflt} (its default) with id, and rejects ${p}=${other} with a 400 naming it`, async () => {
        const ids = `id=${all[0]?.id}&id=${all[1]?.id}`;
        const plain = await get(ids);
        const withDefault = await get(`${ids}&${p}=${dflt}`);
        assert.equal(withDefault.statusCode, 200, withDefault.body);
        assert.deepEqual(withDefault.json(), plain.json());
        assert.deepEqual(
          (await get(`${ids}&${p}=${other}`)).json(),
          badRequest(`The parameter "${p}" cannot be used with "id" except at its default value, ${dflt}`),
        );
      });
    }

    it('accepts all four defaults at once with id, as client libraries send them', async () => {
      const ids = `id=${all[2]?.id}&id=${all[0]?.id}`;
      const res = await get(`${ids}&first=20&period=all&sort=time&type=all`);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), (await get(ids)).json());
      assert.equal(res.json().data.length, 2);
    });

    it('answers 404 when none of the ids exists, and leaves out the unknown ones otherwise', async () => {
      const missing = 9_000_000_001;
      assert.deepEqual((await get(`id=${missing}&id=${missing + 1}`)).json(), {
        error: 'Not Found',
        status: 404,
        message: 'The ID in the id query parameter was not found',
      });
      const some = await get(`id=${missing}&id=${all[0]?.id}`);
      assert.equal(some.statusCode, 200);
      assert.deepEqual(
        some.json().data.map((v: { id: string }) => v.id),
        [String(all[0]?.id)],
      );
    });
  });

  describe('filters (used with user_id or game_id), combined with AND', () => {
    it('language: only videos in that language', async () => {
      const game = topGame();
      const rows = all.filter((v) => v.game_id === game);
      const lang = rows.find((v) => v.language !== 'en')?.language as string;
      const pages = await walk(t, token, `/helix/videos?game_id=${game}&language=${lang}&first=100`);
      const expected = order(
        rows.filter((v) => v.language === lang),
        'time',
      );
      assert.ok(expected.length > 0 && expected.length < rows.length);
      assert.deepEqual(
        pages.flatMap((p) => p.data),
        expected,
      );
    });

    it('language: one value only (repeated or comma-joined is a 400)', async () => {
      assert.deepEqual(
        (await get(`user_id=${demo}&language=en&language=de`)).json(),
        badRequest('The parameter "language" may be given only once'),
      );
      assert.deepEqual(
        (await get(`user_id=${demo}&language=en,de`)).json(),
        badRequest('The parameter "language" takes one value: several languages were given'),
      );
    });

    for (const [period, days] of [
      ['day', 1],
      ['week', 7],
      ['month', 30],
    ] as const) {
      it(`period=${period}: videos created in the last ${days} day(s) by the server clock`, async () => {
        const game = topGame();
        const rows = all.filter((v) => v.game_id === game);
        const expected = order(
          rows.filter((v) => v.created_at >= now - days * DAY),
          'time',
        );
        const res = await get(`game_id=${game}&period=${period}&first=100`);
        assert.deepEqual(ids(res), expected.slice(0, 100));
      });
    }

    it('period follows the server clock: a week later, period=week is empty', async () => {
      // a token that outlives the jump of the clock
      const long = bearer(await t.appToken(30 * DAY));
      const get = (q: string) => t.get(`/helix/videos?${q}`, long);
      const q = `user_id=${demo}&period=week&first=100`;
      assert.ok(ids(await get(q)).length > 0);
      const at = t.clock.now();
      t.clock.advance(8 * DAY * 1000);
      try {
        assert.deepEqual(ids(await get(q)), []);
        assert.ok(ids(await get(`user_id=${demo}&period=month&first=100`)).length > 0);
      } finally {
        t.clock.set(at);
      }
    });

    it('period=all (the default) applies no period', async () => {
      const a = await get(`user_id=${demo}&period=all&first=100`);
      assert.deepEqual(ids(a), ids(await get(`user_id=${demo}&first=100`)));
    });

    for (const type of ['archive', 'highlight', 'upload']) {
      it(`type=${type}: only ${type} videos`, async () => {
        const pages = await walk(t, token, `/helix/videos?user_id=${demo}&type=${type}&first=100`);
        const expected = order(
          mine().filter((v) => v.type === type),
          'time',
        );
        assert.ok(expected.length > 0);
        assert.deepEqual(
          pages.flatMap((p) => p.data),
          expected,
        );
      });
    }

    it('type=all (the default) returns every type', async () => {
      const res = await get(`user_id=${demo}&type=all&first=100`);
      assert.deepEqual(ids(res), order(mine(), 'time').slice(0, 100));
      assert.equal(new Set((res.json().data as WireVideo[]).map((v) => v.type)).size, 3);
    });

    it('combines language, period, type and sort with AND', async () => {
      const game = topGame();
      const rows = all.filter((v) => v.game_id === game);
      const recentArchives = rows.filter((v) => v.type === 'archive' && v.created_at >= now - 30 * DAY);
      const counts = new Map<string, number>();
      for (const v of recentArchives) counts.set(v.language, (counts.get(v.language) ?? 0) + 1);
      const lang = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] as string;
      const expected = order(
        recentArchives.filter((v) => v.language === lang),
        'views',
      );
      // each filter alone keeps more rows than all of them together
      assert.ok(rows.filter((v) => v.language === lang).length > expected.length);
      assert.ok(rows.filter((v) => v.type === 'archive').length > expected.length);
      assert.ok(rows.filter((v) => v.created_at >= now - 30 * DAY).length > expected.length);
      assert.ok(expected.length > 1);
      const pages = await walk(
        t,
        token,
        `/helix/videos?game_id=${game}&language=${lang}&type=archive&period=month&sort=views&first=2`,
      );
      assert.deepEqual(
        pages.flatMap((p) => p.data),
        expected,
      );
    });

    for (const [p, allowed] of [
      ['period', 'all, day, week, month'],
      ['sort', 'time, trending, views'],
      ['type', 'all, archive, highlight, upload'],
    ]) {
      it(`rejects an unknown ${p} with a 400 listing the values`, async () => {
        const res = await get(`user_id=${demo}&${p}=year`);
        assert.deepEqual(
          res.json(),
          badRequest(`The parameter "${p}" was malformed: the value must be one of ${allowed}`),
        );
      });
    }
  });

  describe('sort: time, trending, views', () => {
    it('sort=views: most viewed first, ties by id', async () => {
      const pages = await walk(t, token, `/helix/videos?user_id=${demo}&sort=views&first=100`);
      assert.deepEqual(
        pages.flatMap((p) => p.data),
        order(mine(), 'views'),
      );
    });

    it('sort=trending: views decayed by age (e-folding 10 days), highest first', async () => {
      const pages = await walk(t, token, `/helix/videos?user_id=${demo}&sort=trending&first=100`);
      const got = pages.flatMap((p) => p.data);
      assert.deepEqual(got, order(mine(), 'trending', now));
      // It is neither the newest-first nor the most-viewed-first order.
      assert.notDeepEqual(got, order(mine(), 'time'));
      assert.notDeepEqual(got, order(mine(), 'views'));
      // A recent video outranks an older one with more views when the age gap outweighs the views.
      const byId = new Map(mine().map((v) => [String(v.id), v]));
      const pos = new Map(got.map((id, i) => [id, i]));
      const pair = got
        .flatMap((a) => got.map((b) => [byId.get(a), byId.get(b)] as const))
        .find(([a, b]) => a && b && a.view_count < b.view_count && a.created_at > b.created_at + 60 * DAY);
      assert.ok(pair?.[0] && pair[1]);
      assert.ok((pos.get(String(pair[0].id)) as number) < (pos.get(String(pair[1].id)) as number));
    });
  });

  describe('cursors (user and game lookups, both directions)', () => {
    for (const sort of ['time', 'views', 'trending'] as const) {
      it(`walks a user's videos (sort=${sort}) forward with after and back with before`, async () => {
        const q = `/helix/videos?user_id=${demo}&sort=${sort}&first=7`;
        const pages = await walk(t, token, q);
        assert.ok(pages.length > 3);
        assert.deepEqual(
          pages.flatMap((p) => p.data),
          order(mine(), sort, now),
        );
        assert.deepEqual(
          await walkBack(t, token, q, pages),
          pages
            .slice(0, -2)
            .map((p) => p.data)
            .reverse(),
        );
      });
    }

    it('binds a cursor to every filter: one from another filter set is a 400 Invalid cursor.', async () => {
      const base = `user_id=${demo}&first=2&sort=views&type=archive&language=en&period=month`;
      const cursor = (await get(base)).json().pagination.cursor as string;
      assert.equal((await get(`${base}&after=${cursor}`)).statusCode, 200);
      for (const other of [
        base.replace('sort=views', 'sort=trending'),
        base.replace('&sort=views', ''),
        base.replace('type=archive', 'type=upload'),
        base.replace('&type=archive', ''),
        base.replace('language=en', 'language=de'),
        base.replace('&language=en', ''),
        base.replace('period=month', 'period=week'),
        base.replace('&period=month', ''),
        base.replace(`user_id=${demo}`, `game_id=${demo}`),
      ]) {
        const res = await get(`${other}&after=${cursor}`);
        assert.deepEqual(res.json(), badRequest('Invalid cursor.'), other);
      }
    });

    it('rejects after and before together, and a bad first, with a 400', async () => {
      const c = (await get(`user_id=${demo}&first=2`)).json().pagination.cursor;
      assert.deepEqual(
        (await get(`user_id=${demo}&after=${c}&before=${c}`)).json(),
        badRequest('The parameters "after" and "before" cannot be used together'),
      );
      assert.deepEqual(
        (await get(`user_id=${demo}&first=101`)).json(),
        badRequest('The parameter "first" was malformed: the value must be less than or equal to 100'),
      );
    });
  });

  describe('fields (docs/api.md, Video)', () => {
    it('returns the Helix video fields with their types', async () => {
      const archive = all.find((v) => v.type === 'archive' && v.muted_segments !== null) as VideoRow;
      const upload = all.find((v) => v.type === 'upload') as VideoRow;
      const res = await get(`id=${archive.id}&id=${upload.id}`);
      const [a, u] = res.json().data as WireVideo[];
      const owner = await t.store.db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', archive.user_id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(a, {
        id: String(archive.id),
        stream_id: String(archive.stream_id),
        user_id: String(archive.user_id),
        user_login: owner.login,
        user_name: owner.display_name,
        title: archive.title,
        description: archive.description,
        created_at: rfc3339(archive.created_at),
        published_at: rfc3339(archive.published_at),
        url: `https://streams.example.com/videos/${archive.id}`,
        thumbnail_url: `https://streams.example.com/media/videos/${owner.login}_${archive.id}-%{width}x%{height}.jpg`,
        viewable: 'public',
        view_count: archive.view_count,
        language: archive.language,
        type: 'archive',
        duration: hms(archive.duration_s),
        muted_segments: JSON.parse(archive.muted_segments as string),
      });
      assert.match(a?.duration as string, /^(\d+h)?(\d+m)?\d+s$/);
      assert.ok(Array.isArray(a?.muted_segments) && (a.muted_segments as unknown[]).length > 0);
      assert.equal(u?.stream_id, null);
      assert.equal(u?.muted_segments, null);
    });
  });

  describe('access and paths', () => {
    it('is served at /mock/videos too, for app and user tokens', async () => {
      const a = await get(`user_id=${demo}&first=3`);
      const b = await t.get(`/mock/videos?user_id=${demo}&first=3`, bearer(await t.userToken()));
      assert.equal(b.statusCode, 200);
      assert.equal(b.body, a.body);
    });

    it('answers 401 without a token, before looking at parameters', async () => {
      const res = await t.get('/helix/videos?id=x&sort=nope');
      assert.deepEqual(res.json(), { error: 'Unauthorized', status: 401, message: 'OAuth token is missing' });
    });
  });

  // Golden answers: seed 1, 200 users, TEST_NOW; byte-identical on both stores, cursors included.
  // The files hold the body indented; the wire body must equal their compact form byte for byte.
  // UPDATE_GOLDEN=1 rewrites them (from the SQLite run).
  describe('golden answers', () => {
    for (const [file, q] of [
      ['videos-by-user.json', () => `user_id=${demo}&first=3`],
      ['videos-by-game-trending.json', () => `game_id=${topGame()}&sort=trending&type=archive&first=3`],
      ['videos-by-ids.json', () => `id=${all[7]?.id}&id=${all[2]?.id}`],
    ] as const) {
      it(`answers ${file.replace('.json', '')} byte for byte as test/golden/${file}`, async () => {
        const res = await get(q());
        assert.equal(res.statusCode, 200);
        assert.ok(res.json().data.length > 0);
        assertGolden(kind, file, res.body);
      });
    }
  });
});

// More than 1,000 videos of one game: every row exactly once, in each documented order, forward
// with `after` and back with `before`.
forEachStore('GET /helix/videos walks', (kind: StoreKind) => {
  let t: TestApp;
  let token: string;
  let rows: VideoRow[];
  let game: number;
  before(async () => {
    t = await startTestApp(kind, { users: 1600 });
    token = await t.appToken();
    const top = await t.store.db
      .selectFrom('videos')
      .select((eb) => ['game_id', eb.fn.countAll<number | string>().as('n')])
      .groupBy('game_id')
      .orderBy('n', 'desc')
      .limit(1)
      .executeTakeFirstOrThrow();
    game = top.game_id;
    rows = await t.store.db.selectFrom('videos').selectAll().where('game_id', '=', game).execute();
  });
  after(() => t.close());

  for (const sort of ['time', 'views', 'trending'] as const) {
    it(`walks every video of a game once (sort=${sort}), and back with before`, async () => {
      assert.ok(rows.length > 1000, `${rows.length} rows`);
      const q = `/helix/videos?game_id=${game}&sort=${sort}&first=17`;
      const pages = await walk(t, token, q);
      assert.deepEqual(
        pages.flatMap((p) => p.data),
        order(rows, sort, Math.floor(t.clock.now() / 1000)),
      );
      assert.deepEqual(
        await walkBack(t, token, q, pages),
        pages
          .slice(0, -2)
          .map((p) => p.data)
          .reverse(),
      );
    });
  }
});
