import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ClipRow } from '../../src/store/schema.ts';
import { rfc3339 } from '../../src/wire/datetime.ts';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { assertGolden } from '../support/golden.ts';
import type { StoreKind } from '../support/stores.ts';

interface WireClip {
  id: string;
  broadcaster_id: string;
  game_id: string;
  view_count: number;
  created_at: string;
  is_featured: boolean;
  [k: string]: unknown;
}

const WEEK = 7 * 86400;
const ids = (res: { json(): { data: WireClip[] } }) => res.json().data.map((c) => c.id);
const badRequest = (message: string) => ({ error: 'Bad Request', status: 400, message });
const ONE_OF = 'exactly one of "broadcaster_id", "game_id", "id" must be given';

/** The store's answer to "clips of this selector, most viewed first, ties by id (higher first)". */
function byViews(rows: ClipRow[]): ClipRow[] {
  return [...rows].sort((a, b) => b.view_count - a.view_count || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

forEachStore('GET /helix/clips', (kind: StoreKind) => {
  let t: TestApp;
  let token: string;
  let demo: number;
  let all: ClipRow[];
  const get = (q: string) => t.get(`/helix/clips?${q}`, bearer(token));
  const mine = () => all.filter((c) => c.broadcaster_id === demo);

  before(async () => {
    t = await startTestApp(kind);
    token = await t.appToken();
    demo = t.seed?.demoUserId as number;
    all = await t.store.db.selectFrom('clips').selectAll().execute();
  });
  after(() => t.close());

  describe('selectors: exactly one of id, broadcaster_id, game_id', () => {
    it('rejects a request with no selector with a 400 naming the three', async () => {
      const res = await get('first=5');
      assert.equal(res.statusCode, 400);
      assert.deepEqual(res.json(), badRequest(`Missing required parameter: ${ONE_OF}`));
    });

    for (const [q, names] of [
      ['broadcaster_id=1&game_id=2', '"broadcaster_id" and "game_id"'],
      ['id=a&broadcaster_id=1', '"broadcaster_id" and "id"'],
      ['id=a&game_id=2&broadcaster_id=1', '"broadcaster_id" and "game_id" and "id"'],
    ] as const) {
      it(`rejects several selector kinds (${q}) with a 400 naming them`, async () => {
        const res = await get(q);
        assert.equal(res.statusCode, 400);
        assert.deepEqual(
          res.json(),
          badRequest(`The parameters ${names} cannot be used together: ${ONE_OF}`),
        );
      });
    }

    for (const p of ['broadcaster_id', 'game_id']) {
      it(`takes one ${p} only: a repeated one is a 400`, async () => {
        const res = await get(`${p}=1&${p}=2`);
        assert.equal(res.statusCode, 400);
        assert.deepEqual(res.json(), badRequest(`The parameter "${p}" may be given only once`));
      });
      it(`rejects a ${p} that is not a numeric ID with a 400`, async () => {
        const res = await get(`${p}=abc`);
        assert.equal(res.statusCode, 400);
        assert.deepEqual(
          res.json(),
          badRequest(`The parameter "${p}" was malformed: the value must be a numeric ID`),
        );
      });
    }
  });

  describe('broadcaster_id and game_id: ordered by view count', () => {
    it('broadcaster_id: the broadcaster clips, most viewed first, ties by id, 20 by default', async () => {
      const res = await get(`broadcaster_id=${demo}`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(
        ids(res),
        byViews(mine())
          .slice(0, 20)
          .map((c) => c.id),
      );
      assert.equal(typeof res.json().pagination.cursor, 'string');
    });

    it('game_id: the game clips, most viewed first, ties by id', async () => {
      const game = all[0]?.game_id as number;
      const expected = byViews(all.filter((c) => c.game_id === game)).map((c) => c.id);
      const got: string[] = [];
      let cursor: string | undefined;
      do {
        const res = await get(`game_id=${game}&first=100${cursor ? `&after=${cursor}` : ''}`);
        assert.equal(res.statusCode, 200);
        got.push(...ids(res));
        cursor = res.json().pagination.cursor;
      } while (cursor);
      assert.deepEqual(got, expected);
    });

    it('first governs the number of clips (1..100), default 20', async () => {
      assert.equal((await get(`broadcaster_id=${demo}&first=3`)).json().data.length, 3);
      assert.equal((await get(`broadcaster_id=${demo}&first=100`)).json().data.length, 100);
      for (const [first, rule] of [
        ['101', 'less than or equal to 100'],
        ['0', 'greater than or equal to 1'],
      ]) {
        const res = await get(`broadcaster_id=${demo}&first=${first}`);
        assert.deepEqual(
          res.json(),
          badRequest(`The parameter "first" was malformed: the value must be ${rule}`),
        );
      }
    });

    it('answers an unknown broadcaster with {"data": [], "pagination": {}}', async () => {
      const res = await get('broadcaster_id=1');
      assert.equal(res.statusCode, 200);
      assert.equal(res.body, '{"data":[],"pagination":{}}');
    });

    it('answers 404 for a game_id naming no game; a game without clips is an empty 200', async () => {
      assert.deepEqual((await get('game_id=9000000001')).json(), {
        error: 'Not Found',
        status: 404,
        message: 'The ID in game_id was not found',
      });
      const id = 990_003;
      await t.store.db
        .insertInto('games')
        .values({ id, name: 'Quiet Game', igdb_id: '', owner_id: null, viewer_count: 0, stream_count: 0 })
        .execute();
      try {
        for (const q of [`game_id=${id}`, `game_id=${id}&is_featured=true&started_at=2020-01-01T00:00:00Z`]) {
          const res = await get(q);
          assert.equal(res.statusCode, 200, q);
          assert.equal(res.body, '{"data":[],"pagination":{}}', q);
        }
      } finally {
        await t.store.db.deleteFrom('games').where('id', '=', id).execute();
      }
    });
  });

  describe('id: one or more, at most 100', () => {
    it('returns clips in input order, duplicates and unknown ids ignored, without a cursor', async () => {
      const [a, b, c] = [all[5], all[77], all[150]] as [ClipRow, ClipRow, ClipRow];
      const res = await get(`id=${c.id}&id=nope&id=${a.id}&id=${c.id}&id=${b.id}`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(ids(res), [c.id, a.id, b.id]);
      assert.deepEqual(res.json().pagination, {});
    });

    it('accepts 100 ids and rejects 101 with a 400', async () => {
      const hundred = all.slice(0, 100).map((c) => `id=${encodeURIComponent(c.id)}`);
      const ok = await get(hundred.join('&'));
      assert.equal(ok.json().data.length, 100);
      const res = await get([...hundred, 'id=x'].join('&'));
      assert.equal(res.statusCode, 400);
      assert.deepEqual(res.json(), badRequest('The parameter "id" may be given at most 100 times'));
    });

    it('returns all given ids whatever first says (first governs only broadcaster/game queries)', async () => {
      const five = all.slice(0, 5).map((c) => `id=${encodeURIComponent(c.id)}`);
      assert.equal((await get(`${five.join('&')}&first=2`)).json().data.length, 5);
    });

    for (const p of ['after', 'before']) {
      it(`${p} applies only to broadcaster_id or game_id queries: with id it is a 400`, async () => {
        const cursor = (await get(`broadcaster_id=${demo}&first=2`)).json().pagination.cursor;
        const res = await get(`id=${encodeURIComponent(all[0]?.id as string)}&${p}=${cursor}`);
        assert.equal(res.statusCode, 400);
        assert.deepEqual(
          res.json(),
          badRequest(`The parameter "${p}" applies only to queries by "broadcaster_id" or "game_id"`),
        );
      });
    }
  });

  describe('started_at / ended_at: an RFC 3339 period', () => {
    const inPeriod = (rows: ClipRow[], from: number, to: number) =>
      byViews(rows.filter((c) => c.created_at >= from && c.created_at < to));

    it('returns the clips created in [started_at, ended_at)', async () => {
      const from = Date.UTC(2025, 0, 1) / 1000;
      const to = Date.UTC(2026, 0, 1) / 1000;
      const res = await get(
        `broadcaster_id=${demo}&first=100&started_at=${rfc3339(from)}&ended_at=${rfc3339(to)}`,
      );
      assert.equal(res.statusCode, 200);
      const expected = inPeriod(mine(), from, to);
      assert.ok(expected.length > 5);
      assert.deepEqual(
        ids(res),
        expected.slice(0, 100).map((c) => c.id),
      );
    });

    it('ignores the seconds of started_at and ended_at', async () => {
      const c = all.find((x) => x.created_at % 60 > 0 && x.created_at % 60 < 59) as ClipRow;
      const minute = c.created_at - (c.created_at % 60);
      const q = (s: number, e: number) => `id=${c.id}&started_at=${rfc3339(s)}&ended_at=${rfc3339(e)}`;
      // started_at hh:mm:59 counts from hh:mm:00, so a clip made at hh:mm:30 is in
      assert.deepEqual(ids(await get(q(minute + 59, minute + 3600))), [c.id]);
      // ended_at hh:mm:59 ends at hh:mm:00, so the same clip is out
      assert.deepEqual(ids(await get(q(minute - 3600, minute + 59))), []);
      assert.deepEqual(ids(await get(q(minute - 3600, minute + 60))), [c.id]);
    });

    it('takes ended_at as one week after started_at when it is missing', async () => {
      const from = Date.UTC(2025, 5, 1, 10, 30) / 1000;
      const res = await get(`broadcaster_id=${demo}&first=100&started_at=${rfc3339(from + 42)}`);
      const explicit = await get(
        `broadcaster_id=${demo}&first=100&started_at=${rfc3339(from)}&ended_at=${rfc3339(from + WEEK)}`,
      );
      const expected = inPeriod(mine(), from, from + WEEK).map((c) => c.id);
      assert.ok(expected.length > 0);
      assert.deepEqual(ids(res), expected);
      assert.deepEqual(ids(explicit), expected);
      // a clip just past the week is not in it
      const longer = inPeriod(mine(), from, from + WEEK + 30 * 86400).length;
      assert.ok(longer > expected.length);
    });

    it('ignores the period when ended_at comes without started_at', async () => {
      const plain = await get(`broadcaster_id=${demo}&first=50`);
      const res = await get(`broadcaster_id=${demo}&first=50&ended_at=2013-01-01T00:00:00Z`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(ids(res), ids(plain));
    });

    for (const p of ['started_at', 'ended_at']) {
      for (const bad of [
        'yesterday',
        '2026-06-01',
        '2026-06-01T10:00:00',
        '2026-06-01 10:00:00Z',
        '2026-02-30T10:00:00Z',
        '2026-06-01T24:00:00Z',
        '2026-06-01T10:00:00+25:00',
        '1780272000',
      ]) {
        it(`rejects ${p}=${bad} (not RFC 3339) with a 400`, async () => {
          const other = p === 'ended_at' ? '&started_at=2026-06-01T00:00:00Z' : '';
          const res = await get(`broadcaster_id=${demo}&${p}=${encodeURIComponent(bad)}${other}`);
          assert.equal(res.statusCode, 400);
          assert.deepEqual(
            res.json(),
            badRequest(
              `The parameter "${p}" was malformed: the value must be an RFC 3339 date-time such as 2026-06-01T00:00:00Z`,
            ),
          );
        });
      }
    }

    it('rejects a malformed ended_at with a 400 even without started_at', async () => {
      const res = await get(`broadcaster_id=${demo}&ended_at=soon`);
      assert.equal(res.statusCode, 400);
      assert.match(res.json().message, /"ended_at" was malformed/);
    });

    it('accepts offsets and fractions (RFC 3339) and reads them as the same instant', async () => {
      const a = await get(`broadcaster_id=${demo}&first=100&started_at=2025-03-01T00:00:00Z`);
      const b = await get(
        `broadcaster_id=${demo}&first=100&started_at=${encodeURIComponent('2025-03-01T02:00:30.5+02:00')}`,
      );
      assert.equal(b.statusCode, 200);
      assert.deepEqual(ids(b), ids(a));
    });

    it('rejects ended_at earlier than started_at with a 400', async () => {
      const res = await get(
        `broadcaster_id=${demo}&started_at=2026-06-01T00:00:00Z&ended_at=2026-05-01T00:00:00Z`,
      );
      assert.deepEqual(
        res.json(),
        badRequest('The parameter "ended_at" must not be earlier than "started_at"'),
      );
    });
  });

  describe('is_featured: true, false or absent', () => {
    for (const [value, keep] of [
      ['true', (c: ClipRow) => c.is_featured === 1],
      ['false', (c: ClipRow) => c.is_featured === 0],
    ] as const) {
      it(`is_featured=${value} returns only ${value === 'true' ? '' : 'non-'}featured clips`, async () => {
        const got: string[] = [];
        let cursor: string | undefined;
        do {
          const res = await get(
            `broadcaster_id=${demo}&is_featured=${value}&first=100${cursor ? `&after=${cursor}` : ''}`,
          );
          assert.equal(res.statusCode, 200);
          for (const c of res.json().data as WireClip[]) assert.equal(c.is_featured, value === 'true');
          got.push(...ids(res));
          cursor = res.json().pagination.cursor;
        } while (cursor);
        assert.deepEqual(
          got,
          byViews(mine().filter(keep)).map((c) => c.id),
        );
      });
    }

    it('returns featured and other clips when is_featured is absent', async () => {
      const res = await get(`broadcaster_id=${demo}&first=100`);
      const flags = new Set((res.json().data as WireClip[]).map((c) => c.is_featured));
      assert.deepEqual([...flags].sort(), [false, true]);
    });

    it('reads is_featured in any letter case (True, TRUE, fAlSe), as production does', async () => {
      const q = (v: string) => `broadcaster_id=${demo}&first=100&is_featured=${v}`;
      const lower = { true: ids(await get(q('true'))), false: ids(await get(q('false'))) };
      assert.ok(lower.true.length > 0 && lower.false.length > 0);
      for (const v of ['True', 'TRUE', 'tRUE']) assert.deepEqual(ids(await get(q(v))), lower.true, v);
      for (const v of ['False', 'FALSE', 'fAlSe']) assert.deepEqual(ids(await get(q(v))), lower.false, v);
    });

    for (const bad of ['1', 'yes', 'truee', '']) {
      it(`rejects is_featured=${bad} with a 400 (true or false)`, async () => {
        const res = await get(`broadcaster_id=${demo}&is_featured=${bad}`);
        assert.deepEqual(
          res.json(),
          badRequest('The parameter "is_featured" was malformed: the value must be true or false'),
        );
      });
    }

    it('applies the period and is_featured to id queries too', async () => {
      const featured = all.filter((c) => c.is_featured === 1).slice(0, 3);
      const plain = all.filter((c) => c.is_featured === 0).slice(0, 3);
      const q = [...featured, ...plain].map((c) => `id=${encodeURIComponent(c.id)}`).join('&');
      assert.deepEqual(
        ids(await get(`${q}&is_featured=true`)),
        featured.map((c) => c.id),
      );
      assert.deepEqual(
        ids(await get(`${q}&is_featured=false`)),
        plain.map((c) => c.id),
      );
    });
  });

  describe('cursors', () => {
    it('walks forward with after and back with before over the same pages (broadcaster, featured)', async () => {
      const q = `broadcaster_id=${demo}&is_featured=false&started_at=2020-01-01T00:00:00Z&ended_at=2026-06-01T00:00:00Z&first=9`;
      const pages: { data: string[]; cursor?: string }[] = [];
      let cursor: string | undefined;
      do {
        const res = await get(`${q}${cursor ? `&after=${cursor}` : ''}`);
        pages.push({ data: ids(res), cursor: res.json().pagination.cursor });
        cursor = res.json().pagination.cursor;
      } while (cursor);
      assert.ok(pages.length > 3);
      for (let n = pages.length - 2; n >= 1; n--) {
        const res = await get(`${q}&before=${pages[n]?.cursor}`);
        assert.deepEqual(ids(res), pages[n - 1]?.data);
      }
      assert.deepEqual((await get(`${q}&before=${pages[1]?.cursor}`)).json().pagination, {});
    });

    it('binds a cursor to every filter: one from another filter set is a 400 Invalid cursor.', async () => {
      const period = 'started_at=2020-01-01T00:00:00Z&ended_at=2026-06-01T00:00:00Z';
      const base = `broadcaster_id=${demo}&first=2&is_featured=false&${period}`;
      const cursor = (await get(base)).json().pagination.cursor as string;
      assert.equal((await get(`${base}&after=${cursor}`)).statusCode, 200);
      // the same filters written differently (other seconds) share cursors
      assert.equal((await get(`${base.replaceAll(':00Z', ':59Z')}&after=${cursor}`)).statusCode, 200);
      for (const other of [
        `broadcaster_id=${demo}&first=2&is_featured=true&${period}`,
        `broadcaster_id=${demo}&first=2&${period}`,
        `broadcaster_id=${demo}&first=2&is_featured=false`,
        `broadcaster_id=${demo}&first=2&is_featured=false&started_at=2020-01-02T00:00:00Z&ended_at=2026-06-01T00:00:00Z`,
        `broadcaster_id=${demo}&first=2&is_featured=false&started_at=2020-01-01T00:00:00Z&ended_at=2026-06-02T00:00:00Z`,
        `broadcaster_id=${demo}&first=2&is_featured=false&started_at=2020-01-01T00:00:00Z`,
        `broadcaster_id=${demo + 1}&first=2&is_featured=false&${period}`,
        `game_id=${demo}&first=2&is_featured=false&${period}`,
      ]) {
        for (const p of ['after', 'before']) {
          const res = await get(`${other}&${p}=${cursor}`);
          assert.equal(res.statusCode, 400, other);
          assert.deepEqual(res.json(), badRequest('Invalid cursor.'));
        }
      }
    });

    it('rejects after and before together with a 400', async () => {
      const c = (await get(`broadcaster_id=${demo}&first=2`)).json().pagination.cursor;
      const res = await get(`broadcaster_id=${demo}&after=${c}&before=${c}`);
      assert.deepEqual(res.json(), badRequest('The parameters "after" and "before" cannot be used together'));
    });

    it('ends with "pagination": {} on the last page', async () => {
      const count = mine().length;
      const res = await get(`broadcaster_id=${demo}&first=100`);
      assert.ok(count > 100);
      let cursor = res.json().pagination.cursor as string | undefined;
      let seen = res.json().data.length;
      while (cursor) {
        const next = await get(`broadcaster_id=${demo}&first=100&after=${cursor}`);
        seen += next.json().data.length;
        cursor = next.json().pagination.cursor;
        if (!cursor) assert.deepEqual(next.json().pagination, {});
      }
      assert.equal(seen, count);
    });
  });

  describe('fields (docs/api.md, Clip)', () => {
    it('returns the Helix clip fields with their types', async () => {
      const withVod = all.find((c) => c.video_id !== null) as ClipRow;
      const without = all.find((c) => c.video_id === null) as ClipRow;
      const res = await get(`id=${withVod.id}&id=${without.id}`);
      const [a, b] = res.json().data as WireClip[];
      assert.deepEqual(Object.keys(a ?? {}).sort(), [
        'broadcaster_id',
        'broadcaster_name',
        'created_at',
        'creator_id',
        'creator_name',
        'duration',
        'embed_url',
        'game_id',
        'id',
        'is_featured',
        'language',
        'thumbnail_url',
        'title',
        'url',
        'video_id',
        'view_count',
        'vod_offset',
      ]);
      const users = await t.store.db.selectFrom('users').selectAll().execute();
      const name = (id: number) => users.find((u) => u.id === id)?.display_name;
      assert.deepEqual(a, {
        id: withVod.id,
        url: `https://streams.example.com/clip/${withVod.id}`,
        embed_url: `https://streams.example.com/embed/clip?clip=${withVod.id}`,
        broadcaster_id: String(withVod.broadcaster_id),
        broadcaster_name: name(withVod.broadcaster_id),
        creator_id: String(withVod.creator_id),
        creator_name: name(withVod.creator_id),
        video_id: String(withVod.video_id),
        game_id: String(withVod.game_id),
        language: withVod.language,
        title: withVod.title,
        view_count: withVod.view_count,
        created_at: rfc3339(withVod.created_at),
        thumbnail_url: `https://streams.example.com/media/clips/${withVod.id}/preview-480x272.jpg`,
        duration: withVod.duration_ds / 10,
        vod_offset: withVod.vod_offset,
        is_featured: withVod.is_featured === 1,
      });
      assert.equal(typeof a?.vod_offset, 'number');
      assert.equal(b?.video_id, '');
      assert.equal(b?.vod_offset, null);
      assert.match(res.body, /"duration":\d+(\.\d)?,/);
    });
  });

  describe('access and paths', () => {
    it('is served at /mock/clips too, for app and user tokens', async () => {
      const a = await get(`broadcaster_id=${demo}&first=3`);
      const b = await t.get(`/mock/clips?broadcaster_id=${demo}&first=3`, bearer(await t.userToken()));
      assert.equal(b.statusCode, 200);
      assert.equal(b.body, a.body);
    });

    it('answers 401 without a token, before looking at parameters', async () => {
      const res = await t.get('/helix/clips?first=1000');
      assert.deepEqual(res.json(), { error: 'Unauthorized', status: 401, message: 'OAuth token is missing' });
    });
  });

  // Golden answers: seed 1, 200 users, TEST_NOW; byte-identical on both stores, cursors included.
  // The files hold the body indented; the wire body must equal their compact form byte for byte.
  // UPDATE_GOLDEN=1 rewrites them (from the SQLite run).
  describe('golden answers', () => {
    for (const [file, q] of [
      ['clips-by-broadcaster.json', () => `broadcaster_id=${demo}&first=4`],
      [
        'clips-by-game-featured-period.json',
        () =>
          `game_id=20100&is_featured=true&started_at=2024-01-01T00:00:00Z&ended_at=2026-06-01T00:00:00Z&first=3`,
      ],
      [
        'clips-by-ids.json',
        () => `id=${encodeURIComponent(all[3]?.id as string)}&id=${encodeURIComponent(all[1]?.id as string)}`,
      ],
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

// More than 1,000 clips of one broadcaster and of one game: every row exactly once, in the
// documented order, forward with `after` and back with `before`.
forEachStore('GET /helix/clips walks', (kind: StoreKind) => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await startTestApp(kind, { users: 1200 });
    token = await t.appToken();
  });
  after(() => t.close());

  for (const selector of ['broadcaster_id', 'game_id'] as const) {
    it(`walks every ${selector} clip once in view-count order, and back with before`, async () => {
      const top = await t.store.db
        .selectFrom('clips')
        .select((eb) => [selector, eb.fn.countAll<number | string>().as('n')])
        .groupBy(selector)
        .orderBy('n', 'desc')
        .limit(1)
        .executeTakeFirstOrThrow();
      const value = top[selector];
      const expected = (
        await t.store.db
          .selectFrom('clips')
          .select('id')
          .where(selector, '=', value)
          .orderBy('view_count', 'desc')
          .orderBy('id', 'desc')
          .execute()
      ).map((r) => r.id);
      assert.ok(expected.length > 1000, `${expected.length} rows`);
      const q = `/helix/clips?${selector}=${value}&first=13`;
      const pages: { data: string[]; cursor?: string }[] = [];
      let cursor: string | undefined;
      do {
        const res = await t.get(`${q}${cursor ? `&after=${cursor}` : ''}`, bearer(token));
        assert.equal(res.statusCode, 200);
        pages.push({ data: ids(res), cursor: res.json().pagination.cursor });
        cursor = res.json().pagination.cursor;
      } while (cursor);
      assert.deepEqual(
        pages.flatMap((p) => p.data),
        expected,
      );
      // Back from the second-to-last page, following only the cursors the backward walk returns.
      const back: string[][] = [];
      cursor = pages[pages.length - 2]?.cursor;
      while (cursor) {
        const res = await t.get(`${q}&before=${cursor}`, bearer(token));
        assert.equal(res.statusCode, 200);
        back.push(ids(res));
        cursor = res.json().pagination.cursor;
      }
      assert.deepEqual(
        back,
        pages
          .slice(0, -2)
          .map((p) => p.data)
          .reverse(),
      );
    });
  }
});
