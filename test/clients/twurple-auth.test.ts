// Twurple 8 (@twurple/api, @twurple/auth) against a real listening helixd in mock mode: with
// TWURPLE_MOCK_API_PORT set it sends API calls to /mock/* and token calls to /auth/*, and gets every
// credential from helixd itself (/units/clients, /auth/token, /auth/authorize).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ApiClient } from '@twurple/api';
import {
  AppTokenAuthProvider,
  getTokenInfo,
  InvalidTokenError,
  RefreshingAuthProvider,
  revokeToken,
} from '@twurple/auth';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';
import { authorizeUser, type DemoClient, pointTwurpleAt, twurpleToken } from './twurple.ts';

forEachStore('Twurple against helixd in mock mode', (kind: StoreKind) => {
  let t: TestApp;
  let base: string;
  let client: DemoClient;
  let restore: () => void;

  /** The top games as helixd serves them, every page. */
  async function allTopGameIds(): Promise<string[]> {
    const token = await t.appToken();
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await t.get(`/helix/games/top?first=100${cursor ? `&after=${cursor}` : ''}`, bearer(token));
      ids.push(...res.json().data.map((g: { id: string }) => g.id));
      cursor = res.json().pagination.cursor;
    } while (cursor);
    return ids;
  }

  before(async () => {
    t = await startTestApp(kind, { config: { rateLimit: 800 } });
    ({ base, client, restore } = await pointTwurpleAt(t));
  });
  after(async () => {
    restore?.();
    await t.close();
  });

  it('gets an app token with the demo client credentials and reads the top games', async () => {
    const api = new ApiClient({ authProvider: new AppTokenAuthProvider(client.id, client.secret) });
    const page = await api.games.getTopGames({ limit: 5 });
    const expected = await allTopGameIds();
    assert.deepEqual(
      page.data.map((g) => g.id),
      expected.slice(0, 5),
    );
    assert.ok(page.data[0]?.name);
    assert.match(page.data[0]?.getBoxArtUrl(52, 72) ?? '', /52x72/);
    const all = await api.games.getTopGamesPaginated().getAll();
    assert.deepEqual(
      all.map((g) => g.id),
      expected,
    );
  });

  it('reads its app token through /auth/validate: no user', async () => {
    const provider = new AppTokenAuthProvider(client.id, client.secret);
    const token = await provider.getAppAccessToken();
    const info = await getTokenInfo(token.accessToken, client.id);
    assert.equal(info.clientId, client.id);
    assert.equal(info.userId, null);
    assert.deepEqual(info.scopes, []);
  });

  it('uses a user token from POST /auth/authorize, refreshes it and revokes it', async () => {
    const demoId = String(t.seed?.demoUserId);
    const minted = await authorizeUser(base, client, demoId, 'user:read:broadcast');
    const provider = new RefreshingAuthProvider({ clientId: client.id, clientSecret: client.secret });
    const userId = await provider.addUserForToken(twurpleToken(minted));
    assert.equal(userId, demoId, 'Twurple learnt the user from /auth/validate');
    assert.deepEqual(provider.getCurrentScopesForUser(userId), ['user:read:broadcast']);

    const api = new ApiClient({ authProvider: provider });
    const top = await api.asUser(userId, (ctx) => ctx.games.getTopGames({ limit: 3 }));
    assert.equal(top.data.length, 3);

    const refreshed = await provider.refreshAccessTokenForUser(userId);
    assert.notEqual(refreshed.accessToken, minted.access_token);
    assert.notEqual(refreshed.refreshToken, minted.refresh_token);
    const again = await api.asUser(userId, (ctx) => ctx.games.getTopGames({ limit: 1 }));
    assert.equal(again.data.length, 1);

    await revokeToken(client.id, refreshed.accessToken);
    await assert.rejects(getTokenInfo(refreshed.accessToken, client.id), InvalidTokenError);
    const res = await fetch(`${base}/mock/games/top`, {
      headers: { authorization: `Bearer ${refreshed.accessToken}`, 'client-id': client.id },
    });
    assert.equal(res.status, 401);
  });
});
