// Twurple 8 (@twurple/api) calls the user-token reads beside the channel: a user's followed streams
// (`api.streams.getFollowedStreams`), a user's own subscription (`api.subscriptions
// .checkUserSubscription`) and a channel's moderators (`api.moderation.getModerators`), through the
// library itself against a real listening helixd (TWURPLE_MOCK_API_PORT sends every call to
// http://localhost:<port>/mock/...). What it parses is checked against another read (GET /streams)
// or the seeded rows.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ApiClient } from '@twurple/api';
import { StaticAuthProvider } from '@twurple/auth';
import { rfc3339 } from '../../src/wire/datetime.ts';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';
import { pointTwurpleAt } from './twurple.ts';

forEachStore(
  'Twurple reads followed streams, a user subscription and moderators from helixd',
  (kind: StoreKind) => {
    let t: TestApp;
    let demo: number;
    /** the user who follows the most live channels */
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
      fan = (
        await t.store.db
          .selectFrom('follows')
          .innerJoin('streams', 'streams.user_id', 'follows.to_id')
          .select((eb) => ['follows.from_id', eb.fn.countAll().as('n')])
          .groupBy('follows.from_id')
          .orderBy('n', 'desc')
          .orderBy('follows.from_id')
          .executeTakeFirstOrThrow()
      ).from_id;
      ({ restore } = await pointTwurpleAt(t));
    });
    after(async () => {
      restore?.();
      await t.close();
    });

    it('getFollowedStreams: the streams GET /streams answers for the followed channels, in its order, every field', async () => {
      const api = await clientOf(fan, ['user:read:follows']);
      const got = await api.streams.getFollowedStreams(fan);
      const channels = (
        await t.store.db.selectFrom('follows').select('to_id').where('from_id', '=', fan).execute()
      ).map((f) => f.to_id);
      const read = await t.get(
        `/helix/streams?${channels.map((c) => `user_id=${c}`).join('&')}&first=100`,
        bearer(await t.appToken()),
      );
      const streams = read.json().data as Record<string, unknown>[];
      assert.ok(streams.length >= 5, `${streams.length} followed channels live`);
      assert.equal(got.data.length, streams.length);
      assert.equal(got.cursor, undefined);
      got.data.forEach((s, i) => {
        const w = streams[i] as Record<string, unknown>;
        assert.equal(s.id, w.id);
        assert.equal(s.userId, w.user_id);
        assert.equal(s.userName, w.user_login);
        assert.equal(s.userDisplayName, w.user_name);
        assert.equal(s.gameId, w.game_id);
        assert.equal(s.gameName, w.game_name);
        assert.equal(s.type, 'live');
        assert.equal(s.title, w.title);
        assert.equal(s.viewers, w.viewer_count);
        assert.equal(rfc3339(s.startDate.getTime() / 1000), w.started_at);
        assert.equal(s.language, w.language);
        assert.equal(s.thumbnailUrl, w.thumbnail_url);
        assert.deepEqual(s.tags, w.tags);
        assert.equal(s.isMature, w.is_mature);
      });
    });

    it('getFollowedStreams pages with its cursor, and getFollowedStreamsPaginated walks them all, in order', async () => {
      const api = await clientOf(fan, ['user:read:follows']);
      const all = (await api.streams.getFollowedStreams(fan)).data.map((s) => s.id);
      const seen: string[] = [];
      let after: string | undefined;
      do {
        const page = await api.streams.getFollowedStreams(fan, { limit: 2, after });
        assert.ok(page.data.length <= 2);
        seen.push(...page.data.map((s) => s.id));
        after = page.cursor;
      } while (after);
      assert.deepEqual(seen, all);
      const walked = await api.streams.getFollowedStreamsPaginated(fan).getAll();
      assert.deepEqual(
        walked.map((s) => s.id),
        all,
      );
    });

    it("checkUserSubscription: a plain and a gifted subscription as stored, null for a channel the user doesn't subscribe to", async () => {
      const subs = await t.store.db
        .selectFrom('subscriptions')
        .innerJoin('users', 'users.id', 'subscriptions.broadcaster_id')
        .select(['subscriptions.broadcaster_id', 'subscriptions.user_id', 'subscriptions.is_gift'])
        .select(['subscriptions.tier', 'users.login', 'users.display_name'])
        .orderBy('subscriptions.broadcaster_id')
        .orderBy('subscriptions.user_id')
        .execute();
      for (const gift of [0, 1]) {
        const s = subs.find((r) => r.is_gift === gift) as (typeof subs)[number];
        const api = await clientOf(s.user_id, ['user:read:subscriptions']);
        const got = await api.subscriptions.checkUserSubscription(s.user_id, s.broadcaster_id);
        assert.ok(got, `gift=${gift}`);
        assert.equal(got.broadcasterId, String(s.broadcaster_id));
        assert.equal(got.broadcasterName, s.login);
        assert.equal(got.broadcasterDisplayName, s.display_name);
        assert.equal(got.isGift, gift === 1);
        assert.equal(got.tier, s.tier);
      }
      const plain = subs[0] as (typeof subs)[number];
      const api = await clientOf(plain.user_id, ['user:read:subscriptions']);
      // The user's own channel: nobody subscribes to themselves, so production's 404, which Twurple reads as null.
      assert.equal(await api.subscriptions.checkUserSubscription(plain.user_id, plain.user_id), null);
    });

    it('getModerators: the channel moderators as stored, by user id; pages with its cursor; a userId filter in the order given', async () => {
      const api = await clientOf(demo, ['moderation:read']);
      const stored = await t.store.db
        .selectFrom('moderators')
        .innerJoin('users', 'users.id', 'moderators.user_id')
        .select(['moderators.user_id', 'users.login', 'users.display_name'])
        .where('moderators.broadcaster_id', '=', demo)
        .orderBy('moderators.user_id')
        .execute();
      assert.equal(stored.length, 8);
      const got = await api.moderation.getModerators(demo);
      assert.deepEqual(
        got.data.map((m) => [m.userId, m.userName, m.userDisplayName]),
        stored.map((m) => [String(m.user_id), m.login, m.display_name]),
      );
      const seen: string[] = [];
      let after: string | undefined;
      do {
        const page = await api.moderation.getModerators(demo, { limit: 3, after });
        seen.push(...page.data.map((m) => m.userId));
        after = page.cursor;
      } while (after);
      assert.deepEqual(
        seen,
        stored.map((m) => String(m.user_id)),
      );
      const walked = await api.moderation.getModeratorsPaginated(demo).getAll();
      assert.deepEqual(
        walked.map((m) => m.userId),
        seen,
      );
      const picked = [stored[6], stored[2]].map((m) => String(m?.user_id));
      const filtered = await api.moderation.getModerators(demo, { userId: [...picked, String(demo)] });
      assert.deepEqual(
        filtered.data.map((m) => m.userId),
        picked,
      );
      assert.equal(await api.moderation.checkUserMod(demo, picked[0] as string), true);
      assert.equal(await api.moderation.checkUserMod(demo, demo), false);
    });
  },
);
