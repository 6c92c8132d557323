// Twurple 8 (@twurple/api) reads GET /channels/followers and GET /channels/followed from a real
// listening helixd (TWURPLE_MOCK_API_PORT sends every call to http://localhost:<port>/mock/...).
// The objects it parses are checked field by field against the store, with the one-page methods,
// the `...Paginated` ones (every page, following the cursors) and the one-user filter forms.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ApiClient } from '@twurple/api';
import { StaticAuthProvider } from '@twurple/auth';
import { forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';
import { pointTwurpleAt } from './twurple.ts';

interface Row {
  id: number;
  login: string;
  display_name: string;
  followed_at: number;
}

forEachStore('Twurple reads the channel follow lists from helixd', (kind: StoreKind) => {
  let t: TestApp;
  let demo: number;
  let moderator: number;
  let fan: number;
  let restore: () => void;

  /** An API client whose every call carries a token of `userId` with `scopes`. */
  async function clientOf(userId: number, scopes: string[]): Promise<ApiClient> {
    const token = await t.userToken(scopes, userId);
    return new ApiClient({ authProvider: new StaticAuthProvider(t.seed?.demoClientId as string, token) });
  }

  before(async () => {
    t = await startTestApp(kind, { users: 1000 });
    demo = t.seed?.demoUserId as number;
    moderator = (
      await t.store.db
        .selectFrom('moderators')
        .select('user_id')
        .where('broadcaster_id', '=', demo)
        .orderBy('user_id')
        .executeTakeFirstOrThrow()
    ).user_id;
    fan = (
      await t.store.db
        .selectFrom('follows')
        .select((eb) => ['from_id', eb.fn.countAll().as('n')])
        .groupBy('from_id')
        .orderBy('n', 'desc')
        .orderBy('from_id')
        .executeTakeFirstOrThrow()
    ).from_id;
    ({ restore } = await pointTwurpleAt(t));
  });
  after(async () => {
    restore?.();
    await t.close();
  });

  /** The follows of one side from the store, most recent first, with the other side's names. */
  async function stored(side: 'followers' | 'followed', id: number): Promise<Row[]> {
    const [fixed, shown] =
      side === 'followers' ? (['to_id', 'from_id'] as const) : (['from_id', 'to_id'] as const);
    return t.store.db
      .selectFrom('follows')
      .innerJoin('users', 'users.id', `follows.${shown}`)
      .select([`follows.${shown} as id`, 'users.login', 'users.display_name', 'follows.followed_at'])
      .where(`follows.${fixed}`, '=', id)
      .orderBy('follows.followed_at', 'desc')
      .orderBy(`follows.${shown}`, 'desc')
      .execute();
  }

  type Follower = { userId: string; userName: string; userDisplayName: string; followDate: Date };
  type Followed = {
    broadcasterId: string;
    broadcasterName: string;
    broadcasterDisplayName: string;
    followDate: Date;
  };
  const asRow = (r: Row) => ({
    id: String(r.id),
    name: r.login,
    displayName: r.display_name,
    followDate: new Date(r.followed_at * 1000).toISOString(),
  });
  const follower = (f: Follower) => ({
    id: f.userId,
    name: f.userName,
    displayName: f.userDisplayName,
    followDate: f.followDate.toISOString(),
  });
  const followed = (f: Followed) => ({
    id: f.broadcasterId,
    name: f.broadcasterName,
    displayName: f.broadcasterDisplayName,
    followDate: f.followDate.toISOString(),
  });

  it('getChannelFollowers and getChannelFollowersPaginated (every page) match the store, with the broadcaster token', async () => {
    const api = await clientOf(demo, ['moderator:read:followers']);
    const rows = await stored('followers', demo);
    assert.ok(rows.length > 300);
    const page = await api.channels.getChannelFollowers(demo, undefined, { limit: 9 });
    assert.equal(page.total, rows.length);
    assert.deepEqual(page.data.map(follower), rows.slice(0, 9).map(asRow));
    assert.ok(page.cursor);
    const paginated = api.channels.getChannelFollowersPaginated(demo);
    const all = await paginated.getAll();
    assert.deepEqual(all.map(follower), rows.map(asRow));
    assert.equal(await paginated.getTotalCount(), rows.length);
  });

  it("a moderator's token reads the channel's followers through Twurple too", async () => {
    const api = await clientOf(moderator, ['moderator:read:followers']);
    const rows = await stored('followers', demo);
    const page = await api.channels.getChannelFollowers(demo, undefined, { limit: 100 });
    assert.deepEqual(page.data.map(follower), rows.slice(0, 100).map(asRow));
  });

  it('getChannelFollowers with a user: that follower alone, or nothing for a user who does not follow', async () => {
    const api = await clientOf(demo, ['moderator:read:followers']);
    const rows = await stored('followers', demo);
    const pick = rows[11] as Row;
    const one = await api.channels.getChannelFollowers(demo, pick.id);
    assert.deepEqual(one.data.map(follower), [asRow(pick)]);
    assert.equal(one.total, rows.length);
    const none = await api.channels.getChannelFollowers(demo, demo);
    assert.deepEqual(none.data, []);
  });

  it('getChannelFollowerCount: the total, also for a token without moderator:read:followers', async () => {
    const rows = await stored('followers', demo);
    assert.equal(
      await (await clientOf(demo, ['moderator:read:followers'])).channels.getChannelFollowerCount(demo),
      rows.length,
    );
    assert.equal(await (await clientOf(fan, [])).channels.getChannelFollowerCount(demo), rows.length);
  });

  it('getFollowedChannels and getFollowedChannelsPaginated (every page) match the store', async () => {
    const api = await clientOf(fan, ['user:read:follows']);
    const rows = await stored('followed', fan);
    assert.ok(rows.length > 20);
    const page = await api.channels.getFollowedChannels(fan, undefined, { limit: 6 });
    assert.equal(page.total, rows.length);
    assert.deepEqual(page.data.map(followed), rows.slice(0, 6).map(asRow));
    const paginated = api.channels.getFollowedChannelsPaginated(fan);
    const all = await paginated.getAll();
    assert.deepEqual(all.map(followed), rows.map(asRow));
    assert.equal(await paginated.getTotalCount(), rows.length);
  });

  it('getFollowedChannels and getFollowedChannelsPaginated with a broadcaster: that channel alone, or nothing', async () => {
    const api = await clientOf(fan, ['user:read:follows']);
    const rows = await stored('followed', fan);
    const pick = rows[4] as Row;
    const one = await api.channels.getFollowedChannels(fan, pick.id);
    assert.deepEqual(one.data.map(followed), [asRow(pick)]);
    assert.equal(one.total, rows.length);
    const all = await api.channels.getFollowedChannelsPaginated(fan, pick.id).getAll();
    assert.deepEqual(all.map(followed), [asRow(pick)]);
    assert.deepEqual((await api.channels.getFollowedChannels(fan, fan)).data, []);
  });
});
