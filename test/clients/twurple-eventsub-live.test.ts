// Twurple's EventSubWsListener, unchanged, in mock mode, under `--live`: the world's own writes
// (streams going live and offline, follows, subscriptions) reach it, one notification per write the
// world reports, and the read API shows each (the follower is listed, the stream is live until its
// stream.offline). One socket per user, as Twurple makes them: every user of a small world is
// subscribed to its four events with its own token.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ApiClient } from '@twurple/api';
import { RefreshingAuthProvider } from '@twurple/auth';
import { EventSubWsListener } from '@twurple/eventsub-ws';
import { ADMIN_TOKEN, bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';
import { authorizeUser, pointTwurpleAt, twurpleToken, unrefLongTimers } from './twurple.ts';

// Twurple keeps a 10-minute timer per message id it received: unref'd, so the file ends with its tests.
unrefLongTimers();

const USERS = 12;

interface Seen {
  /** stream.online and stream.offline in the order received: the stream id, or null for offline */
  streams: { broadcaster: string; id: string | null }[];
  online: { broadcaster: string; id: string }[];
  offline: string[];
  follows: { broadcaster: string; user: string }[];
  subscriptions: { broadcaster: string; user: string }[];
}

forEachStore("Twurple's EventSubWsListener under --live", (kind: StoreKind) => {
  let t: TestApp;
  let listener: EventSubWsListener;
  let restore: () => void;
  let users: string[];
  const seen: Seen = { streams: [], online: [], offline: [], follows: [], subscriptions: [] };

  before(async () => {
    t = await startTestApp(kind, {
      users: USERS,
      config: { adminToken: ADMIN_TOKEN, live: true, liveRate: 0, liveSeed: 3 },
    });
    const pointed = await pointTwurpleAt(t);
    restore = pointed.restore;
    users = (await t.store.db.selectFrom('users').select('id').orderBy('id').execute()).map((u) =>
      String(u.id),
    );
    const auth = new RefreshingAuthProvider({
      clientId: pointed.client.id,
      clientSecret: pointed.client.secret,
    });
    for (const u of users)
      await auth.addUserForToken(
        twurpleToken(
          await authorizeUser(
            pointed.base,
            pointed.client,
            u,
            'channel:read:subscriptions moderator:read:followers',
          ),
        ),
      );
    listener = new EventSubWsListener({ apiClient: new ApiClient({ authProvider: auth }) });
    let created = 0;
    const failures: string[] = [];
    listener.onSubscriptionCreateSuccess(() => created++);
    listener.onSubscriptionCreateFailure((s, e) => failures.push(`${s.id}: ${e.message}`));
    for (const u of users) {
      listener.onStreamOnline(u, (e) => {
        seen.online.push({ broadcaster: e.broadcasterId, id: e.id });
        seen.streams.push({ broadcaster: e.broadcasterId, id: e.id });
      });
      listener.onStreamOffline(u, (e) => {
        seen.offline.push(e.broadcasterId);
        seen.streams.push({ broadcaster: e.broadcasterId, id: null });
      });
      listener.onChannelFollow(u, u, (e) =>
        seen.follows.push({ broadcaster: e.broadcasterId, user: e.userId }),
      );
      listener.onChannelSubscription(u, (e) =>
        seen.subscriptions.push({ broadcaster: e.broadcasterId, user: e.userId }),
      );
    }
    listener.start();
    const deadline = Date.now() + 20_000;
    while (created + failures.length < users.length * 4 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(failures, []);
    assert.equal(created, users.length * 4);
  });
  after(async () => {
    listener?.stop();
    restore?.();
    await t.close();
  });

  it('receives one notification per write of the world, and the read API agrees with each', async () => {
    const res = await t.inject({
      method: 'POST',
      url: '/admin/live/step',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ events: 300 }),
    });
    assert.equal(res.statusCode, 200, res.body);
    const { kinds } = res.json() as { kinds: Record<string, number> };
    assert.ok(kinds.live && kinds.offline && kinds.follow && kinds.subscription, JSON.stringify(kinds));
    const expected = () =>
      seen.online.length === kinds.live &&
      seen.offline.length === kinds.offline &&
      seen.follows.length === kinds.follow &&
      seen.subscriptions.length === kinds.subscription;
    const deadline = Date.now() + 10_000;
    while (!expected() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(
      {
        live: seen.online.length,
        offline: seen.offline.length,
        follow: seen.follows.length,
        subscription: seen.subscriptions.length,
      },
      { live: kinds.live, offline: kinds.offline, follow: kinds.follow, subscription: kinds.subscription },
    );

    const app = await t.appToken();
    // Every follower announced is listed; every subscriber announced is listed.
    for (const f of seen.follows) {
      const token = await t.userToken(['moderator:read:followers'], Number(f.broadcaster));
      const r = await t.get(
        `/helix/channels/followers?broadcaster_id=${f.broadcaster}&user_id=${f.user}`,
        bearer(token),
      );
      assert.deepEqual(
        r.json().data.map((x: { user_id: string }) => x.user_id),
        [f.user],
      );
    }
    for (const s of seen.subscriptions) {
      const token = await t.userToken(['channel:read:subscriptions'], Number(s.broadcaster));
      const r = await t.get(
        `/helix/subscriptions?broadcaster_id=${s.broadcaster}&user_id=${s.user}`,
        bearer(token),
      );
      assert.equal(r.json().data.length, 1, `${s.user} subscribes to ${s.broadcaster}`);
    }
    // Per channel, the last stream event received says what GET /streams shows: that stream live,
    // or none (delivery is in commit order per subscription).
    const last = new Map<string, string | null>();
    for (const e of seen.streams) last.set(e.broadcaster, e.id);
    for (const [b, id] of last) {
      const r = await t.get(`/helix/streams?user_id=${b}`, bearer(app));
      assert.deepEqual(
        r.json().data.map((s: { id: string }) => s.id),
        id === null ? [] : [id],
        `the last stream event of ${b}`,
      );
    }
  });
});
