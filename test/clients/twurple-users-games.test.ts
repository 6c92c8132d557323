// Twurple 8 (@twurple/api) looks users and games up in a real listening helixd, as every real
// program does first: with TWURPLE_MOCK_API_PORT set it sends each call to
// http://localhost:<port>/mock/... Every field of the objects it parses is checked against the store.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ApiClient, type HelixGame, type HelixUser } from '@twurple/api';
import { StaticAuthProvider } from '@twurple/auth';
import type { GameRow, UserRow } from '../../src/store/schema.ts';
import { forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';

const SITE = 'https://streams.example.com';

forEachStore('Twurple looks users and games up in helixd', (kind: StoreKind) => {
  let t: TestApp;
  let api: ApiClient;
  let users: UserRow[];
  let games: GameRow[];
  let demo: UserRow;
  const previousPort = process.env.TWURPLE_MOCK_API_PORT;

  before(async () => {
    t = await startTestApp(kind);
    // Twurple calls http://localhost:<port>: listen on every address localhost names.
    await t.app.listen({ port: 0, host: 'localhost' });
    const addr = t.app.server.address();
    // Set before the ApiClient is built: Twurple reads it for each call's URL.
    process.env.TWURPLE_MOCK_API_PORT = String(typeof addr === 'object' && addr ? addr.port : 0);
    const token = await t.userToken(['user:read:email']);
    api = new ApiClient({ authProvider: new StaticAuthProvider(t.seed?.demoClientId as string, token) });
    users = await t.store.db.selectFrom('users').selectAll().orderBy('id').execute();
    games = await t.store.db.selectFrom('games').selectAll().orderBy('id').execute();
    demo = users.find((u) => u.id === t.seed?.demoUserId) as UserRow;
  });
  after(async () => {
    if (previousPort === undefined) delete process.env.TWURPLE_MOCK_API_PORT;
    else process.env.TWURPLE_MOCK_API_PORT = previousPort;
    await t.close();
  });

  const user = (i: number) => users[i] as UserRow;
  const game = (i: number) => games[i] as GameRow;

  /** Every field a HelixUser exposes, against the row. */
  const checkUser = (u: HelixUser | null, r: UserRow) => {
    assert.ok(u, `user ${r.login} not found`);
    assert.deepEqual(
      {
        id: u.id,
        name: u.name,
        displayName: u.displayName,
        description: u.description,
        type: u.type,
        broadcasterType: u.broadcasterType,
        profilePictureUrl: u.profilePictureUrl,
        offlinePlaceholderUrl: u.offlinePlaceholderUrl,
        creationDate: u.creationDate.getTime(),
      },
      {
        id: String(r.id),
        name: r.login,
        displayName: r.display_name,
        description: r.description,
        type: '',
        broadcasterType: r.broadcaster_type,
        profilePictureUrl: `${SITE}/media/users/${r.id}/profile-300x300.png`,
        offlinePlaceholderUrl: `${SITE}/media/users/${r.id}/offline-1920x1080.png`,
        creationDate: r.created_at * 1000,
      },
    );
  };

  /** Every field a HelixGame exposes, against the row (Twurple reads an unknown IGDB id as null). */
  const checkGame = (g: HelixGame | null, r: GameRow) => {
    assert.ok(g, `game ${r.name} not found`);
    assert.deepEqual(
      { id: g.id, name: g.name, boxArtUrl: g.boxArtUrl, igdbId: g.igdbId },
      {
        id: String(r.id),
        name: r.name,
        boxArtUrl: `${SITE}/media/box-art/${r.id}-{width}x{height}.jpg`,
        igdbId: r.igdb_id || null,
      },
    );
  };

  it('users by name: getUserByName and getUsersByNames match the store; an unknown name is null', async () => {
    checkUser(await api.users.getUserByName(user(3).login), user(3));
    checkUser(await api.users.getUserByName(user(4).login.toUpperCase()), user(4));
    assert.equal(await api.users.getUserByName('nosuchuser'), null);
    const rows = [user(10), user(2), user(7)];
    const found = await api.users.getUsersByNames(rows.map((r) => r.login));
    assert.equal(found.length, rows.length);
    found.forEach((u, i) => {
      checkUser(u, rows[i] as UserRow);
    });
  });

  it('users by id: getUserById and getUsersByIds match the store; an unknown id is null', async () => {
    checkUser(await api.users.getUserById(String(user(5).id)), user(5));
    assert.equal(await api.users.getUserById('1'), null);
    const rows = users.slice(20, 120);
    const found = await api.users.getUsersByIds(rows.map((r) => String(r.id)));
    assert.equal(found.length, 100);
    found.forEach((u, i) => {
      checkUser(u, rows[i] as UserRow);
    });
  });

  it('batched look-ups (getUserByNameBatched, getUserByIdBatched) resolve each user', async () => {
    const rows = users.slice(40, 45);
    const byName = await Promise.all(rows.map((r) => api.users.getUserByNameBatched(r.login)));
    const byId = await Promise.all(rows.map((r) => api.users.getUserByIdBatched(String(r.id))));
    rows.forEach((r, i) => {
      checkUser(byName[i] ?? null, r);
      checkUser(byId[i] ?? null, r);
    });
  });

  it("the authenticated user's own lookup: getAuthenticatedUser with its email (user:read:email)", async () => {
    const me = await api.users.getAuthenticatedUser(String(demo.id), true);
    checkUser(me, demo);
    assert.equal(me.email, demo.email);
    assert.match(me.email as string, /^[a-z0-9_]+@example\.com$/);
  });

  it('games by name: getGameByName and getGamesByNames match the store; an unknown name is null', async () => {
    checkGame(await api.games.getGameByName(game(3).name), game(3));
    assert.equal(await api.games.getGameByName('No such game'), null);
    const rows = [game(9), game(1), game(30)];
    const found = await api.games.getGamesByNames(rows.map((r) => r.name));
    assert.equal(found.length, rows.length);
    found.forEach((g, i) => {
      checkGame(g, rows[i] as GameRow);
    });
  });

  it('games by id: getGameById and getGamesByIds match the store', async () => {
    checkGame(await api.games.getGameById(String(game(6).id)), game(6));
    assert.equal(await api.games.getGameById('1'), null);
    const found = await api.games.getGamesByIds(games.map((r) => String(r.id)));
    assert.equal(found.length, games.length);
    found.forEach((g, i) => {
      checkGame(g, games[i] as GameRow);
    });
  });

  it('games by IGDB id: getGameByIgdbId and getGamesByIgdbIds match the store', async () => {
    const known = games.filter((g) => g.igdb_id !== '');
    checkGame(await api.games.getGameByIgdbId((known[0] as GameRow).igdb_id), known[0] as GameRow);
    const rows = known.slice(1, 6);
    const found = await api.games.getGamesByIgdbIds(rows.map((r) => r.igdb_id));
    assert.equal(found.length, rows.length);
    found.forEach((g, i) => {
      checkGame(g, rows[i] as GameRow);
    });
  });

  it('batched game look-ups (getGameByNameBatched, getGameByIdBatched) resolve each game', async () => {
    const rows = games.slice(10, 15);
    const byName = await Promise.all(rows.map((r) => api.games.getGameByNameBatched(r.name)));
    const byId = await Promise.all(rows.map((r) => api.games.getGameByIdBatched(String(r.id))));
    rows.forEach((r, i) => {
      checkGame(byName[i] ?? null, r);
      checkGame(byId[i] ?? null, r);
    });
  });
});
