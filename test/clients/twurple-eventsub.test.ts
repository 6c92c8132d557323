// Twurple's EventSubWsListener, unchanged, in mock mode against one helixd (TWURPLE_MOCK_API_PORT:
// it opens ws://127.0.0.1:<port>/ws, creates its subscriptions at /eventsub/subscriptions and
// validates tokens at /auth/validate, all on that one port). Each event it receives was caused by
// an admin write, and the read API shows that write: after channel.follow, GET /channels/followers
// lists the follower; after stream.online, GET /streams lists that stream id. Then the admin
// controls: after a forced reconnect Twurple follows the session to its reconnect URL and keeps
// receiving, nothing lost; with its keepalives silenced it gives the session up, connects again and
// subscribes anew; an admin revocation reaches its onRevoke with the status.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ApiClient } from '@twurple/api';
import { RefreshingAuthProvider } from '@twurple/auth';
import { EventSubWsListener } from '@twurple/eventsub-ws';
import { ADMIN_TOKEN, bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';
import { authorizeUser, freePort, pointTwurpleAt, twurpleToken, unrefLongTimers } from './twurple.ts';

// Twurple keeps a 10-minute timer per message id it received: unref'd, so the file ends with its tests.
unrefLongTimers();

const BROADCASTER = '998100';
const FAN = '998101';
const FANS_LATER = ['998102', '998103', '998104'];

/** Values pushed by handlers, awaited in order by the test. */
class Inbox<T> {
  readonly #items: T[] = [];
  readonly #waiters: ((v: T) => void)[] = [];
  push = (v: T): void => {
    const w = this.#waiters.shift();
    if (w) w(v);
    else this.#items.push(v);
  };
  next(what: string, ms = 10_000): Promise<T> {
    const ready = this.#items.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
      this.#waiters.push((v) => {
        clearTimeout(timer);
        resolve(v);
      });
    });
  }
  get size(): number {
    return this.#items.length;
  }
}

forEachStore("Twurple's EventSubWsListener receives helixd's events", (kind: StoreKind) => {
  let t: TestApp;
  let listener: EventSubWsListener;
  let restore: () => void;
  let appToken: string;
  const created = new Inbox<string>();
  const online = new Inbox<{
    id: string;
    broadcasterId: string;
    broadcasterName: string;
    type: string;
    startDate: Date;
  }>();
  const offline = new Inbox<string>();
  const follows = new Inbox<{ userId: string; userName: string; broadcasterId: string; followDate: Date }>();
  const subs = new Inbox<{ userId: string; broadcasterId: string; tier: string; isGift: boolean }>();
  const revoked = new Inbox<string>();
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
  const adminWrite = async (method: 'POST' | 'DELETE', url: string, body?: unknown) => {
    const res = await t.inject({
      method,
      url,
      headers: admin,
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
  };
  const user = (id: string, login: string) =>
    adminWrite('POST', '/admin/users', {
      id,
      login,
      display_name: login.toUpperCase(),
      broadcaster_type: 'affiliate',
      description: '',
      created_at: '2024-01-01T00:00:00Z',
    });

  before(async () => {
    const port = await freePort();
    t = await startTestApp(kind, {
      users: 20,
      config: { adminToken: ADMIN_TOKEN, publicUrl: `http://localhost:${port}` },
    });
    appToken = await t.appToken();
    await user(BROADCASTER, 'caster');
    await user(FAN, 'fan');
    for (const [i, id] of FANS_LATER.entries()) await user(id, `later_fan_${i}`);
    await adminWrite('POST', '/admin/games', { id: '998001', name: 'Listener Game' });
    const pointed = await pointTwurpleAt(t, port);
    restore = pointed.restore;
    const reply = await authorizeUser(
      pointed.base,
      pointed.client,
      BROADCASTER,
      'channel:read:subscriptions moderator:read:followers',
    );
    const auth = new RefreshingAuthProvider({
      clientId: pointed.client.id,
      clientSecret: pointed.client.secret,
    });
    await auth.addUserForToken(twurpleToken(reply));
    listener = new EventSubWsListener({ apiClient: new ApiClient({ authProvider: auth }) });
    listener.onSubscriptionCreateSuccess((s) => created.push(s.id));
    listener.onSubscriptionCreateFailure((s, e) => created.push(`${s.id} failed: ${e.message}`));
    listener.onRevoke((s, status) => revoked.push(`${s.id} ${status}`));
    listener.onStreamOnline(BROADCASTER, (e) =>
      online.push({
        id: e.id,
        broadcasterId: e.broadcasterId,
        broadcasterName: e.broadcasterName,
        type: e.type,
        startDate: e.startDate,
      }),
    );
    listener.onStreamOffline(BROADCASTER, (e) => offline.push(e.broadcasterId));
    listener.onChannelFollow(BROADCASTER, BROADCASTER, (e) =>
      follows.push({
        userId: e.userId,
        userName: e.userName,
        broadcasterId: e.broadcasterId,
        followDate: e.followDate,
      }),
    );
    listener.onChannelSubscription(BROADCASTER, (e) =>
      subs.push({ userId: e.userId, broadcasterId: e.broadcasterId, tier: e.tier, isGift: e.isGift }),
    );
    listener.start();
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(await created.next('subscription created'));
    assert.deepEqual(
      ids.filter((s) => s.includes('failed')),
      [],
    );
  });
  after(async () => {
    listener?.stop();
    restore?.();
    await t.close();
  });

  it('stream.online for a stream created through the admin API, and GET /streams lists it', async () => {
    await adminWrite('POST', '/admin/streams', {
      id: '98000001',
      user_id: BROADCASTER,
      game_id: '998001',
      title: 'Listen in',
      tags: [],
      viewer_count: 3,
      started_at: '2026-06-15T11:30:00Z',
      language: 'en',
      is_mature: false,
    });
    const e = await online.next('stream.online');
    assert.deepEqual(e, {
      id: '98000001',
      broadcasterId: BROADCASTER,
      broadcasterName: 'caster',
      type: 'live',
      startDate: new Date('2026-06-15T11:30:00Z'),
    });
    const res = await t.get(`/helix/streams?user_id=${BROADCASTER}`, bearer(appToken));
    assert.deepEqual(
      res.json().data.map((s: { id: string }) => s.id),
      [e.id],
    );
  });

  it('channel.follow for a follow written through the admin API, and GET /channels/followers lists the follower', async () => {
    await adminWrite('POST', '/admin/follows', {
      broadcaster_id: BROADCASTER,
      user_id: FAN,
      followed_at: '2026-06-15T11:45:00Z',
    });
    const e = await follows.next('channel.follow');
    assert.deepEqual(e, {
      userId: FAN,
      userName: 'fan',
      broadcasterId: BROADCASTER,
      followDate: new Date('2026-06-15T11:45:00Z'),
    });
    const token = (await t.userToken(['moderator:read:followers'], Number(BROADCASTER))) as string;
    const res = await t.get(`/helix/channels/followers?broadcaster_id=${BROADCASTER}`, bearer(token));
    assert.deepEqual(
      res.json().data.map((f: { user_id: string }) => f.user_id),
      [FAN],
    );
  });

  it('channel.subscribe for a subscription written through the admin API, and GET /subscriptions lists it', async () => {
    await adminWrite('POST', '/admin/subscriptions', {
      broadcaster_id: BROADCASTER,
      user_id: FAN,
      tier: '2000',
      plan_name: 'Tier 2',
      is_gift: false,
      gifter_id: '',
      created_at: '2026-06-15T11:50:00Z',
    });
    assert.deepEqual(await subs.next('channel.subscribe'), {
      userId: FAN,
      broadcasterId: BROADCASTER,
      tier: '2000',
      isGift: false,
    });
    const token = (await t.userToken(['channel:read:subscriptions'], Number(BROADCASTER))) as string;
    const res = await t.get(`/helix/subscriptions?broadcaster_id=${BROADCASTER}`, bearer(token));
    assert.deepEqual(
      res.json().data.map((s: { user_id: string }) => s.user_id),
      [FAN],
    );
  });

  it('stream.offline when the stream is deleted, and GET /streams no longer lists it', async () => {
    await adminWrite('DELETE', '/admin/streams/98000001');
    assert.equal(await offline.next('stream.offline'), BROADCASTER);
    const res = await t.get(`/helix/streams?user_id=${BROADCASTER}`, bearer(appToken));
    assert.deepEqual(res.json().data, []);
  });

  it('keeps receiving after a forced reconnect: the session moves, no event is lost', async () => {
    const sessions = await t.inject({ method: 'GET', url: '/admin/eventsub/sessions', headers: admin });
    const mine = sessions.json().data.filter((s: { user_id: string }) => s.user_id === BROADCASTER);
    assert.equal(mine.length, 1, sessions.body);
    const id = mine[0].id as string;
    const res = await t.inject({
      method: 'POST',
      url: `/admin/eventsub/sessions/${id}/reconnect`,
      headers: admin,
    });
    assert.equal(res.statusCode, 202, res.body);
    // Written while the session is handed over.
    await adminWrite('POST', '/admin/follows', {
      broadcaster_id: BROADCASTER,
      user_id: FANS_LATER[0],
      followed_at: '2026-06-15T12:00:00Z',
    });
    // Claimed: connected again, with the cursor its reconnect wrote.
    const row = () =>
      t.store.db.selectFrom('eventsub_sessions').selectAll().where('id', '=', id).executeTakeFirst();
    for (let r = await row(); !(r?.status === 'connected' && Number(r.cursor) > 0); r = await row())
      await new Promise((resolve) => setTimeout(resolve, 20));
    await adminWrite('POST', '/admin/follows', {
      broadcaster_id: BROADCASTER,
      user_id: FANS_LATER[1],
      followed_at: '2026-06-15T12:01:00Z',
    });
    await adminWrite('POST', '/admin/streams', {
      id: '98000002',
      user_id: BROADCASTER,
      game_id: '998001',
      title: 'After the reconnect',
      tags: [],
      viewer_count: 1,
      started_at: '2026-06-15T12:02:00Z',
      language: 'en',
      is_mature: false,
    });
    assert.equal((await follows.next('the follow during the hand-over')).userId, FANS_LATER[0]);
    assert.equal((await follows.next('the follow after the hand-over')).userId, FANS_LATER[1]);
    assert.equal((await online.next('stream.online after the hand-over')).id, '98000002');
    // The same session id: the subscriptions stayed enabled, none was created again.
    const after = await t.inject({ method: 'GET', url: '/admin/eventsub/sessions', headers: admin });
    assert.deepEqual(
      after
        .json()
        .data.filter((s: { user_id: string }) => s.user_id === BROADCASTER)
        .map((s: { id: string }) => s.id),
      [id],
    );
    assert.equal(created.size, 0);
  });

  it('gives up a session whose keepalives stop: connects again, subscribes anew, keeps receiving', async () => {
    const sessionsOfBroadcaster = async () =>
      (await t.inject({ method: 'GET', url: '/admin/eventsub/sessions', headers: admin }))
        .json()
        .data.filter((s: { user_id: string | null }) => s.user_id === BROADCASTER)
        .map((s: { id: string }) => s.id) as string[];
    const [old] = await sessionsOfBroadcaster();
    assert.ok(old);
    const res = await t.inject({
      method: 'PUT',
      url: `/admin/eventsub/sessions/${old}/keepalives`,
      headers: admin,
      payload: JSON.stringify({ silenced: true }),
    });
    assert.equal(res.statusCode, 200, res.body);
    // Twurple waits 1.2 times the keepalive timeout (10 s) after the last message, then connects
    // again and creates its four subscriptions on the new session.
    const again = [];
    for (let i = 0; i < 4; i++) again.push(await created.next('a subscription created again', 25_000));
    assert.deepEqual(
      again.filter((s) => s.includes('failed')),
      [],
    );
    // Twurple closed the old socket: one session is left, a new one.
    const now = await sessionsOfBroadcaster();
    assert.equal(now.length, 1, `sessions ${now.join(', ')}`);
    assert.notEqual(now[0], old);
    await adminWrite('POST', '/admin/follows', {
      broadcaster_id: BROADCASTER,
      user_id: FANS_LATER[2],
      followed_at: '2026-06-15T12:03:00Z',
    });
    assert.equal((await follows.next('the follow on the new session')).userId, FANS_LATER[2]);
  });

  it('an admin revocation reaches onRevoke with its status', async () => {
    const sub = await t.store.db
      .selectFrom('eventsub_subscriptions')
      .select('id')
      .where('type', '=', 'stream.offline')
      .where('status', '=', 'enabled')
      .executeTakeFirstOrThrow();
    const res = await t.inject({
      method: 'POST',
      url: `/admin/eventsub/subscriptions/${sub.id}/revoke`,
      headers: admin,
      payload: JSON.stringify({ status: 'version_removed' }),
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(await revoked.next('the revocation'), /^stream\.offline.* version_removed$/);
  });
});
