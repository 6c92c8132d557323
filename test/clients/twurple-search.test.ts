// Twurple 8 (@twurple/api) searches categories and channels (`api.search.searchCategories`,
// `api.search.searchChannels` and their paginators) through the library itself against a real
// listening helixd (TWURPLE_MOCK_API_PORT sends every call to http://localhost:<port>/mock/...).
// What it parses is checked against other reads: the same search over HTTP, GET /games, GET
// /channels, GET /streams and GET /users, and the relations Twurple follows from a result (its user, its game).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ApiClient } from '@twurple/api';
import { StaticAuthProvider } from '@twurple/auth';
import { rfc3339 } from '../../src/wire/datetime.ts';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';
import { pointTwurpleAt } from './twurple.ts';

forEachStore('Twurple searches categories and channels on helixd', (kind: StoreKind) => {
  let t: TestApp;
  let api: ApiClient;
  let token: string;
  let restore: () => void;

  const read = async (url: string) => {
    const res = await t.get(url, bearer(token));
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data as Record<string, unknown>[];
  };

  before(async () => {
    t = await startTestApp(kind, { users: 1000 });
    token = await t.appToken();
    // A user token with no scope: the searches ask for none (Twurple's StaticAuthProvider takes user tokens).
    const user = await t.userToken([]);
    api = new ApiClient({ authProvider: new StaticAuthProvider(t.seed?.demoClientId as string, user) });
    ({ restore } = await pointTwurpleAt(t));
  });
  after(async () => {
    restore?.();
    await t.close();
  });

  it('searchCategories: the games of GET /search/categories, each as GET /games has it, box art at 52x72', async () => {
    const got = await api.search.searchCategories('s');
    const wire = await read('/helix/search/categories?query=s');
    assert.ok(got.data.length >= 5, `${got.data.length} games`);
    assert.deepEqual(
      got.data.map((g) => g.id),
      wire.map((g) => g.id),
    );
    for (const g of got.data) {
      const [game] = await read(`/helix/games?id=${g.id}`);
      assert.equal(g.name, game?.name);
      assert.equal(g.boxArtUrl, String(game?.box_art_url).replace('{width}x{height}', '52x72'));
      // Production's search answers a sized URL: Twurple's resizing leaves it as it is.
      assert.equal(g.getBoxArtUrl(285, 380), g.boxArtUrl);
    }
  });

  it('searchCategories pages with its cursor, and searchCategoriesPaginated walks them all, in order', async () => {
    const all = (await api.search.searchCategories('s', { limit: 100 })).data.map((g) => g.id);
    const seen: string[] = [];
    let after: string | undefined;
    do {
      const page = await api.search.searchCategories('s', { limit: 3, after });
      assert.ok(page.data.length <= 3);
      seen.push(...page.data.map((g) => g.id));
      after = page.cursor;
    } while (after);
    assert.deepEqual(seen, all);
    const walked = await api.search.searchCategoriesPaginated('S').getAll();
    assert.deepEqual(
      walked.map((g) => g.id),
      all,
    );
  });

  it("searchChannels: each channel as GET /channels has it (a live one's also as GET /streams has it); names as GET /users", async () => {
    const got = await api.search.searchChannels('bra', { limit: 100 });
    assert.ok(got.data.some((c) => c.isLive) && got.data.some((c) => !c.isLive), 'live and offline channels');
    const ids = got.data.map((c) => c.id);
    const users = new Map(
      (await read(`/helix/users?${ids.map((i) => `id=${i}`).join('&')}`)).map((u) => [u.id, u]),
    );
    const channels = new Map(
      (await read(`/helix/channels?${ids.map((i) => `broadcaster_id=${i}`).join('&')}`)).map((ch) => [
        ch.broadcaster_id,
        ch,
      ]),
    );
    const live = got.data.filter((c) => c.isLive);
    const streams = new Map(
      (await read(`/helix/streams?${live.map((c) => `user_id=${c.id}`).join('&')}&first=100`)).map((s) => [
        s.user_id,
        s,
      ]),
    );
    assert.ok(
      got.data.some((c) => !c.isLive && c.gameId !== ''),
      'an offline channel that keeps its game',
    );
    for (const c of got.data) {
      const u = users.get(c.id);
      assert.equal(c.name, u?.login);
      assert.equal(c.displayName, u?.display_name);
      assert.equal(c.thumbnailUrl, u?.profile_image_url);
      const ch = channels.get(c.id);
      assert.ok(ch, `${c.name} is in GET /channels`);
      assert.equal(c.gameId, ch.game_id);
      assert.equal(c.gameName, ch.game_name);
      assert.equal(c.language, ch.broadcaster_language);
      assert.deepEqual(c.tags, ch.tags);
      const s = streams.get(c.id);
      if (c.isLive) {
        assert.ok(s, `${c.name} is in GET /streams`);
        assert.deepEqual([s.game_id, s.language, s.tags], [ch.game_id, ch.broadcaster_language, ch.tags]);
        assert.equal(rfc3339((c.startDate as Date).getTime() / 1000), s.started_at);
      } else {
        assert.equal(s, undefined);
        assert.equal(c.startDate, null);
        if (c.gameId !== '') assert.equal((await c.getGame())?.id, c.gameId);
      }
    }
    const first = got.data.find((c) => c.isLive);
    assert.equal((await first?.getUser())?.name, first?.name);
    assert.equal((await first?.getGame())?.id, first?.gameId);
  });

  it('searchChannels with liveOnly lists the live ones in the same order; searchChannelsPaginated walks them all', async () => {
    const all = await api.search.searchChannels('b', { limit: 100 });
    const liveOnly = await api.search.searchChannels('b', { liveOnly: true, limit: 100 });
    assert.deepEqual(
      liveOnly.data.map((c) => c.id),
      all.data.filter((c) => c.isLive).map((c) => c.id),
    );
    const walked = await api.search.searchChannelsPaginated('b', { liveOnly: true }).getAll();
    assert.deepEqual(
      walked.map((c) => c.id),
      liveOnly.data.map((c) => c.id),
    );
    const exact = (await api.search.searchChannels(all.data[0]?.name as string)).data[0];
    assert.equal(exact?.id, all.data[0]?.id, 'a login that is the query comes first');
  });
});
