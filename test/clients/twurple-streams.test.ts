// Twurple 8 (@twurple/api) reads GET /streams from a real listening helixd: with
// TWURPLE_MOCK_API_PORT set it sends every API call to http://localhost:<port>/mock/... The
// HelixStream objects it parses are checked field by field against the store, through the plain
// method (one page, with filters, and walking back with `before`), the paginator (every page,
// following the cursors) and the one-stream look-ups by login and by id.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ApiClient, type HelixStream } from '@twurple/api';
import { AppTokenAuthProvider, StaticAuthProvider } from '@twurple/auth';
import type { StreamRow, UserRow } from '../../src/store/schema.ts';
import { rfc3339 } from '../../src/wire/datetime.ts';
import { forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';

const SITE = 'https://streams.example.com';

forEachStore('Twurple reads GET /streams from helixd', (kind: StoreKind) => {
  let t: TestApp;
  let api: ApiClient;
  let streams: StreamRow[];
  let users: Map<number, UserRow>;
  let gameNames: Map<number, string>;
  const previousPort = process.env.TWURPLE_MOCK_API_PORT;

  before(async () => {
    // 1,000 users: 150 live streams, so the paginator follows cursors over two pages of 100.
    t = await startTestApp(kind, { users: 1000 });
    // Twurple calls http://localhost:<port>: listen on every address localhost names.
    await t.app.listen({ port: 0, host: 'localhost' });
    const addr = t.app.server.address();
    // Set before the ApiClient is built: Twurple reads it for each call's URL.
    process.env.TWURPLE_MOCK_API_PORT = String(typeof addr === 'object' && addr ? addr.port : 0);
    // An app token, as Twurple gets one from the client credentials: Get Streams needs no user and
    // no scope. (The demo client's secret is kept in the store for demos.)
    const client = await t.store.db
      .selectFrom('clients')
      .select(['id', 'demo_secret'])
      .where('id', '=', t.seed?.demoClientId as string)
      .executeTakeFirstOrThrow();
    api = new ApiClient({ authProvider: new AppTokenAuthProvider(client.id, client.demo_secret as string) });
    streams = (await t.store.db.selectFrom('streams').selectAll().execute()).sort(
      (a, b) => b.viewer_count - a.viewer_count || b.id - a.id,
    );
    users = new Map((await t.store.db.selectFrom('users').selectAll().execute()).map((u) => [u.id, u]));
    gameNames = new Map(
      (await t.store.db.selectFrom('games').select(['id', 'name']).execute()).map((g) => [g.id, g.name]),
    );
  });
  after(async () => {
    if (previousPort === undefined) delete process.env.TWURPLE_MOCK_API_PORT;
    else process.env.TWURPLE_MOCK_API_PORT = previousPort;
    await t.close();
  });

  const check = (got: HelixStream[], rows: StreamRow[]) => {
    assert.equal(got.length, rows.length);
    got.forEach((s, i) => {
      const r = rows[i] as StreamRow;
      const u = users.get(r.user_id) as UserRow;
      assert.deepEqual(
        {
          id: s.id,
          userId: s.userId,
          userName: s.userName,
          userDisplayName: s.userDisplayName,
          gameId: s.gameId,
          gameName: s.gameName,
          type: s.type,
          title: s.title,
          viewers: s.viewers,
          startDate: s.startDate.toISOString().replace('.000Z', 'Z'),
          language: s.language,
          thumbnailUrl: s.getThumbnailUrl(320, 180),
          tags: s.tags,
          isMature: s.isMature,
        },
        {
          id: String(r.id),
          userId: String(r.user_id),
          userName: u.login,
          userDisplayName: u.display_name,
          gameId: String(r.game_id),
          gameName: gameNames.get(r.game_id),
          type: 'live',
          title: r.title,
          viewers: r.viewer_count,
          startDate: rfc3339(r.started_at),
          language: r.language,
          thumbnailUrl: `${SITE}/media/previews/live_user_${u.login}-320x180.jpg`,
          tags: JSON.parse(r.tags),
          isMature: r.is_mature === 1,
        },
      );
    });
  };

  it('getStreams: one page, most viewers first, with a cursor', async () => {
    const page = await api.streams.getStreams({ limit: 7 });
    check(page.data, streams.slice(0, 7));
    assert.ok(page.cursor);
  });

  it('getStreams with filters: games, languages, user ids and logins', async () => {
    const games = [...new Set(streams.map((s) => s.game_id))].slice(0, 6);
    const byGame = await api.streams.getStreams({ game: games.map(String), limit: 100 });
    check(
      byGame.data,
      streams.filter((s) => games.includes(s.game_id)),
    );
    const languages = ['de', 'es'];
    const byLanguage = await api.streams.getStreams({ language: languages, limit: 100 });
    check(
      byLanguage.data,
      streams.filter((s) => languages.includes(s.language)),
    );
    const some = [streams[9], streams[1], streams[30]] as StreamRow[];
    const byUsers = await api.streams.getStreams({
      userId: [String(some[0]?.user_id)],
      userName: [
        users.get(some[1]?.user_id as number)?.login as string,
        users.get(some[2]?.user_id as number)?.login as string,
      ],
    });
    check(byUsers.data, [streams[1], streams[9], streams[30]] as StreamRow[]);
  });

  it('getStreamsPaginated: every live stream over every page, and with a game filter', async () => {
    assert.ok(streams.length > 100);
    check(await api.streams.getStreamsPaginated().getAll(), streams);
    const game = streams[0]?.game_id as number;
    check(
      await api.streams.getStreamsPaginated({ game: String(game) }).getAll(),
      streams.filter((s) => s.game_id === game),
    );
  });

  it('getStreamByUserName and getStreamByUserId: the live stream, or null for a user who is not live', async () => {
    const live = streams[5] as StreamRow;
    const login = users.get(live.user_id)?.login as string;
    check([(await api.streams.getStreamByUserName(login)) as HelixStream], [live]);
    check([(await api.streams.getStreamByUserId(String(live.user_id))) as HelixStream], [live]);
    const offline = [...users.values()].find((u) => !streams.some((s) => s.user_id === u.id)) as UserRow;
    assert.equal(await api.streams.getStreamByUserName(offline.login), null);
    assert.equal(await api.streams.getStreamByUserId(String(offline.id)), null);
  });

  it('a user token works as well: getStreams through a user-token provider', async () => {
    const userApi = new ApiClient({
      authProvider: new StaticAuthProvider(t.seed?.demoClientId as string, await t.userToken([])),
    });
    check((await userApi.streams.getStreams({ limit: 3 })).data, streams.slice(0, 3));
  });

  it('getStreams({ before: cursor }) walks back: page N-1 exactly', async () => {
    const p1 = await api.streams.getStreams({ limit: 6 });
    const p2 = await api.streams.getStreams({ limit: 6, after: p1.cursor as string });
    const p3 = await api.streams.getStreams({ limit: 6, after: p2.cursor as string });
    check(p3.data, streams.slice(12, 18));
    const back2 = await api.streams.getStreams({ limit: 6, before: p3.cursor as string });
    check(back2.data, streams.slice(6, 12));
    const back1 = await api.streams.getStreams({ limit: 6, before: back2.cursor as string });
    check(back1.data, streams.slice(0, 6));
    // nothing lies before the first page
    assert.equal(back1.cursor, undefined);
  });
});
