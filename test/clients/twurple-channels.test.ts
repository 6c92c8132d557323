// Twurple 8 (@twurple/api) reads and changes a channel through the library itself against a real
// listening helixd (mock mode): `api.channels.getChannelInfoById` and `getChannelInfoByIds`, and
// `api.channels.updateChannelInfo`, checked by a read through Twurple afterwards (the channel, and
// the live stream that holds its title, game, language and tags).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ApiClient } from '@twurple/api';
import { StaticAuthProvider } from '@twurple/auth';
import { forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';
import { pointTwurpleAt } from './twurple.ts';

const ADMIN_TOKEN = 'admin-token-0123456789-0123456789-abcdef';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
const STREAMER = 998001;
const GAMES = { first: '998500', second: '998501' };

forEachStore('Twurple reads and changes a channel', (kind: StoreKind) => {
  let t: TestApp;
  let restore: () => void;

  async function clientOf(scopes: string[], userId = STREAMER): Promise<ApiClient> {
    const token = await t.userToken(scopes, userId);
    return new ApiClient({ authProvider: new StaticAuthProvider(t.seed?.demoClientId as string, token) });
  }
  const adminPost = async (path: string, body: object) => {
    const res = await t.inject({ method: 'POST', url: path, headers: admin, payload: JSON.stringify(body) });
    assert.equal(res.statusCode, 201, res.body);
  };

  before(async () => {
    t = await startTestApp(kind, { users: 20, config: { adminToken: ADMIN_TOKEN } });
    for (const [name, id] of Object.entries(GAMES))
      await adminPost('/admin/games', { id, name: `Twurple ${name}` });
    await adminPost('/admin/users', {
      id: String(STREAMER),
      login: 'twurple_streamer',
      display_name: 'Twurple_Streamer',
      broadcaster_type: 'partner',
      description: '',
      created_at: '2024-01-01T00:00:00Z',
    });
    ({ restore } = await pointTwurpleAt(t));
  });
  after(async () => {
    restore?.();
    await t.close();
  });

  it("getChannelInfoById: a new account's channel; updateChannelInfo, then getChannelInfoById shows every field", async () => {
    // Another user's token: it reads the delay as 0.
    const reader = await clientOf([], t.seed?.demoUserId as number);
    const fresh = await reader.channels.getChannelInfoById(STREAMER);
    assert.ok(fresh);
    assert.deepEqual(
      [fresh.name, fresh.displayName, fresh.title, fresh.gameId, fresh.language, fresh.tags],
      ['twurple_streamer', 'Twurple_Streamer', '', '', 'en', []],
    );
    const api = await clientOf(['channel:manage:broadcast']);
    await api.channels.updateChannelInfo(STREAMER, {
      title: 'Set by Twurple',
      gameId: GAMES.first,
      language: 'de',
      tags: ['Twurple', 'Chill'],
      delay: 15,
      isBrandedContent: true,
    });
    const read = await reader.channels.getChannelInfoById(STREAMER);
    assert.ok(read);
    assert.deepEqual(
      [read.title, read.gameId, read.gameName, read.language, read.tags, read.isBrandedContent, read.delay],
      ['Set by Twurple', GAMES.first, 'Twurple first', 'de', ['Twurple', 'Chill'], true, 0],
    );
    const own = await (await clientOf([])).channels.getChannelInfoById(STREAMER);
    assert.equal(own?.delay, 15, "the broadcaster's own token reads the delay");
  });

  it('updateChannelInfo while live: getStreamByUserId shows the new title, game and tags; getChannelInfoByIds lists it', async () => {
    const live = await t.inject({
      method: 'POST',
      url: '/admin/streams',
      headers: admin,
      payload: JSON.stringify({
        id: '998999',
        user_id: String(STREAMER),
        viewer_count: 3,
        started_at: '2026-06-15T11:00:00Z',
        is_mature: false,
      }),
    });
    assert.equal(live.statusCode, 201, live.body);
    const reader = await clientOf([]);
    const before = await reader.streams.getStreamByUserId(STREAMER);
    assert.equal(before?.title, 'Set by Twurple', "the stream went live with its channel's title");
    const api = await clientOf(['channel:manage:broadcast']);
    await api.channels.updateChannelInfo(STREAMER, {
      title: 'Changed live',
      gameId: GAMES.second,
      tags: ['Live'],
    });
    const stream = await reader.streams.getStreamByUserId(STREAMER);
    assert.deepEqual(
      [stream?.title, stream?.gameId, stream?.gameName, stream?.tags, stream?.language],
      ['Changed live', GAMES.second, 'Twurple second', ['Live'], 'de'],
    );
    const [info] = await reader.channels.getChannelInfoByIds([STREAMER, 1]);
    assert.equal(info?.title, 'Changed live');
  });

  it('updateChannelInfo by another user: a 401 error from the library, nothing changed', async () => {
    const other = await clientOf(['channel:manage:broadcast'], t.seed?.demoUserId as number);
    await assert.rejects(
      other.channels.updateChannelInfo(STREAMER, { title: 'Not mine' }),
      (err: Error & { statusCode?: number }) => err.statusCode === 401,
    );
    const read = await (await clientOf([])).channels.getChannelInfoById(STREAMER);
    assert.equal(read?.title, 'Changed live');
  });
});
