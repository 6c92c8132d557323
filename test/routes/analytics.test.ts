import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';

// TEST_NOW is 2026-06-15T12:00:00Z: the request's day is 2026-06-15, and the seed's data runs up
// to 2026-06-14 (the day before the anchor), with ~3% of days missing.
const TODAY = '2026-06-15';
const YESTERDAY = '2026-06-14';
const DAY_BEFORE = '2026-06-13';
const BOTH = ['analytics:read:games', 'analytics:read:extensions'];

const KINDS = [
  { kind: 'games', path: '/helix/analytics/games', idParam: 'game_id', scope: 'analytics:read:games' },
  {
    kind: 'extensions',
    path: '/helix/analytics/extensions',
    idParam: 'extension_id',
    scope: 'analytics:read:extensions',
  },
] as const;

interface Owned {
  id: string;
  /** first day with data before today; null for a game or extension without any */
  firstDay: string | null;
  hasYesterday: boolean;
}

interface Report {
  game_id?: string;
  extension_id?: string;
  URL: string;
  type: string;
  date_range: { started_at: string; ended_at: string };
}

const wire = (day: string) => `${day}T00:00:00Z`;
/** The one whose data starts last. */
const latest = (os: Owned[]) =>
  [...os].sort((a, b) => (b.firstDay ?? '').localeCompare(a.firstDay ?? ''))[0] as Owned;

/** What the store holds for the games or extensions of `userId`, read directly. */
async function ownedOf(t: TestApp, kind: 'games' | 'extensions', userId: number): Promise<Owned[]> {
  const db = t.store.db;
  const ids =
    kind === 'games'
      ? (
          await db.selectFrom('games').select('id').where('owner_id', '=', userId).orderBy('id').execute()
        ).map((r) => String(r.id))
      : (
          await db
            .selectFrom('extensions')
            .select('id')
            .where('owner_id', '=', userId)
            .orderBy('id')
            .execute()
        ).map((r) => r.id);
  const out: Owned[] = [];
  for (const id of ids) {
    const days =
      kind === 'games'
        ? (
            await db
              .selectFrom('game_days')
              .select('day')
              .where('game_id', '=', Number(id))
              .where('day', '<', TODAY)
              .orderBy('day')
              .execute()
          ).map((r) => r.day)
        : (
            await db
              .selectFrom('extension_days')
              .select('day')
              .where('extension_id', '=', id)
              .where('day', '<', TODAY)
              .orderBy('day')
              .execute()
          ).map((r) => r.day);
    out.push({ id, firstDay: days[0] ?? null, hasYesterday: days.includes(YESTERDAY) });
  }
  return out;
}

forEachStore('GET /helix/analytics/games and /helix/analytics/extensions', (store: StoreKind) => {
  let t: TestApp;
  let token: string;
  let demo: number;
  const owned: Record<'games' | 'extensions', Owned[]> = { games: [], extensions: [] };
  before(async () => {
    t = await startTestApp(store);
    token = await t.userToken(BOTH);
    demo = t.seed?.demoUserId as number;
    owned.games = await ownedOf(t, 'games', demo);
    owned.extensions = await ownedOf(t, 'extensions', demo);
  });
  after(() => t.close());

  const get = (url: string, tok = token) => t.get(url, bearer(tok));
  const message = async (url: string, status: number, tok = token) => {
    const res = await get(url, tok);
    assert.equal(res.statusCode, status, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['error', 'message', 'status']);
    assert.equal(body.status, status);
    return body.message as string;
  };

  describe('access', () => {
    for (const k of KINDS) {
      it(`${k.path}: 401 without a token`, async () => {
        const res = await t.get(k.path);
        assert.equal(res.statusCode, 401);
        assert.equal(res.json().message, 'OAuth token is missing');
      });
      it(`${k.path}: 401 with an app token (a user token is required)`, async () => {
        assert.match(await message(k.path, 401, await t.appToken()), /user access token/);
      });
      it(`${k.path}: 401 without the ${k.scope} scope`, async () => {
        const other = BOTH.filter((s) => s !== k.scope);
        assert.equal(await message(k.path, 401, await t.userToken(other)), `Missing scope: ${k.scope}`);
      });
    }
  });

  describe('reports of the token user', () => {
    for (const k of KINDS) {
      it(`${k.path}: without ${k.idParam}, one report per ${k.kind} of the user, by id`, async () => {
        assert.equal(owned[k.kind].length, 3, 'the demo broadcaster owns three');
        const res = await get(k.path);
        assert.equal(res.statusCode, 200);
        const body = res.json();
        assert.deepEqual(
          body.data.map((r: Report) => r[k.idParam]),
          owned[k.kind].map((o) => o.id),
        );
        assert.deepEqual(body.pagination, {});
        for (const r of body.data as Report[]) {
          assert.deepEqual(Object.keys(r).sort(), ['URL', 'date_range', k.idParam, 'type'].sort());
          assert.equal(r.type, 'overview_v2');
          assert.ok(
            r.URL.startsWith(
              `${t.config.publicUrl}/reports/${k.kind}/${encodeURIComponent(r[k.idParam] as string)}.csv?`,
            ),
            r.URL,
          );
        }
      });

      it(`${k.path}: another user's token lists only that user's ${k.kind}`, async () => {
        const other = await t.store.db
          .selectFrom('users')
          .select('id')
          .where('id', '!=', demo)
          .orderBy('id')
          .executeTakeFirstOrThrow();
        const mine = await ownedOf(t, k.kind, other.id);
        const res = await get(k.path, await t.userToken(BOTH, other.id));
        assert.equal(res.statusCode, 200);
        assert.deepEqual(
          res.json().data.map((r: Report) => r[k.idParam]),
          mine.map((o) => o.id),
        );
      });

      it(`${k.path}: a user who owns none gets "data": [] and "pagination": {}`, async () => {
        const owners = [
          ...(await t.store.db.selectFrom('games').select('owner_id').execute()).map((r) => r.owner_id),
          ...(await t.store.db.selectFrom('extensions').select('owner_id').execute()).map((r) => r.owner_id),
        ];
        const nobody = await t.store.db
          .selectFrom('users')
          .select('id')
          .where(
            'id',
            'not in',
            owners.filter((o): o is number => o !== null),
          )
          .executeTakeFirstOrThrow();
        const res = await get(k.path, await t.userToken(BOTH, nobody.id));
        assert.equal(res.statusCode, 200);
        assert.deepEqual(res.json(), { data: [], pagination: {} });
      });

      it(`${k.path}: pages with first and after over the same reports`, async () => {
        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const res = await get(`${k.path}?first=1${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}`);
          assert.equal(res.statusCode, 200);
          const body = res.json();
          assert.equal(body.data.length, 1);
          seen.push(body.data[0][k.idParam]);
          cursor = body.pagination.cursor;
          pages++;
        } while (cursor && pages < 10);
        assert.deepEqual(
          seen,
          owned[k.kind].map((o) => o.id),
        );
      });

      it(`${k.path}: a cursor from a query with other dates is a 400 Invalid cursor.`, async () => {
        const c = (await get(`${k.path}?first=1`)).json().pagination.cursor as string;
        const q = `started_at=2020-01-01T00:00:00Z&ended_at=2020-02-01T00:00:00Z&first=1&after=${encodeURIComponent(c)}`;
        assert.equal(await message(`${k.path}?${q}`, 400), 'Invalid cursor.');
      });

      it(`${k.path}: with ${k.idParam}, that one report`, async () => {
        const o = owned[k.kind][1] as Owned;
        const res = await get(`${k.path}?${k.idParam}=${o.id}`);
        assert.equal(res.statusCode, 200);
        const body = res.json();
        assert.equal(body.data.length, 1);
        assert.equal(body.data[0][k.idParam], o.id);
        assert.deepEqual(body.pagination, {});
      });

      it(`${k.path}: ${k.idParam} supersedes after (even a malformed one) and first`, async () => {
        const o = owned[k.kind][2] as Owned;
        const res = await get(`${k.path}?${k.idParam}=${o.id}&after=garbage&first=1`);
        assert.equal(res.statusCode, 200);
        assert.equal(res.json().data[0][k.idParam], o.id);
      });

      it(`${k.path}: a ${k.idParam} that does not exist is a 404`, async () => {
        for (const id of ['999999999', 'nosuchthing', '']) {
          assert.match(
            await message(`${k.path}?${k.idParam}=${id}`, 404),
            new RegExp(`specified in the ${k.idParam} query parameter was not found`),
          );
        }
      });

      it(`${k.path}: a ${k.idParam} of another user's ${k.kind} is a 403`, async () => {
        const foreign =
          k.kind === 'games'
            ? await t.store.db
                .selectFrom('games')
                .select('id')
                .where((eb) => eb.or([eb('owner_id', 'is', null), eb('owner_id', '!=', demo)]))
                .orderBy('id')
                .executeTakeFirstOrThrow()
            : await t.store.db
                .selectFrom('extensions')
                .select('id')
                .where('owner_id', '!=', demo)
                .orderBy('id')
                .executeTakeFirstOrThrow();
        assert.match(
          await message(`${k.path}?${k.idParam}=${foreign.id}`, 403),
          /does not belong to the user of the OAuth token/,
        );
      });

      it(`${k.path}: type defaults to overview_v2 and accepts overview_v2`, async () => {
        const res = await get(`${k.path}?type=overview_v2&first=1`);
        assert.equal(res.statusCode, 200);
        assert.equal(res.json().data[0].type, 'overview_v2');
        assert.match(res.json().data[0].URL, /[?&]type=overview_v2&/);
      });

      it(`${k.path}: any other type is a 400`, async () => {
        for (const type of ['overview_v1', 'OVERVIEW_V2', '']) {
          assert.equal(
            await message(`${k.path}?type=${type}`, 400),
            'The parameter "type" was malformed: the value must be one of overview_v2',
          );
        }
      });

      it(`${k.path}: first outside 1..100 is a 400`, async () => {
        assert.match(await message(`${k.path}?first=101`, 400), /"first".*less than or equal to 100/);
        assert.match(await message(`${k.path}?first=0`, 400), /"first".*greater than or equal to 1/);
      });

      it(`${k.path}: before is a 400 (forward paging only)`, async () => {
        assert.match(await message(`${k.path}?before=abc`, 400), /"before" is not supported/);
      });

      it(`${k.path}: a repeated parameter is a 400`, async () => {
        const d = 'started_at=2020-01-01T00:00:00Z&ended_at=2020-01-02T00:00:00Z';
        assert.equal(
          await message(`${k.path}?${d}&started_at=2020-01-01T00:00:00Z`, 400),
          'The parameter "started_at" may be given only once',
        );
      });
    }
  });

  describe('date rules (docs/api.md, Date rules)', () => {
    const k = KINDS[0];
    let g: Owned;
    before(() => {
      g = owned.games[0] as Owned;
    });
    const one = (q: string) => get(`${k.path}?${k.idParam}=${g.id}&${q}`);
    const range = async (q: string) => {
      const res = await one(q);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data[0].date_range as Report['date_range'];
    };

    it('rule 1: every RFC 3339 spelling of UTC midnight is read as that day', async () => {
      for (const v of [
        '2020-01-01T00:00:00Z',
        '2020-01-01T00:00:00z',
        '2020-01-01t00:00:00Z',
        '2020-01-01t00:00:00z',
        '2020-01-01T00:00:00+00:00',
        '2020-01-01T00:00:00-00:00',
        '2020-01-01T00:00:00.000Z',
        '2020-01-01T00:00:00.0+00:00',
      ]) {
        const q = `started_at=${encodeURIComponent(v)}&ended_at=${encodeURIComponent(v.replace('01-01', '01-10'))}`;
        assert.deepEqual(await range(q), { started_at: wire('2020-01-01'), ended_at: wire('2020-01-10') }, v);
      }
    });

    it('rule 1: any other instant, or midnight written with a non-zero offset, is a 400', async () => {
      for (const bad of [
        '2020-01-01',
        '2020-01-01T00:00:00',
        '2020-01-01T01:00:00Z',
        '2020-01-01T00:00:01Z',
        '2020-01-01T00:00:00.001Z',
        '2020-01-01T00:00:00+01:00',
        '2020-01-01T01:00:00+01:00',
        '2019-12-31T23:00:00-01:00',
        '2020-01-01T00:00:00+00:60',
        '2020-01-01 00:00:00Z',
        '2020-02-30T00:00:00Z',
        '2020-13-01T00:00:00Z',
        'yesterday',
      ]) {
        const v = encodeURIComponent(bad);
        assert.match(
          await message(`${k.path}?started_at=${v}&ended_at=2020-03-01T00:00:00Z`, 400),
          /^The parameter "started_at" was malformed: .*YYYY-MM-DDT00:00:00Z$/,
          bad,
        );
        assert.match(
          await message(`${k.path}?started_at=2020-01-01T00:00:00Z&ended_at=${v}`, 400),
          /^The parameter "ended_at" was malformed/,
          bad,
        );
      }
    });

    it('rule 2: started_at before 2018-01-31 is a 400', async () => {
      assert.equal(
        await message(`${k.path}?started_at=2018-01-30T00:00:00Z&ended_at=2018-03-01T00:00:00Z`, 400),
        'The parameter "started_at" must be on or after 2018-01-31T00:00:00Z',
      );
    });

    it('rule 2: started_at on 2018-01-31 is accepted', async () => {
      const res = await get(`${k.path}?started_at=2018-01-31T00:00:00Z&ended_at=2026-01-01T00:00:00Z`);
      assert.equal(res.statusCode, 200);
    });

    it('rule 3: started_at without ended_at is a 400', async () => {
      assert.equal(
        await message(`${k.path}?started_at=2020-01-01T00:00:00Z`, 400),
        'The parameter "ended_at" is required when "started_at" is given',
      );
    });

    it('rule 3: ended_at without started_at is a 400', async () => {
      assert.equal(
        await message(`${k.path}?ended_at=2020-01-01T00:00:00Z`, 400),
        'The parameter "started_at" is required when "ended_at" is given',
      );
    });

    it('started_at after ended_at is a 400; the same day is a one-day report', async () => {
      assert.equal(
        await message(`${k.path}?started_at=2020-01-02T00:00:00Z&ended_at=2020-01-01T00:00:00Z`, 400),
        'The parameter "started_at" must not be later than "ended_at"',
      );
      assert.deepEqual(await range('started_at=2020-01-02T00:00:00Z&ended_at=2020-01-02T00:00:00Z'), {
        started_at: '2020-01-02T00:00:00Z',
        ended_at: '2020-01-02T00:00:00Z',
      });
    });

    it("a window starting before the report's first day of data is covered whole, not raised", async () => {
      const late = latest(owned.games);
      assert.ok((late.firstDay as string) > '2018-02-01', 'a game whose data starts after 2018-01-31');
      const res = await get(
        `${k.path}?${k.idParam}=${late.id}&started_at=2018-01-31T00:00:00Z&ended_at=2025-01-01T00:00:00Z`,
      );
      assert.deepEqual(res.json().data[0].date_range, {
        started_at: '2018-01-31T00:00:00Z',
        ended_at: '2025-01-01T00:00:00Z',
      });
      assert.match(res.json().data[0].URL, /started_at=2018-01-31&/);
    });

    it('rule 5: ended_at of day D covers all of D and is shown as D at 00:00:00Z', async () => {
      const r = await range('started_at=2020-01-01T00:00:00Z&ended_at=2020-01-10T00:00:00Z');
      assert.deepEqual(r, { started_at: '2020-01-01T00:00:00Z', ended_at: '2020-01-10T00:00:00Z' });
      const res = await one('started_at=2020-01-01T00:00:00Z&ended_at=2020-01-10T00:00:00Z');
      assert.match(res.json().data[0].URL, /started_at=2020-01-01&ended_at=2020-01-10&/);
    });

    it('rule 6: a later ended_at is lowered to the default end, yesterday when its data is in', async () => {
      const withYesterday = owned.games.find((o) => o.hasYesterday) as Owned;
      const res = await get(
        `${k.path}?${k.idParam}=${withYesterday.id}&started_at=2020-01-01T00:00:00Z&ended_at=2030-01-01T00:00:00Z`,
      );
      assert.equal(res.json().data[0].date_range.ended_at, wire(YESTERDAY));
    });

    it('rule 6: the default end is 2 days back when yesterday has no data yet', async () => {
      const long = await t.userToken(BOTH, undefined, 7 * 86_400);
      // One day after the seed anchor, "yesterday" is the anchor day: no data for it yet.
      t.clock.advance(86_400_000);
      try {
        const res = await get(
          `${k.path}?${k.idParam}=${g.id}&started_at=2020-01-01T00:00:00Z&ended_at=2030-01-01T00:00:00Z`,
          long,
        );
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().data[0].date_range.ended_at, wire(YESTERDAY));
        const all = await get(k.path, long);
        assert.equal(all.json().data.length, 3);
        for (const r of all.json().data as Report[]) assert.equal(r.date_range.ended_at, wire(YESTERDAY));
      } finally {
        t.clock.advance(-86_400_000);
      }
    });

    it('rule 6: a report missing yesterday ends the day before (store without that day)', async () => {
      const x = owned.extensions.find((o) => !o.hasYesterday);
      const e = KINDS[1];
      if (x) {
        const res = await get(`${e.path}?${e.idParam}=${x.id}`);
        assert.equal(res.json().data[0].date_range.ended_at, wire(DAY_BEFORE));
      }
      const y = owned.extensions.find((o) => o.hasYesterday) as Owned;
      const res = await get(`${e.path}?${e.idParam}=${y.id}`);
      assert.equal(res.json().data[0].date_range.ended_at, wire(YESTERDAY));
    });

    it('no dates: the whole available range, first day of data to the default end', async () => {
      for (const kk of KINDS) {
        const res = await get(kk.path);
        for (const r of res.json().data as Report[]) {
          const o = owned[kk.kind].find((x) => x.id === r[kk.idParam]) as Owned;
          assert.deepEqual(r.date_range, {
            started_at: wire(o.firstDay ?? '2018-01-31'),
            ended_at: wire(o.hasYesterday ? YESTERDAY : DAY_BEFORE),
          });
        }
      }
    });

    it('started_at on the request day or later is a 400 (reports end 1 to 2 days back)', async () => {
      for (const day of [TODAY, '2027-01-01']) {
        assert.match(
          await message(`${k.path}?started_at=${wire(day)}&ended_at=2030-01-01T00:00:00Z`, 400),
          /^The parameter "started_at" must be on or before 2026-06-14T00:00:00Z/,
        );
      }
    });

    it('started_at yesterday: every report covers that one day, with or without its data', async () => {
      const q = `started_at=${wire(YESTERDAY)}&ended_at=${wire(YESTERDAY)}`;
      // the demo data holds reports without yesterday's data, which this rule is about
      assert.ok([...owned.games, ...owned.extensions].some((o) => !o.hasYesterday));
      for (const kk of KINDS) {
        const res = await get(`${kk.path}?${q}`);
        assert.equal(res.statusCode, 200);
        assert.deepEqual(
          res.json().data.map((r: Report) => [r[kk.idParam], r.date_range.started_at, r.date_range.ended_at]),
          owned[kk.kind].map((o) => [o.id, wire(YESTERDAY), wire(YESTERDAY)]),
        );
        for (const o of owned[kk.kind]) {
          const one = await get(`${kk.path}?${kk.idParam}=${o.id}&${q}`);
          assert.equal(one.statusCode, 200, one.body);
          assert.deepEqual(one.json().data[0].date_range, {
            started_at: wire(YESTERDAY),
            ended_at: wire(YESTERDAY),
          });
        }
      }
    });

    it("a window before a report's first day of data is a 200 covering it (zeros), and listed", async () => {
      const late = latest(owned.games);
      const q = 'started_at=2018-01-31T00:00:00Z&ended_at=2018-02-02T00:00:00Z';
      const expected = { started_at: '2018-01-31T00:00:00Z', ended_at: '2018-02-02T00:00:00Z' };
      const one = await get(`${k.path}?${k.idParam}=${late.id}&${q}`);
      assert.equal(one.statusCode, 200, one.body);
      assert.deepEqual(one.json().data[0].date_range, expected);
      const res = await get(`${k.path}?${q}`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(
        res.json().data.map((r: Report) => [r.game_id, r.date_range]),
        owned.games.map((o) => [o.id, expected]),
      );
    });

    it('the URL expires 300 s after the request', async () => {
      const res = await one('first=1');
      const expires = Number(new URL(res.json().data[0].URL).searchParams.get('expires'));
      assert.equal(expires, Math.floor(t.clock.now() / 1000) + 300);
    });
  });
});
