// Twurple 8 against a listening helixd whose clock the test drives (POST /admin/clock), in mock
// mode (test/clients/twurple.ts). Time passes for helixd alone: Twurple's own reckoning still holds
// its user token live, so the 401 of the expired token is what makes it refresh, by itself, and
// repeat the call. A report URL Twurple fetched expires as production's
// does once 5 minutes of server time have passed.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ApiClient } from '@twurple/api';
import { type AccessToken, RefreshingAuthProvider } from '@twurple/auth';
import { forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';
import { authorizeUser, type DemoClient, pointTwurpleAt, twurpleToken } from './twurple.ts';

const ADMIN_TOKEN = 'twurple-clock-admin-token-0123456789-01';

forEachStore('Twurple against helixd with a driven clock', (kind: StoreKind) => {
  let t: TestApp;
  let base: string;
  let client: DemoClient;
  let restore: () => void;

  before(async () => {
    t = await startTestApp(kind, { users: 30, config: { adminToken: ADMIN_TOKEN } });
    ({ base, client, restore } = await pointTwurpleAt(t));
  });
  after(async () => {
    restore?.();
    await t.close();
  });

  /** Moves helixd's clock forward by `advance` (`90s`, `4h`) through the admin API. */
  async function advance(by: string): Promise<void> {
    const res = await fetch(`${base}/admin/clock`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ advance: by }),
    });
    assert.equal(res.status, 200, await res.text());
  }

  /** A provider holding a user token (and its refresh token) of the demo broadcaster from helixd. */
  async function providerWithUser(scope: string) {
    const minted = await authorizeUser(base, client, String(t.seed?.demoUserId), scope);
    const provider = new RefreshingAuthProvider({ clientId: client.id, clientSecret: client.secret });
    const refreshes: AccessToken[] = [];
    provider.onRefresh((_userId, token) => refreshes.push(token));
    const userId = await provider.addUserForToken(twurpleToken(minted));
    return { provider, refreshes, userId, minted };
  }

  it('refreshes an expired user token by itself and repeats the call', async () => {
    const { provider, refreshes, userId, minted } = await providerWithUser('user:read:broadcast');
    const api = new ApiClient({ authProvider: provider });
    const top = () => api.asUser(userId, (ctx) => ctx.games.getTopGames({ limit: 2 }));
    assert.equal((await top()).data.length, 2);
    assert.equal(refreshes.length, 0, 'a live token needs no refresh');

    await advance(`${minted.expires_in}s`);
    const old = await fetch(`${base}/mock/games/top`, {
      headers: { authorization: `Bearer ${minted.access_token}`, 'client-id': client.id },
    });
    assert.equal(old.status, 401, 'helixd holds the token expired');

    assert.equal((await top()).data.length, 2, 'the call succeeds after the refresh');
    assert.equal(refreshes.length, 1, 'Twurple refreshed the token by itself');
    const fresh = refreshes[0] as AccessToken;
    assert.notEqual(fresh.accessToken, minted.access_token);
    assert.notEqual(fresh.refreshToken, minted.refresh_token);
    assert.equal(fresh.expiresIn, minted.expires_in);
    // The next call goes out with the new token: no second refresh.
    assert.equal((await top()).data.length, 2);
    assert.equal(refreshes.length, 1);
  });

  it('a report URL it fetched expires after 5 minutes of server time', async () => {
    const { provider, userId } = await providerWithUser('analytics:read:games');
    const api = new ApiClient({ authProvider: provider });
    // Twurple 8 has no analytics methods: its generic call, with the user's token.
    const reports = await api.callApi<{ data: { game_id: string; URL: string }[] }>({
      type: 'helix',
      url: 'analytics/games',
      userId,
      scopes: ['analytics:read:games'],
      query: { first: '1' },
    });
    const url = new URL(reports.data[0]?.URL ?? '');
    const download = () => fetch(`${base}${url.pathname}${url.search}`);
    const fine = await download();
    assert.equal(fine.status, 200, await fine.text());

    await advance('5m');
    const expired = await download();
    assert.equal(expired.status, 403);
    const body = await expired.json();
    assert.equal(body.status, 403);
    assert.match(body.message, /^The report URL expired at .* \(report URLs are valid for 5 minutes\)/);
  });
});
