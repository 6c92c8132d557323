// GET /search/categories and GET /search/channels: what matches (a prefix of a game's name from
// any word on; of a channel's login or display name, spaces and "_" ignored; ASCII letters in any
// case), in what order (the matched text, then the id), each item once; production's parameters,
// shapes and field order; writes through the admin API found at the next request. On both stores,
// the expectations computed here from the users, games and streams tables by the documented rule,
// not from the search keys the server reads.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_TOKEN, bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { assertGolden } from '../support/golden.ts';
import type { StoreKind } from '../support/stores.ts';

const BEFORE_REFUSED = 'The parameter "before" is not supported by this operation; page forward with "after"';
const QUERY_MISSING = 'Missing required parameter "query"';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

interface Category {
  box_art_url: string;
  name: string;
  id: string;
}
interface Channel {
  broadcaster_language: string;
  broadcaster_login: string;
  display_name: string;
  game_id: string;
  game_name: string;
  id: string;
  is_live: boolean;
  tag_ids: string[];
  tags: string[];
  thumbnail_url: string;
  title: string;
  started_at: string;
}

// The documented rule, written here on its own (docs/api.md, "Search").
const lowerAscii = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
const cut = (s: string) => [...s].slice(0, 100).join('');
const channelKey = (s: string) => cut(lowerAscii(s).replace(/[ _]/g, ''));
const isSeparator = (c: string) => (c.codePointAt(0) as number) < 128 && !/[0-9a-z]/.test(c);
/** A game's keys: its lower-cased name from the start and from each word's start. */
function gameKeys(name: string): string[] {
  const cs = [...lowerAscii(name)];
  return cs.flatMap((c, i) =>
    i === 0 || (isSeparator(cs[i - 1] as string) && !isSeparator(c)) ? [cut(cs.slice(i).join(''))] : [],
  );
}
/** Code point order (UTF-8 bytes), the keys' collation on both stores. */
const byCodePoint = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
/** The items of `keyed` whose keys start with `q`, each at its least such key, by key then id. */
function matching(keyed: { id: number; keys: string[] }[], q: string): number[] {
  if (q === '') return [];
  return keyed
    .flatMap(({ id, keys }) => {
      const hits = keys.filter((k) => k.startsWith(q)).sort(byCodePoint);
      return hits.length ? [{ id, key: hits[0] as string }] : [];
    })
    .sort((a, b) => byCodePoint(a.key, b.key) || a.id - b.id)
    .map((m) => m.id);
}

forEachStore('GET /search/categories and GET /search/channels', (kind: StoreKind) => {
  let t: TestApp;
  let token: string;

  const write = async (method: 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) => {
    const res = await t.inject({
      method,
      url,
      headers: body === undefined ? { authorization: admin.authorization } : admin,
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    assert.ok(res.statusCode < 300, `${method} ${url}: ${res.body}`);
  };
  const newUser = (id: string, login: string, display_name: string) =>
    write('POST', '/admin/users', {
      id,
      login,
      display_name,
      broadcaster_type: '',
      description: '',
      created_at: '2024-01-01T00:00:00Z',
    });

  /** Every page of `path` walked with `first`; the rows in order and the number of pages. */
  async function walk<T>(path: string, first = 100): Promise<{ rows: T[]; pages: number }> {
    const rows: T[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await t.get(
        `${path}&first=${first}${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}`,
        bearer(token),
      );
      assert.equal(res.statusCode, 200, `${path}: ${res.body}`);
      rows.push(...res.json().data);
      cursor = res.json().pagination.cursor;
      pages++;
    } while (cursor !== undefined && pages < 1000);
    return { rows, pages };
  }
  const q = (text: string) => encodeURIComponent(text);
  const categoryIds = async (query: string, first = 100) =>
    (await walk<Category>(`/helix/search/categories?query=${q(query)}`, first)).rows.map((c) => Number(c.id));
  const channelIds = async (query: string, liveOnly = false, first = 100) =>
    (
      await walk<Channel>(
        `/helix/search/channels?query=${q(query)}${liveOnly ? '&live_only=true' : ''}`,
        first,
      )
    ).rows.map((c) => Number(c.id));

  /** The games found by `query`, from the games table. */
  async function expectedCategories(query: string): Promise<number[]> {
    const games = await t.store.db.selectFrom('games').select(['id', 'name']).execute();
    return matching(
      games.map((g) => ({ id: g.id, keys: gameKeys(g.name) })),
      cut(lowerAscii(query).replace(/^ +| +$/g, '')),
    );
  }
  /** The channels found by `query`, from the users and streams tables. */
  async function expectedChannels(query: string, liveOnly = false): Promise<number[]> {
    const db = t.store.db;
    const users = await db.selectFrom('users').select(['id', 'login', 'display_name']).execute();
    const live = new Set((await db.selectFrom('streams').select('user_id').execute()).map((s) => s.user_id));
    return matching(
      users
        .filter((u) => !liveOnly || live.has(u.id))
        .map((u) => ({ id: u.id, keys: [channelKey(u.login), channelKey(u.display_name)].filter((k) => k) })),
      channelKey(query),
    );
  }

  before(async () => {
    t = await startTestApp(kind, { users: 1000, config: { adminToken: ADMIN_TOKEN } });
    token = await t.appToken();
  });
  after(() => t.close());

  describe('access and parameters', () => {
    const paths = ['/search/categories', '/search/channels'];

    it('answers 401 without a token, before looking at the parameters', async () => {
      for (const p of paths) {
        const res = await t.get(`/helix${p}?first=0`);
        assert.equal(res.statusCode, 401, p);
        assert.equal(res.json().message, 'OAuth token is missing', p);
      }
    });

    it('takes an app token or a user token of anyone, with no scope', async () => {
      const user = await t.userToken([], (t.seed?.demoUserId as number) + 0);
      for (const p of paths)
        for (const tk of [token, user]) {
          const res = await t.get(`/helix${p}?query=a`, bearer(tk));
          assert.equal(res.statusCode, 200, `${p}: ${res.body}`);
        }
    });

    it('requires query: missing or empty is a 400 naming it; given twice, or too long, a 400 naming it', async () => {
      for (const p of paths) {
        for (const s of ['', '?query=', '?first=5']) {
          const res = await t.get(`/helix${p}${s}`, bearer(token));
          assert.equal(res.statusCode, 400, `${p}${s}`);
          assert.equal(res.json().message, QUERY_MISSING, `${p}${s}`);
        }
        const twice = await t.get(`/helix${p}?query=a&query=b`, bearer(token));
        assert.equal(twice.statusCode, 400);
        assert.equal(twice.json().message, 'The parameter "query" may be given only once');
        const long = await t.get(`/helix${p}?query=${'a'.repeat(257)}`, bearer(token));
        assert.equal(long.statusCode, 400);
        assert.match(long.json().message, /"query"/);
        const nul = await t.get(`/helix${p}?query=a%00b`, bearer(token));
        assert.equal(nul.statusCode, 400);
        assert.match(nul.json().message, /"query".*NUL/);
      }
    });

    it('takes first 1..100, default 20; anything else is a 400 naming first', async () => {
      // 20 games in all at this size: their page of 20 is checked by a channel search.
      const all = await t.get('/helix/search/channels?query=b', bearer(token));
      assert.equal(all.json().data.length, 20);
      for (const [p, query] of [
        ['/search/categories', 's'],
        ['/search/channels', 'b'],
      ] as const) {
        assert.equal((await t.get(`/helix${p}?query=${query}&first=3`, bearer(token))).json().data.length, 3);
        for (const f of ['0', '101', 'x', '', '2.5']) {
          const res = await t.get(`/helix${p}?query=${query}&first=${f}`, bearer(token));
          assert.equal(res.statusCode, 400, `${p} ${f}`);
          assert.match(res.json().message, /"first"/, f);
        }
      }
    });

    it('live_only is true or false in any letter case, default false; anything else a 400 naming it', async () => {
      const all = await t.get('/helix/search/channels?query=b&first=100', bearer(token));
      for (const v of ['false', 'FALSE', 'False']) {
        const res = await t.get(`/helix/search/channels?query=b&first=100&live_only=${v}`, bearer(token));
        assert.equal(res.body, all.body, v);
      }
      for (const v of ['true', 'TRUE']) {
        const res = await t.get(`/helix/search/channels?query=b&first=100&live_only=${v}`, bearer(token));
        assert.ok(
          res.json().data.every((c: Channel) => c.is_live),
          v,
        );
      }
      for (const v of ['1', 'yes', '']) {
        const res = await t.get(`/helix/search/channels?query=b&live_only=${v}`, bearer(token));
        assert.equal(res.statusCode, 400, v);
        assert.equal(
          res.json().message,
          'The parameter "live_only" was malformed: the value must be true or false',
        );
      }
    });

    it('refuses before with a 400: both operations page forward only', async () => {
      for (const p of paths) {
        const cursor = (await t.get(`/helix${p}?query=b&first=2`, bearer(token))).json().pagination.cursor;
        for (const s of [`&before=${cursor}`, '&before=x', `&after=${cursor}&before=${cursor}`]) {
          const res = await t.get(`/helix${p}?query=b${s}`, bearer(token));
          assert.equal(res.statusCode, 400, s);
          assert.equal(res.json().message, BEFORE_REFUSED, s);
        }
      }
    });

    it('a cursor serves its query in any letter case (and spacing, for channels), not another query, live_only or operation', async () => {
      const next = async (url: string) =>
        (await t.get(url, bearer(token))).json().pagination.cursor as string;
      const categories = await next('/helix/search/categories?query=s&first=2');
      const channels = await next('/helix/search/channels?query=b&first=2');
      const ok = [
        `/helix/search/categories?query=S&after=${categories}`,
        `/helix/search/categories?query=s%20&after=${categories}`,
        `/helix/search/channels?query=B&after=${channels}`,
        `/helix/search/channels?query=_b&live_only=false&after=${channels}`,
      ];
      for (const url of ok) assert.equal((await t.get(url, bearer(token))).statusCode, 200, url);
      const tampered = `${channels.slice(0, 5)}${channels[5] === 'A' ? 'B' : 'A'}${channels.slice(6)}`;
      const refused = [
        `/helix/search/categories?query=t&after=${categories}`,
        `/helix/search/categories?query=s&after=${channels}`,
        `/helix/search/channels?query=br&after=${channels}`,
        `/helix/search/channels?query=b&live_only=true&after=${channels}`,
        `/helix/search/channels?query=s&after=${categories}`,
        `/helix/search/channels?query=b&after=${tampered}`,
      ];
      for (const url of refused) {
        const res = await t.get(url, bearer(token));
        assert.equal(res.statusCode, 400, url);
        assert.equal(res.json().message, 'Invalid cursor.', url);
      }
    });

    it('is served at /mock too, and other methods are a 405', async () => {
      for (const p of paths) {
        const a = await t.get(`/helix${p}?query=b`, bearer(token));
        const b = await t.get(`/mock${p}?query=b`, bearer(token));
        assert.equal(b.statusCode, 200);
        assert.equal(b.body, a.body);
        const post = await t.inject({
          method: 'POST',
          url: `/helix${p}?query=b`,
          headers: { ...bearer(token), 'client-id': t.seed?.demoClientId as string },
        });
        assert.equal(post.statusCode, 405);
        assert.equal(post.headers.allow, 'GET, HEAD');
      }
    });
  });

  describe('golden answers', () => {
    // The same seed (1, 1,000 users) gives byte-identical bodies on both stores, cursors included.
    // UPDATE_GOLDEN=1 rewrites the files from the SQLite run. Before the tests below write.
    it('answers search-categories-first-page byte for byte', async () => {
      const res = await t.get('/helix/search/categories?query=s&first=4', bearer(token));
      assertGolden(kind, 'search-categories-first-page.json', res.body);
    });

    it('answers search-channels-first-page and search-channels-live-only byte for byte', async () => {
      const all = await t.get('/helix/search/channels?query=bra&first=4', bearer(token));
      assertGolden(kind, 'search-channels-first-page.json', all.body);
      const live = await t.get('/helix/search/channels?query=bra&first=3&live_only=true', bearer(token));
      assertGolden(kind, 'search-channels-live-only.json', live.body);
    });
  });

  describe('GET /search/categories', () => {
    it('lists the games whose name, or a word of it onwards, starts with the query, by the matched text then id', async () => {
      const names = (await t.store.db.selectFrom('games').select('name').orderBy('id').execute()).map(
        (g) => g.name,
      );
      const sample = names[7] as string;
      const words = sample.split(' ');
      const queries = [
        's',
        'a',
        'I',
        sample,
        sample.toUpperCase(),
        words[1] as string,
        `${words[0]} ${words[1]?.[0]}`,
      ];
      for (const query of queries) {
        const want = await expectedCategories(query);
        assert.ok(want.length > 0, `"${query}" finds something`);
        assert.deepEqual(await categoryIds(query), want, query);
      }
      assert.deepEqual(await categoryIds('zzqx'), []);
    });

    it("answers box_art_url (GET /games' picture at 52x72), name and id, in that order", async () => {
      const res = await t.get('/helix/search/categories?query=s&first=3', bearer(token));
      const data = res.json().data as Category[];
      assert.deepEqual(Object.keys(res.json()), ['data', 'pagination']);
      for (const c of data) {
        assert.deepEqual(Object.keys(c), ['box_art_url', 'name', 'id']);
        const game = (await t.get(`/helix/games?id=${c.id}`, bearer(token))).json().data[0];
        assert.equal(c.name, game.name);
        assert.equal(c.box_art_url, game.box_art_url.replace('{width}x{height}', '52x72'));
      }
    });

    it('a word starts after a space or other ASCII sign: "warcraft" and "of w" find World of Warcraft, "craft" does not', async () => {
      await write('POST', '/admin/games', { id: '995001', name: 'World of Warcraft' });
      await write('POST', '/admin/games', { id: '995002', name: 'Counter-Strike: Global Offensive' });
      await write('POST', '/admin/games', { id: '995003', name: 'Tetris' });
      await write('POST', '/admin/games', { id: '995004', name: 'Puyo Puyo Tetris' });
      for (const query of ['world', 'WARCRAFT', 'of w', 'world of warcraft']) {
        assert.ok((await categoryIds(query)).includes(995001), query);
      }
      assert.ok(!(await categoryIds('craft')).includes(995001));
      // Signs are matched as written: the space of the query is not the name's hyphen.
      for (const query of ['strike', 'counter-s', 'global', 'offensive', 'Counter-Strike: G'])
        assert.ok((await categoryIds(query)).includes(995002), query);
      for (const query of ['counter strike', 'strike global', '-strike'])
        assert.ok(!(await categoryIds(query)).includes(995002), query);
      // A name equal to the query and a last word equal to it come first, by id.
      assert.deepEqual((await categoryIds('tetris')).slice(0, 2), [995003, 995004]);
      for (const query of ['world', 'strike', 'tetris'])
        assert.deepEqual(await categoryIds(query), await expectedCategories(query), query);
    });

    it('lists a game once when several of its words match, at the first in the order', async () => {
      await write('POST', '/admin/games', { id: '995005', name: 'Fort Fortress Fortune' });
      const ids = await categoryIds('fort');
      assert.equal(ids.filter((id) => id === 995005).length, 1);
      assert.deepEqual(ids, await expectedCategories('fort'));
    });

    it('drops spaces at either end of the query; letters outside A-Z match only in the case written', async () => {
      await write('POST', '/admin/games', { id: '995006', name: 'Élan Vital' });
      assert.deepEqual(await categoryIds('  vital  '), await categoryIds('vital'));
      assert.ok((await categoryIds('ÉLAN')).includes(995006));
      assert.ok((await categoryIds('Élan')).includes(995006));
      assert.ok(!(await categoryIds('élan')).includes(995006));
      assert.deepEqual(await categoryIds('   '), []);
    });

    it('follows the games table at once: a new name, a renamed game, a deleted one', async () => {
      await write('POST', '/admin/games', { id: '995007', name: 'Quixotic Quest' });
      assert.deepEqual(await categoryIds('quixotic'), [995007]);
      await write('PATCH', '/admin/games/995007', { name: 'Zymurgy Quest' });
      assert.deepEqual(await categoryIds('quixotic'), []);
      assert.deepEqual(await categoryIds('zymurgy'), [995007]);
      assert.ok((await categoryIds('quest')).includes(995007));
      await write('DELETE', '/admin/games/995007');
      assert.deepEqual(await categoryIds('zymurgy'), []);
      assert.ok(!(await categoryIds('quest')).includes(995007));
    });

    for (const first of [1, 3, 7]) {
      it(`walking with after and first=${first} lists every match once, in order`, async () => {
        const { rows, pages } = await walk<Category>('/helix/search/categories?query=s', first);
        const want = await expectedCategories('s');
        assert.deepEqual(
          rows.map((c) => Number(c.id)),
          want,
        );
        assert.equal(pages, Math.ceil(want.length / first));
      });
    }
  });

  describe('GET /search/channels', () => {
    it('lists the channels whose login or display name starts with the query, by the matched name then id', async () => {
      const logins = (await t.store.db.selectFrom('users').select('login').orderBy('id').execute()).map(
        (u) => u.login,
      );
      const login = logins.find((l) => l.endsWith('_tv')) as string;
      for (const query of ['b', 'brave', 'BRAVE', login, login.toUpperCase(), login.slice(0, 4)]) {
        const want = await expectedChannels(query);
        assert.ok(want.length > 0, `"${query}" finds something`);
        assert.deepEqual(await channelIds(query), want, query);
      }
      assert.deepEqual(await channelIds('zzqx'), []);
    });

    it('lists a channel whose login is the query first', async () => {
      const users = await t.store.db.selectFrom('users').select(['id', 'login']).execute();
      // A login that is the start of another's.
      const short = users.find((u) => users.some((o) => o.login !== u.login && o.login.startsWith(u.login)));
      assert.ok(short, 'a login that starts another');
      assert.equal((await channelIds(short.login))[0], short.id);
    });

    it("answers each channel with its channel's title, game, language and tags (kept offline, a live stream's its stream's), in production's field order", async () => {
      const { rows } = await walk<Channel>('/helix/search/channels?query=b');
      const db = t.store.db;
      const streams = new Map(
        (
          await db
            .selectFrom('streams')
            .leftJoin('games', 'games.id', 'streams.game_id')
            .selectAll('streams')
            .select('games.name as game_name')
            .execute()
        ).map((s) => [s.user_id, s]),
      );
      const channels = new Map(
        (
          await db
            .selectFrom('channels')
            .leftJoin('games', 'games.id', 'channels.game_id')
            .selectAll('channels')
            .select('games.name as game_name')
            .execute()
        ).map((c) => [c.broadcaster_id, c]),
      );
      const users = new Map((await db.selectFrom('users').selectAll().execute()).map((u) => [u.id, u]));
      assert.ok(rows.some((c) => c.is_live) && rows.some((c) => !c.is_live), 'live and offline channels');
      assert.ok(
        rows.some((c) => !c.is_live && c.title !== '') && rows.some((c) => !channels.has(Number(c.id))),
        'offline channels with a title, and users who never set a channel',
      );
      for (const c of rows) {
        assert.deepEqual(Object.keys(c), [
          'broadcaster_language',
          'broadcaster_login',
          'display_name',
          'game_id',
          'game_name',
          'id',
          'is_live',
          'tag_ids',
          'tags',
          'thumbnail_url',
          'title',
          'started_at',
        ]);
        const u = users.get(Number(c.id));
        const s = streams.get(Number(c.id));
        const ch = channels.get(Number(c.id));
        assert.ok(u);
        // A live stream holds its channel's values: the same either way.
        if (s && ch)
          assert.deepEqual(
            [s.title, s.game_id, s.language, s.tags],
            [ch.title, ch.game_id, ch.language, ch.tags],
          );
        const want = {
          broadcaster_language: ch?.language ?? 'en',
          game_id: ch?.game_id == null ? '' : String(ch.game_id),
          game_name: ch?.game_name ?? '',
          is_live: s !== undefined,
          tags: JSON.parse(ch?.tags ?? '[]'),
          title: ch?.title ?? '',
          started_at: s ? new Date(s.started_at * 1000).toISOString().replace('.000Z', 'Z') : '',
        };
        assert.deepEqual(
          {
            ...c,
            broadcaster_login: undefined,
            display_name: undefined,
            id: undefined,
            thumbnail_url: undefined,
            tag_ids: undefined,
          },
          {
            ...want,
            broadcaster_login: undefined,
            display_name: undefined,
            id: undefined,
            thumbnail_url: undefined,
            tag_ids: undefined,
          },
        );
        assert.equal(c.broadcaster_login, u.login);
        assert.equal(c.display_name, u.display_name);
        assert.deepEqual(c.tag_ids, []);
      }
      // thumbnail_url is the channel's profile picture, as GET /users shows it.
      const first = rows[0] as Channel;
      const user = (await t.get(`/helix/users?id=${first.id}`, bearer(token))).json().data[0];
      assert.equal(first.thumbnail_url, user.profile_image_url);
    });

    it('live_only=true lists the live channels only, in the same order', async () => {
      for (const query of ['b', 'c', 'brave']) {
        const want = await expectedChannels(query, true);
        assert.ok(want.length > 0, query);
        assert.deepEqual(await channelIds(query, true), want, query);
      }
    });

    it('ignores spaces and "_": "angel of death" finds angel_of_death and angelofdeath2', async () => {
      await newUser('995101', 'angel_of_death', 'Angel_of_Death');
      await newUser('995102', 'angelofdeath2', 'AngelOfDeath2');
      await newUser('995103', 'angel_ofdusk', 'angel_ofdusk');
      for (const query of ['angel of death', 'ANGEL_OF_DEATH', 'angelofdeath', 'angel ofd e'])
        assert.deepEqual(
          (await channelIds(query)).filter((id) => id > 995100),
          [995101, 995102],
          query,
        );
      assert.deepEqual(await channelIds('___'), []);
      assert.deepEqual(await channelIds(' '), []);
    });

    it('finds a channel by a display name unlike its login, and lists it once when both match', async () => {
      await newUser('995104', 'qqlogin', 'QqDisplay');
      assert.deepEqual(await channelIds('qqd'), [995104]);
      assert.deepEqual(await channelIds('qql'), [995104]);
      assert.deepEqual(await channelIds('qq'), [995104]);
      await newUser('995105', 'vxfirst', 'Éclair');
      assert.deepEqual(await channelIds('Éclair'), [995105]);
      assert.deepEqual(await channelIds('ÉCLAIR'), [995105]);
      assert.deepEqual(await channelIds('éclair'), []);
      // Only the first 100 characters of a name and of a query count.
      const long = `Long${'x'.repeat(120)}`;
      await newUser('995106', 'longname', long);
      assert.deepEqual(await channelIds(long.slice(0, 110)), [995106]);
      assert.deepEqual(await channelIds(`${long.slice(0, 100)}zzz`), [995106]);
    });

    it('follows writes at once: going live and offline, a new display name, a deleted user', async () => {
      await newUser('995107', 'wobbegong', 'Wobbegong');
      const channel = async () =>
        (await t.get('/helix/search/channels?query=wobbe', bearer(token))).json().data as Channel[];
      assert.equal((await channel())[0]?.is_live, false);
      assert.deepEqual(await channelIds('wobbe', true), []);
      const game = await t.store.db
        .selectFrom('games')
        .select(['id', 'name'])
        .orderBy('id')
        .executeTakeFirstOrThrow();
      await write('POST', '/admin/streams', {
        id: '96000007',
        user_id: '995107',
        game_id: String(game.id),
        title: 'Shark week',
        tags: ['Sharks'],
        viewer_count: 12,
        started_at: '2026-06-15T11:00:00Z',
        language: 'de',
        is_mature: false,
      });
      assert.deepEqual(await channelIds('wobbe', true), [995107]);
      const live = (await channel())[0] as Channel;
      assert.equal(live.is_live, true);
      assert.equal(live.title, 'Shark week');
      assert.equal(live.game_id, String(game.id));
      assert.equal(live.game_name, game.name);
      assert.equal(live.broadcaster_language, 'de');
      assert.deepEqual(live.tags, ['Sharks']);
      assert.equal(live.started_at, '2026-06-15T11:00:00Z');
      await write('PATCH', '/admin/users/995107', { display_name: 'Carpetshark' });
      assert.deepEqual(await channelIds('carpet', true), [995107]);
      assert.deepEqual(await channelIds('wobbe'), [995107], 'still by its login');
      await write('DELETE', '/admin/streams/96000007');
      assert.deepEqual(await channelIds('carpet', true), []);
      assert.equal((await channel())[0]?.is_live, false);
      await write('DELETE', '/admin/users/995107');
      assert.deepEqual(await channelIds('wobbe'), []);
      assert.deepEqual(await channelIds('carpet'), []);
    });

    for (const first of [1, 3, 7]) {
      it(`walking with after and first=${first} lists every match once, in order (live_only too)`, async () => {
        for (const liveOnly of [false, true]) {
          const want = await expectedChannels('brave', liveOnly);
          assert.deepEqual(await channelIds('brave', liveOnly, first), want);
        }
      });
    }
  });
});
