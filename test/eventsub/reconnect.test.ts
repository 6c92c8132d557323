// EventSub's hand-over and admin controls (docs/eventsub-design.md, sections 4 and 5), through a raw
// `ws` client and the admin API: a forced reconnect moves the session to a new socket with the
// same id and loses no event written around it; a used reconnect token is closed 4007; silenced
// keepalives stop; an admin revocation reaches the socket with its status and the API lists it. A
// hand-over between two instances on one store: the command given to one reaches the holder, the
// other claims the session, and the old holder closes its socket when it reads the claim.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { buildApp } from '../../src/app.ts';
import { openStore } from '../../src/store/db.ts';
import { freePort } from '../clients/twurple.ts';
import { ADMIN_TOKEN, bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';
import { type Client, connect, until } from '../support/ws-client.ts';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

forEachStore('EventSub reconnect and admin controls', (kind: StoreKind) => {
  let t: TestApp;
  let base: string;
  let broadcaster: number;
  let token: string;

  before(async () => {
    const port = await freePort();
    t = await startTestApp(kind, {
      users: 40,
      config: { adminToken: ADMIN_TOKEN, publicUrl: `http://127.0.0.1:${port}` },
    });
    await t.app.listen({ port, host: '127.0.0.1' });
    base = `ws://127.0.0.1:${port}`;
    // A channel of its own: the follows the tests write draw their users among the seeded ones.
    broadcaster = 997001;
    const res = await t.inject({
      method: 'POST',
      url: '/admin/users',
      headers: admin,
      payload: JSON.stringify({
        id: String(broadcaster),
        login: 'reconnect_channel',
        display_name: 'Reconnect_Channel',
        broadcaster_type: '',
        description: '',
        created_at: '2024-01-01T00:00:00Z',
      }),
    });
    assert.equal(res.statusCode, 201, res.body);
    token = await t.userToken(['moderator:read:followers'], broadcaster);
  });
  after(() => t.close());

  /** A session with one channel.follow subscription made through the subscriptions API. */
  async function subscribed(): Promise<{ c: Client; sessionId: string; subscriptionId: string }> {
    const c = await connect(`${base}/ws`);
    const sessionId = (await c.next('session_welcome')).payload.session.id as string;
    const res = await t.inject({
      method: 'POST',
      url: '/helix/eventsub/subscriptions',
      headers: {
        ...bearer(token),
        'client-id': t.seed?.demoClientId as string,
        'content-type': 'application/json',
      },
      payload: JSON.stringify({
        type: 'channel.follow',
        version: '2',
        condition: { broadcaster_user_id: String(broadcaster), moderator_user_id: String(broadcaster) },
        transport: { method: 'websocket', session_id: sessionId },
      }),
    });
    assert.equal(res.statusCode, 202, res.body);
    return { c, sessionId, subscriptionId: res.json().data[0].id };
  }

  /** A follow written through the admin API: the follower's id. */
  async function follow(): Promise<string> {
    const res = await t.inject({
      method: 'POST',
      url: '/admin/eventsub/trigger',
      headers: admin,
      payload: JSON.stringify({ type: 'channel.follow', broadcaster_id: String(broadcaster) }),
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().written.find((w: { kind: string }) => w.kind === 'follow').data.user_id as string;
  }

  const reconnect = (id: string) =>
    t.inject({
      method: 'POST',
      url: `/admin/eventsub/sessions/${encodeURIComponent(id)}/reconnect`,
      headers: admin,
    });

  const followers = (c: Client) =>
    new Set(
      c.all
        .filter((m) => m.metadata.message_type === 'notification')
        .map((m) => m.payload.event.user_id as string),
    );

  it('lists the sessions with their owner', async () => {
    const { c, sessionId } = await subscribed();
    const res = await t.inject({ method: 'GET', url: '/admin/eventsub/sessions', headers: admin });
    assert.equal(res.statusCode, 200, res.body);
    const row = res.json().data.find((s: { id: string }) => s.id === sessionId);
    assert.deepEqual(Object.keys(row), [
      'id',
      'owner',
      'status',
      'client_id',
      'user_id',
      'keepalive_timeout_seconds',
      'connected_at',
    ]);
    assert.equal(row.status, 'connected');
    assert.equal(row.client_id, t.seed?.demoClientId);
    assert.equal(row.user_id, String(broadcaster));
    assert.equal(row.keepalive_timeout_seconds, 10);
    assert.match(row.owner, /^.+:\d+:\d+$/);
    const unknown = await reconnect('no-such-session');
    assert.equal(unknown.statusCode, 404, unknown.body);
    c.ws.close();
    await c.closed;
  });

  it('hands a session over to its reconnect URL: same id, old socket closed, no event lost', async () => {
    const { c: old, sessionId, subscriptionId } = await subscribed();
    const written: string[] = [];
    written.push(await follow());
    await old.next('notification');
    const res = await reconnect(sessionId);
    assert.equal(res.statusCode, 202, res.body);
    const m = await old.next('session_reconnect');
    assert.deepEqual(Object.keys(m.payload.session), [
      'id',
      'status',
      'keepalive_timeout_seconds',
      'reconnect_url',
      'connected_at',
      'recovery_url',
    ]);
    assert.equal(m.payload.session.id, sessionId);
    assert.equal(m.payload.session.status, 'reconnecting');
    assert.equal(m.payload.session.keepalive_timeout_seconds, null);
    const url = m.payload.session.reconnect_url as string;
    assert.match(url, new RegExp(`^${base}/ws\\?reconnect=[A-Za-z0-9_-]{20,}$`));
    // Written while the session is being handed over: the old socket still delivers.
    written.push(await follow());
    const fresh = await connect(url);
    const welcome = await fresh.next('session_welcome');
    assert.equal(welcome.payload.session.id, sessionId);
    assert.equal(welcome.payload.session.status, 'connected');
    assert.equal((await old.closed).code, 1000);
    written.push(await follow());
    written.push(await follow());
    await until('every follow delivered', () => {
      const got = new Set([...followers(old), ...followers(fresh)]);
      return written.every((u) => got.has(u));
    });
    // The same message id whichever socket carried it; the subscription stayed enabled.
    const ids = new Map<string, string>();
    for (const n of [...old.all, ...fresh.all].filter((x) => x.metadata.message_type === 'notification')) {
      const prev = ids.get(n.payload.event.user_id);
      if (prev) assert.equal(prev, n.metadata.message_id);
      ids.set(n.payload.event.user_id, n.metadata.message_id as string);
      assert.equal(n.payload.subscription.id, subscriptionId);
    }
    const row = await t.store.db
      .selectFrom('eventsub_subscriptions')
      .select('status')
      .where('id', '=', subscriptionId)
      .executeTakeFirstOrThrow();
    assert.equal(row.status, 'enabled');
    const session = await t.store.db
      .selectFrom('eventsub_sessions')
      .selectAll()
      .where('id', '=', sessionId)
      .executeTakeFirstOrThrow();
    assert.equal(session.status, 'connected');
    assert.equal(session.reconnect_hash, null);

    // The token was consumed: a second connection to the URL is closed 4007.
    const reused = await connect(url);
    assert.equal((await reused.closed).code, 4007);
    const unknown = await connect(`${base}/ws?reconnect=nothing-like-a-token`);
    assert.equal((await unknown.closed).code, 4007);
    // The session still holds its new socket.
    written.push(await follow());
    await until('the follow after the refused reuse', () => followers(fresh).has(written.at(-1) as string));
    fresh.ws.close();
    await fresh.closed;
    await until('the session ended by the client', async () => {
      const r = await t.store.db
        .selectFrom('eventsub_subscriptions')
        .select('status')
        .where('id', '=', subscriptionId)
        .executeTakeFirstOrThrow();
      return r.status === 'websocket_disconnected';
    });
  });

  it('stops and restores the keepalives of a session', async () => {
    const { c, sessionId } = await subscribed();
    const put = (silenced: unknown) =>
      t.inject({
        method: 'PUT',
        url: `/admin/eventsub/sessions/${sessionId}/keepalives`,
        headers: admin,
        payload: JSON.stringify({ silenced }),
      });
    const bad = await put('yes');
    assert.equal(bad.statusCode, 400, bad.body);
    assert.match(bad.json().message, /silenced/);
    const res = await put(true);
    assert.equal(res.statusCode, 200, res.body);
    // Let the command reach the holder, then 9 s (a keepalive's interval) and a margin pass.
    await new Promise((r) => setTimeout(r, 10_500));
    const count = () => c.all.filter((m) => m.metadata.message_type === 'session_keepalive').length;
    assert.equal(count(), 0);
    assert.equal((await put(false)).statusCode, 200);
    await c.next('session_keepalive', 11_000);
    c.ws.close();
    await c.closed;
  });

  it('revokes a subscription with the status given: a revocation message, and the API lists it', async () => {
    const { c, subscriptionId } = await subscribed();
    const revoke = (id: string, status: unknown) =>
      t.inject({
        method: 'POST',
        url: `/admin/eventsub/subscriptions/${id}/revoke`,
        headers: admin,
        payload: JSON.stringify({ status }),
      });
    for (const status of ['enabled', 'webhook_callback_verification_pending', 'nonsense']) {
      const bad = await revoke(subscriptionId, status);
      assert.equal(bad.statusCode, 400, bad.body);
      assert.match(bad.json().message, /"status"/);
    }
    assert.equal((await revoke('00000000-0000-4000-8000-000000000000', 'user_removed')).statusCode, 404);
    const res = await revoke(subscriptionId, 'version_removed');
    assert.equal(res.statusCode, 200, res.body);
    const m = await c.next('revocation');
    assert.equal(m.payload.subscription.id, subscriptionId);
    assert.equal(m.payload.subscription.status, 'version_removed');
    const again = await revoke(subscriptionId, 'user_removed');
    assert.equal(again.statusCode, 409, again.body);
    const list = await t.inject({
      method: 'GET',
      url: `/helix/eventsub/subscriptions?status=version_removed`,
      headers: { ...bearer(token), 'client-id': t.seed?.demoClientId as string },
    });
    assert.equal(list.statusCode, 200, list.body);
    assert.ok(list.json().data.some((s: { id: string; status: string }) => s.id === subscriptionId));
    // The socket stays.
    assert.equal(c.ws.readyState, WebSocket.OPEN);
    c.ws.close();
    await c.closed;
  });

  it('hands a session over to another instance on the same store', async () => {
    const port = await freePort();
    const otherStore = openStore(t.storeOptions);
    const other = await buildApp({
      config: { ...t.config, publicUrl: `http://127.0.0.1:${port}` },
      store: otherStore,
      clock: t.clock,
      secret: t.config.secret as string,
      logger: false,
    });
    try {
      await other.listen({ port, host: '127.0.0.1' });
      const { c: old, sessionId, subscriptionId } = await subscribed();
      const owner = async () =>
        (await t.inject({ method: 'GET', url: '/admin/eventsub/sessions', headers: admin }))
          .json()
          .data.find((x: { id: string }) => x.id === sessionId).owner as string;
      const ownerBefore = await owner();
      // The command reaches this instance's session through the store.
      const res = await other.inject({
        method: 'POST',
        url: `/admin/eventsub/sessions/${sessionId}/reconnect`,
        headers: admin,
      });
      assert.equal(res.statusCode, 202, res.body);
      const url = (await old.next('session_reconnect')).payload.session.reconnect_url as string;
      const written = [await follow()];
      // A load balancer sends the new connection to the other instance.
      const fresh = await connect(url.replace(base, `ws://127.0.0.1:${port}`));
      assert.equal((await fresh.next('session_welcome')).payload.session.id, sessionId);
      assert.equal((await old.closed).code, 1000);
      written.push(await follow());
      await until('every follow delivered', () => {
        const got = new Set([...followers(old), ...followers(fresh)]);
        return written.every((u) => got.has(u));
      });
      assert.notEqual(await owner(), ownerBefore);
      // The follow written before the claim came again on the new socket: the other instance
      // started reading after it, and resumed the session from the cursor its reconnect stored.
      await until('the follow before the claim on the new socket', () =>
        followers(fresh).has(written[0] as string),
      );
      const sub = await t.store.db
        .selectFrom('eventsub_subscriptions')
        .select('status')
        .where('id', '=', subscriptionId)
        .executeTakeFirstOrThrow();
      assert.equal(sub.status, 'enabled');
      fresh.ws.close();
      await fresh.closed;
    } finally {
      await other.close();
      // The app does not close a store it was given (a PostgreSQL pool would hold the process).
      await otherStore.close();
    }
  });
});
