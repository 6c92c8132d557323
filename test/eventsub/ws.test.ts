// The EventSub WebSocket at /ws, one process, through a real `ws` client: the welcome and its
// keepalive timeout, keepalives, the close codes (inbound traffic, unused), and delivery: an admin
// write, or a write of the Helix API (PUT /users), reaches a subscriber as the platform's
// notification while the read API shows the change;
// a revocation reaches it and the socket stays open.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, it } from 'node:test';
import WebSocket from 'ws';
import { buildApp } from '../../src/app.ts';
import { eventType } from '../../src/eventsub/types.ts';
import { openStore } from '../../src/store/db.ts';
import { bearer, forEachStore, portOf, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';

const ADMIN_TOKEN = 'admin-token-0123456789-0123456789-abcdef';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
const NANO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

// biome-ignore lint/suspicious/noExplicitAny: messages are checked field by field
type Message = { metadata: Record<string, string>; payload: any };

interface Client {
  ws: WebSocket;
  /** the next message not yet taken, and when it arrived (Date.now()) */
  next(timeoutMs?: number): Promise<Message & { at: number }>;
  closed: Promise<{ code: number; reason: string }>;
}

function connect(t: TestApp, query = ''): Promise<Client> {
  const ws = new WebSocket(`ws://127.0.0.1:${portOf(t.app)}/ws${query}`);
  const queue: (Message & { at: number })[] = [];
  const waiting: ((m: Message & { at: number }) => void)[] = [];
  ws.on('message', (data) => {
    const m = { ...(JSON.parse(String(data)) as Message), at: Date.now() };
    const w = waiting.shift();
    if (w) w(m);
    else queue.push(m);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  const client: Client = {
    ws,
    closed,
    next(timeoutMs = 5000) {
      const m = queue.shift();
      if (m) return Promise.resolve(m);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no message within ${timeoutMs} ms`)), timeoutMs);
        waiting.push((msg) => {
          clearTimeout(timer);
          resolve(msg);
        });
      });
    },
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(client));
    ws.once('error', reject);
  });
}

/** The upgrade refused: its status and body. */
function refused(t: TestApp, query: string): Promise<{ status: number; body: string }> {
  const ws = new WebSocket(`ws://127.0.0.1:${portOf(t.app)}/ws${query}`);
  ws.on('error', () => {});
  return new Promise((resolve, reject) => {
    ws.on('open', () => reject(new Error('the upgrade was accepted')));
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
  });
}

/** A WebSocket subscription made through the subscriptions API with a user token of `userId`. */
async function subscribe(
  t: TestApp,
  sessionId: string,
  type: string,
  condition: Record<string, string>,
  userId: number,
): Promise<string> {
  const et = eventType(type);
  assert.ok(et && t.seed);
  const scopes = type === 'channel.follow' ? ['moderator:read:followers'] : [];
  const res = await t.inject({
    method: 'POST',
    url: '/helix/eventsub/subscriptions',
    headers: {
      ...bearer(await t.userToken(scopes, userId)),
      'client-id': t.seed.demoClientId,
      'content-type': 'application/json',
    },
    payload: JSON.stringify({
      type,
      version: et.version,
      condition,
      transport: { method: 'websocket', session_id: sessionId },
    }),
  });
  assert.equal(res.statusCode, 202, res.body);
  return res.json().data[0].id as string;
}

/** A subscription revoked through the admin API, with `status`. */
async function revoke(t: TestApp, id: string, status: string): Promise<void> {
  const res = await t.inject({
    method: 'POST',
    url: `/admin/eventsub/subscriptions/${id}/revoke`,
    headers: admin,
    payload: JSON.stringify({ status }),
  });
  assert.equal(res.statusCode, 200, res.body);
}

/** A subscription deleted through the subscriptions API, with a user token of `userId`. */
async function unsubscribe(t: TestApp, id: string, userId: number): Promise<void> {
  const res = await t.inject({
    method: 'DELETE',
    url: `/helix/eventsub/subscriptions?id=${id}`,
    headers: { ...bearer(await t.userToken([], userId)), 'client-id': t.seed?.demoClientId as string },
  });
  assert.equal(res.statusCode, 204, res.body);
}

const sessionRow = (t: TestApp, id: string) =>
  t.store.db.selectFrom('eventsub_sessions').selectAll().where('id', '=', id).executeTakeFirst();
const subscriptionRow = (t: TestApp, id: string) =>
  t.store.db.selectFrom('eventsub_subscriptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

/** The platform's message id: a UUID (version 8) of the SHA-256 of `<subscription id>/<event id>`. */
function expectedMessageId(subscriptionId: string, eventId: number): string {
  const b = createHash('sha256').update(`${subscriptionId}/${eventId}`).digest();
  b[6] = ((b[6] as number) & 0x0f) | 0x80;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const h = b.subarray(0, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

forEachStore('EventSub WebSocket /ws', (kind: StoreKind) => {
  let t: TestApp;
  let token: string;
  // Opened first and never subscribed: the last test reads its keepalive and its 4003, which take
  // 10 s; the other tests run meanwhile.
  let idle: Client;
  const users = ['996001', '996002', '996003'];

  before(async () => {
    t = await startTestApp(kind, { users: 40, config: { adminToken: ADMIN_TOKEN } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    idle = await connect(t);
    token = await t.appToken();
    const game = await t.inject({
      method: 'POST',
      url: '/admin/games',
      headers: admin,
      payload: JSON.stringify({ id: '996500', name: 'WebSocket Game' }),
    });
    assert.equal(game.statusCode, 201, game.body);
    for (const [i, id] of users.entries()) {
      const res = await t.inject({
        method: 'POST',
        url: '/admin/users',
        headers: admin,
        payload: JSON.stringify({
          id,
          login: `ws_user_${i}`,
          display_name: `WS_User_${i}`,
          broadcaster_type: '',
          description: '',
          created_at: '2024-01-01T00:00:00Z',
          email: `ws_user_${i}@example.com`,
        }),
      });
      assert.equal(res.statusCode, 201, res.body);
    }
  });
  after(() => t.close());

  it('welcomes a connection with its session, the timestamps with nanoseconds on the real clock', async () => {
    const c = await connect(t);
    const m = await c.next();
    assert.deepEqual(Object.keys(m.metadata), ['message_id', 'message_type', 'message_timestamp']);
    assert.equal(m.metadata.message_type, 'session_welcome');
    assert.match(m.metadata.message_id as string, UUID);
    assert.match(m.metadata.message_timestamp as string, NANO_TIME);
    // The real clock, not the server's (pinned to 2026-06-15 in tests): receivers drop old messages.
    assert.ok(Math.abs(Date.parse(m.metadata.message_timestamp as string) - Date.now()) < 60_000);
    const s = m.payload.session;
    assert.deepEqual(Object.keys(s), [
      'id',
      'status',
      'connected_at',
      'keepalive_timeout_seconds',
      'reconnect_url',
      'recovery_url',
    ]);
    assert.equal(s.status, 'connected');
    assert.equal(s.keepalive_timeout_seconds, 10);
    assert.equal(s.reconnect_url, null);
    assert.equal(s.recovery_url, null);
    assert.match(s.connected_at, NANO_TIME);
    assert.ok(Date.parse(s.connected_at) <= Date.parse(m.metadata.message_timestamp as string));
    const row = await sessionRow(t, s.id);
    assert.equal(row?.status, 'connected');
    assert.equal(row?.keepalive_seconds, 10);
    assert.equal(Number(row?.connected_at), Date.parse(s.connected_at));
    c.ws.close();
    assert.equal((await c.closed).code, 1005);
  });

  it('brings keepalive_timeout_seconds to 10..600 and refuses one that is not an integer', async () => {
    for (const [given, got] of [
      ['30', 30],
      ['600', 600],
      ['5', 10],
      ['-3', 10],
      ['100000', 600],
    ] as const) {
      const c = await connect(t, `?keepalive_timeout_seconds=${given}`);
      assert.equal((await c.next()).payload.session.keepalive_timeout_seconds, got, given);
      c.ws.close();
    }
    for (const given of ['abc', '1.5', '', '1e3', '10&keepalive_timeout_seconds=20']) {
      const res = await refused(t, `?keepalive_timeout_seconds=${given}`);
      assert.equal(res.status, 400, given);
      const body = JSON.parse(res.body);
      assert.equal(body.error, 'Bad Request');
      assert.match(body.message, /"keepalive_timeout_seconds"/);
    }
    const plain = await t.get('/ws');
    assert.equal(plain.statusCode, 426);
    assert.equal(plain.json().status, 426);
  });

  it('closes 4001 on a frame from the client, 1009 on a large one, and ends the session and its subscriptions', async () => {
    for (const [send, code] of [
      [(ws: WebSocket) => ws.send('{"hello": 1}'), 4001],
      [(ws: WebSocket) => ws.send(Buffer.alloc(64)), 4001],
      [(ws: WebSocket) => ws.send(Buffer.alloc(64 * 1024)), 1009],
    ] as const) {
      const c = await connect(t);
      const session = (await c.next()).payload.session.id;
      const sub = await subscribe(
        t,
        session,
        'stream.online',
        { broadcaster_user_id: users[0] as string },
        996001,
      );
      send(c.ws);
      assert.equal((await c.closed).code, code);
      // The row goes and the subscription is disabled in one transaction, after the close.
      for (let i = 0; i < 100 && (await sessionRow(t, session)); i++)
        await new Promise((r) => setTimeout(r, 20));
      assert.equal(await sessionRow(t, session), undefined);
      const row = await subscriptionRow(t, sub);
      assert.equal(row.status, 'websocket_received_inbound_traffic');
      // the wall clock, as every EventSub time (a message's, a subscription's created_at)
      assert.ok(Math.abs(Number(row.disabled_at) - Date.now()) < 5000);
    }
    // A close by the client: websocket_disconnected.
    const c = await connect(t);
    const session = (await c.next()).payload.session.id;
    const sub = await subscribe(
      t,
      session,
      'stream.online',
      { broadcaster_user_id: users[0] as string },
      996001,
    );
    c.ws.close(1000);
    await c.closed;
    for (let i = 0; i < 100 && (await sessionRow(t, session)); i++)
      await new Promise((r) => setTimeout(r, 20));
    assert.equal((await subscriptionRow(t, sub)).status, 'websocket_disconnected');
  });

  it('delivers stream.online and stream.offline of admin writes as the read API shows them, and only those subscribed', async () => {
    const c = await connect(t);
    const session = (await c.next()).payload.session.id;
    const broadcaster = users[1] as string;
    const online = await subscribe(t, session, 'stream.online', { broadcaster_user_id: broadcaster }, 996002);
    const offline = await subscribe(
      t,
      session,
      'stream.offline',
      { broadcaster_user_id: broadcaster },
      996002,
    );
    const goLive = (userId: string, id: string) =>
      t.inject({
        method: 'POST',
        url: '/admin/streams',
        headers: admin,
        payload: JSON.stringify({
          id,
          user_id: userId,
          game_id: '996500',
          title: 'Live now',
          tags: [],
          viewer_count: 5,
          started_at: '2026-06-15T11:30:00Z',
          language: 'en',
          is_mature: false,
        }),
      });
    // Another channel's stream first: not subscribed, not delivered.
    assert.equal((await goLive(users[2] as string, '97000002')).statusCode, 201);
    assert.equal((await goLive(broadcaster, '97000001')).statusCode, 201);
    const m = await c.next();
    assert.deepEqual(Object.keys(m.metadata), [
      'message_id',
      'message_type',
      'message_timestamp',
      'subscription_type',
      'subscription_version',
    ]);
    assert.equal(m.metadata.message_type, 'notification');
    assert.equal(m.metadata.subscription_type, 'stream.online');
    assert.equal(m.metadata.subscription_version, '1');
    assert.match(m.metadata.message_timestamp as string, NANO_TIME);
    const eventId = await t.store.db
      .selectFrom('events')
      .select('id')
      .where('match_key', '=', `stream.online:${broadcaster}`)
      .executeTakeFirstOrThrow();
    assert.equal(m.metadata.message_id, expectedMessageId(online, Number(eventId.id)));
    assert.match(m.metadata.message_id as string, UUID);
    const sub = m.payload.subscription;
    assert.deepEqual(
      { ...sub, created_at: undefined },
      {
        id: online,
        status: 'enabled',
        type: 'stream.online',
        version: '1',
        condition: { broadcaster_user_id: broadcaster },
        transport: { method: 'websocket', session_id: session },
        created_at: undefined,
        cost: 0,
      },
    );
    assert.match(sub.created_at, NANO_TIME);
    const stream = (await t.get(`/helix/streams?user_id=${broadcaster}`, bearer(token))).json().data[0];
    assert.deepEqual(m.payload.event, {
      id: stream.id,
      broadcaster_user_id: broadcaster,
      broadcaster_user_login: stream.user_login,
      broadcaster_user_name: stream.user_name,
      type: 'live',
      started_at: stream.started_at,
    });

    const del = await t.inject({ method: 'DELETE', url: '/admin/streams/97000002', headers: admin });
    assert.equal(del.statusCode, 204, del.body);
    const del2 = await t.inject({ method: 'DELETE', url: '/admin/streams/97000001', headers: admin });
    assert.equal(del2.statusCode, 204, del2.body);
    const off = await c.next();
    assert.equal(off.metadata.subscription_type, 'stream.offline');
    assert.equal(off.payload.subscription.id, offline);
    assert.deepEqual(off.payload.event, {
      broadcaster_user_id: broadcaster,
      broadcaster_user_login: stream.user_login,
      broadcaster_user_name: stream.user_name,
    });
    assert.deepEqual((await t.get(`/helix/streams?user_id=${broadcaster}`, bearer(token))).json().data, []);
    c.ws.close();
  });

  it('delivers user.update with the email only to a subscriber granted user:read:email', async () => {
    const [granted, notGranted] = [Number(users[0]), Number(users[1])];
    const withScope = await connect(t);
    const without = await connect(t);
    const s1 = (await withScope.next()).payload.session.id;
    const s2 = (await without.next()).payload.session.id;
    // Tokens of the demo client that can still be used: one with user:read:email, one without.
    await t.userToken(['user:read:email'], granted);
    await t.userToken(['user:read:follows'], notGranted);
    await subscribe(t, s1, 'user.update', { user_id: String(granted) }, granted);
    await subscribe(t, s2, 'user.update', { user_id: String(notGranted) }, notGranted);
    for (const id of [granted, notGranted]) {
      const res = await t.inject({
        method: 'PATCH',
        url: `/admin/users/${id}`,
        headers: admin,
        payload: JSON.stringify({ description: 'Now with a description' }),
      });
      assert.equal(res.statusCode, 200, res.body);
    }
    const a = (await withScope.next()).payload.event;
    const b = (await without.next()).payload.event;
    assert.deepEqual(a, {
      user_id: String(granted),
      user_login: 'ws_user_0',
      user_name: 'WS_User_0',
      email: 'ws_user_0@example.com',
      email_verified: true,
      description: 'Now with a description',
    });
    assert.deepEqual(b, {
      user_id: String(notGranted),
      user_login: 'ws_user_1',
      user_name: 'WS_User_1',
      email: '',
      email_verified: true,
      description: 'Now with a description',
    });
    withScope.ws.close();
    without.ws.close();
  });

  it("delivers user.update when the user's own PUT /users changes the description, as GET /users then shows it", async () => {
    const user = Number(users[2]);
    const c = await connect(t);
    const session = (await c.next()).payload.session.id;
    // The user granted the client user:read:email (a token of it that can still be used) before
    // the subscription was made: the notification carries the email.
    const edit = await t.userToken(['user:edit', 'user:read:email'], user);
    const sub = await subscribe(t, session, 'user.update', { user_id: String(user) }, user);
    const res = await t.inject({
      method: 'PUT',
      url: '/helix/users?description=Changed%20through%20Helix',
      headers: { ...bearer(edit), 'client-id': t.seed?.demoClientId as string },
    });
    assert.equal(res.statusCode, 200, res.body);
    const m = await c.next();
    assert.equal(m.metadata.message_type, 'notification');
    assert.equal(m.metadata.subscription_type, 'user.update');
    assert.equal(m.payload.subscription.id, sub);
    assert.deepEqual(m.payload.event, {
      user_id: String(user),
      user_login: 'ws_user_2',
      user_name: 'WS_User_2',
      email: 'ws_user_2@example.com',
      email_verified: true,
      description: 'Changed through Helix',
    });
    const read = await t.get(`/helix/users?id=${user}`, bearer(token));
    assert.equal(read.json().data[0].description, m.payload.event.description);
    // The same description again is no change: no event (the next message would be it).
    const again = await t.inject({
      method: 'PUT',
      url: '/helix/users?description=Changed%20through%20Helix',
      headers: { ...bearer(edit), 'client-id': t.seed?.demoClientId as string },
    });
    assert.equal(again.statusCode, 200);
    const last = await t.inject({
      method: 'PUT',
      url: '/helix/users?description=',
      headers: { ...bearer(edit), 'client-id': t.seed?.demoClientId as string },
    });
    assert.equal(last.statusCode, 200);
    assert.equal(
      (await c.next()).payload.event.description,
      '',
      'the next change, not a repeat of the first',
    );
    await unsubscribe(t, sub, user);
    c.ws.close();
  });

  it("delivers channel.update (version 2) when the broadcaster's PATCH /channels changes the channel, as GET /channels then shows it", async () => {
    const user = Number(users[1]);
    const c = await connect(t);
    const session = (await c.next()).payload.session.id;
    const sub = await subscribe(t, session, 'channel.update', { broadcaster_user_id: String(user) }, user);
    const manage = await t.userToken(['channel:manage:broadcast'], user);
    const patch = (body: object) =>
      t.inject({
        method: 'PATCH',
        url: `/helix/channels?broadcaster_id=${user}`,
        headers: {
          ...bearer(manage),
          'client-id': t.seed?.demoClientId as string,
          'content-type': 'application/json',
        },
        payload: JSON.stringify(body),
      });
    const res = await patch({
      title: 'Changed through Helix',
      game_id: '996500',
      broadcaster_language: 'de',
      content_classification_labels: [{ id: 'Gambling', is_enabled: true }],
    });
    assert.equal(res.statusCode, 204, res.body);
    const m = await c.next();
    assert.equal(m.metadata.message_type, 'notification');
    assert.equal(m.metadata.subscription_type, 'channel.update');
    assert.equal(m.metadata.subscription_version, '2');
    assert.equal(m.payload.subscription.id, sub);
    assert.deepEqual(m.payload.event, {
      broadcaster_user_id: String(user),
      broadcaster_user_login: 'ws_user_1',
      broadcaster_user_name: 'WS_User_1',
      title: 'Changed through Helix',
      language: 'de',
      category_id: '996500',
      category_name: 'WebSocket Game',
      content_classification_labels: ['Gambling'],
    });
    const read = (await t.get(`/helix/channels?broadcaster_id=${user}`, bearer(token))).json().data[0];
    assert.equal(read.title, m.payload.event.title);
    assert.equal(read.game_name, m.payload.event.category_name);
    // Tags alone are not in the payload: no event. The next change is the next message.
    assert.equal((await patch({ tags: ['Chill'] })).statusCode, 204);
    assert.equal((await patch({ title: 'Again' })).statusCode, 204);
    const next = await c.next();
    assert.equal(next.payload.event.title, 'Again', 'the next change, not the tags');
    await unsubscribe(t, sub, user);
    c.ws.close();
  });

  it('sends a revocation and keeps the socket open: its other subscriptions still deliver', async () => {
    const c = await connect(t);
    const session = (await c.next()).payload.session.id;
    const broadcaster = users[2] as string;
    const online = await subscribe(t, session, 'stream.online', { broadcaster_user_id: broadcaster }, 996003);
    const offline = await subscribe(
      t,
      session,
      'stream.offline',
      { broadcaster_user_id: broadcaster },
      996003,
    );
    await revoke(t, online, 'authorization_revoked');
    const m = await c.next();
    assert.equal(m.metadata.message_type, 'revocation');
    assert.equal(m.metadata.subscription_type, 'stream.online');
    assert.equal(m.metadata.subscription_version, '1');
    assert.equal(m.payload.subscription.id, online);
    assert.equal(m.payload.subscription.status, 'authorization_revoked');
    assert.deepEqual(m.payload.subscription.transport, { method: 'websocket', session_id: session });
    assert.equal(m.payload.event, undefined);
    const live = await t.inject({
      method: 'POST',
      url: '/admin/streams',
      headers: admin,
      payload: JSON.stringify({
        id: '97000003',
        user_id: broadcaster,
        game_id: '996500',
        title: 'Revoked',
        tags: [],
        viewer_count: 1,
        started_at: '2026-06-15T11:45:00Z',
        language: 'en',
        is_mature: false,
      }),
    });
    assert.equal(live.statusCode, 201, live.body);
    const del = await t.inject({ method: 'DELETE', url: '/admin/streams/97000003', headers: admin });
    assert.equal(del.statusCode, 204, del.body);
    // The online event went to no one; the offline one arrives on the same socket.
    const next = await c.next();
    assert.equal(next.metadata.subscription_type, 'stream.offline');
    assert.equal(next.payload.subscription.id, offline);
    c.ws.close();
  });

  it('delivers a write made through another instance on the same store, and nothing after a delete', async () => {
    const otherStore = openStore(t.storeOptions);
    const other = await buildApp({
      config: t.config,
      store: otherStore,
      clock: t.clock,
      secret: t.config.secret as string,
      logger: false,
    });
    try {
      const c = await connect(t);
      const session = (await c.next()).payload.session.id;
      const broadcaster = users[0] as string;
      const follow = await subscribe(
        t,
        session,
        'channel.follow',
        { broadcaster_user_id: broadcaster, moderator_user_id: broadcaster },
        Number(broadcaster),
      );
      const online = await subscribe(
        t,
        session,
        'stream.online',
        { broadcaster_user_id: broadcaster },
        Number(broadcaster),
      );
      const followed = (user: string) =>
        other.inject({
          method: 'POST',
          url: '/admin/follows',
          headers: admin,
          payload: JSON.stringify({
            broadcaster_id: broadcaster,
            user_id: user,
            followed_at: '2026-06-15T11:50:00Z',
          }),
        });
      const res = await followed(users[1] as string);
      assert.equal(res.statusCode, 201, res.body);
      const m = await c.next();
      assert.equal(m.metadata.subscription_type, 'channel.follow');
      assert.equal(m.metadata.subscription_version, '2');
      assert.equal(m.payload.subscription.id, follow);
      assert.deepEqual(m.payload.event, {
        user_id: users[1],
        user_login: 'ws_user_1',
        user_name: 'WS_User_1',
        broadcaster_user_id: broadcaster,
        broadcaster_user_login: 'ws_user_0',
        broadcaster_user_name: 'WS_User_0',
        followed_at: '2026-06-15T11:50:00Z',
      });
      const listed = (
        await t.get(
          `/helix/channels/followers?broadcaster_id=${broadcaster}`,
          bearer(await t.userToken(['moderator:read:followers'], Number(broadcaster))),
        )
      ).json();
      assert.deepEqual(
        listed.data.map((f: { user_id: string; followed_at: string }) => [f.user_id, f.followed_at]),
        [[users[1], '2026-06-15T11:50:00Z']],
      );
      // Deleted: the next follow goes to no one; the stream after it arrives.
      await unsubscribe(t, follow, Number(broadcaster));
      assert.equal((await followed(users[2] as string)).statusCode, 201);
      const live = await other.inject({
        method: 'POST',
        url: '/admin/streams',
        headers: admin,
        payload: JSON.stringify({
          id: '97000004',
          user_id: broadcaster,
          game_id: '996500',
          title: 'After the delete',
          tags: [],
          viewer_count: 1,
          started_at: '2026-06-15T11:55:00Z',
          language: 'en',
          is_mature: false,
        }),
      });
      assert.equal(live.statusCode, 201, live.body);
      const next = await c.next();
      assert.equal(next.metadata.subscription_type, 'stream.online');
      assert.equal(next.payload.subscription.id, online);
      c.ws.close();
    } finally {
      await other.close();
      await otherStore.close();
    }
  });

  it('sends a keepalive after 9 s of silence, and closes 4003 a session with no subscription 10 s after its welcome', async () => {
    const welcome = await idle.next();
    assert.equal(welcome.metadata.message_type, 'session_welcome');
    const session = welcome.payload.session.id;
    const keepalive = await idle.next(12_000);
    assert.equal(keepalive.metadata.message_type, 'session_keepalive');
    assert.deepEqual(keepalive.payload, {});
    assert.match(keepalive.metadata.message_timestamp as string, NANO_TIME);
    // keepalive_timeout_seconds less one second; timers fire late, never early.
    assert.ok(keepalive.at - welcome.at >= 8900, `${keepalive.at - welcome.at} ms`);
    const closed = await idle.closed;
    assert.deepEqual(closed, { code: 4003, reason: 'connection unused' });
    for (let i = 0; i < 100 && (await sessionRow(t, session)); i++)
      await new Promise((r) => setTimeout(r, 20));
    assert.equal(await sessionRow(t, session), undefined);
  });
});
