// The order of delivery inside one read of the outbox's tail (docs/eventsub-design.md, section 3):
// a WebSocket subscription joins at its place in the events' order even when its control row and
// the events around it are read in one batch. It gets the events after its own control row and
// none before; an event between two control rows reaches exactly the subscriptions enabled before
// it; a delete or a revocation later in the batch still ends it after the events before it. And
// the grants read for a batch of user.update subscriptions are each subscriber's own.
//
// The sockets are held by a second instance on the same store (its own store handle of one
// connection); the writes go through the test app's API. To make the holder's tail read a run of
// writes in one batch, the test holds that one connection in an open transaction that runs
// nothing while it writes: every query of the holder waits for it (SQLite: its driver's queue;
// PostgreSQL: a pool of one), and once it ends the tail reads everything written meanwhile at
// once. The holder's delivery code, its store and the API are the real ones.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import WebSocket from 'ws';
import { buildApp } from '../../src/app.ts';
import { eventType } from '../../src/eventsub/types.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { bearer, forEachStore, portOf, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';

const ADMIN_TOKEN = 'admin-token-0123456789-0123456789-abcdef';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

// biome-ignore lint/suspicious/noExplicitAny: messages are checked field by field
type Message = { metadata: Record<string, string>; payload: any };

interface Client {
  ws: WebSocket;
  session: string;
  /** the next message not yet taken */
  next(timeoutMs?: number): Promise<Message>;
}

/** A socket to `port`, welcomed: its session id. */
async function connect(port: number): Promise<Client> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
  const queue: Message[] = [];
  const waiting: ((m: Message) => void)[] = [];
  ws.on('message', (data) => {
    const m = JSON.parse(String(data)) as Message;
    const w = waiting.shift();
    if (w) w(m);
    else queue.push(m);
  });
  const next = (timeoutMs = 5000): Promise<Message> => {
    const m = queue.shift();
    if (m) return Promise.resolve(m);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no message within ${timeoutMs} ms`)), timeoutMs);
      waiting.push((msg) => {
        clearTimeout(timer);
        resolve(msg);
      });
    });
  };
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const welcome = await next();
  assert.equal(welcome.metadata.message_type, 'session_welcome');
  return { ws, session: welcome.payload.session.id as string, next };
}

/**
 * Holds `store`'s one connection in a transaction that runs nothing, from when it has it until the
 * returned function is called (which waits for the transaction's end).
 */
async function hold(store: Store): Promise<() => Promise<void>> {
  let release = () => {};
  const released = new Promise<void>((r) => {
    release = r;
  });
  let held = () => {};
  const holding = new Promise<void>((r) => {
    held = r;
  });
  // Read only: on SQLite it takes no lock on the file (a read-write one would keep the writer out).
  const done = store.db
    .transaction()
    .setAccessMode('read only')
    .execute(async () => {
      held();
      await released;
    });
  await holding;
  return async () => {
    release();
    await done;
  };
}

forEachStore('EventSub: the order of delivery within one batch of the tail', (kind: StoreKind) => {
  let t: TestApp;
  let holderStore: Store;
  let holder: Awaited<ReturnType<typeof buildApp>>;
  let port: number;
  // A broadcaster whose follows are the events, users granted and not granted user:read:email, and
  // followers.
  const [B, GRANTED, NOT_GRANTED] = ['997001', '997003', '997004'];
  const followers = Array.from({ length: 10 }, (_, i) => String(997100 + i));

  before(async () => {
    t = await startTestApp(kind, { users: 20, config: { adminToken: ADMIN_TOKEN } });
    for (const [i, id] of [B, '997002', GRANTED, NOT_GRANTED, ...followers].entries()) {
      const res = await t.inject({
        method: 'POST',
        url: '/admin/users',
        headers: admin,
        payload: JSON.stringify({
          id,
          login: `batch_user_${i}`,
          display_name: `Batch_User_${i}`,
          broadcaster_type: '',
          description: '',
          created_at: '2024-01-01T00:00:00Z',
          email: `batch_user_${i}@example.com`,
        }),
      });
      assert.equal(res.statusCode, 201, res.body);
    }
    holderStore = openStore({ ...t.storeOptions, poolSize: 1 });
    holder = await buildApp({
      config: t.config,
      store: holderStore,
      clock: t.clock,
      secret: t.config.secret as string,
      logger: false,
    });
    await holder.listen({ port: 0, host: '127.0.0.1' });
    port = portOf(holder);
  });
  after(async () => {
    await holder?.close();
    await holderStore?.close();
    await t.close();
  });

  /** A WebSocket subscription made through the test app's API with a user token of `userId`. */
  const subscribe = async (session: string, type: string, condition: object, userId: string) => {
    const et = eventType(type);
    assert.ok(et && t.seed);
    const scopes = type === 'channel.follow' ? ['moderator:read:followers'] : [];
    const res = await t.inject({
      method: 'POST',
      url: '/helix/eventsub/subscriptions',
      headers: {
        ...bearer(await t.userToken(scopes, Number(userId))),
        'client-id': t.seed.demoClientId,
        'content-type': 'application/json',
      },
      payload: JSON.stringify({
        type,
        version: et.version,
        condition,
        transport: { method: 'websocket', session_id: session },
      }),
    });
    assert.equal(res.statusCode, 202, res.body);
    return res.json().data[0].id as string;
  };
  const followOf = (broadcaster: string) => ({
    broadcaster_user_id: broadcaster,
    moderator_user_id: broadcaster,
  });
  const follow = async (broadcaster: string, user: string) => {
    const res = await t.inject({
      method: 'POST',
      url: '/admin/follows',
      headers: admin,
      payload: JSON.stringify({
        broadcaster_id: broadcaster,
        user_id: user,
        followed_at: '2026-06-15T12:00:00Z',
      }),
    });
    assert.equal(res.statusCode, 201, res.body);
  };
  /** The next message of `c`: a channel.follow notification of `broadcaster` by `user`, to `sub`. */
  const followed = async (c: Client, sub: string, broadcaster: string, user: string) => {
    const m = await c.next();
    assert.equal(m.metadata.message_type, 'notification', JSON.stringify(m));
    assert.deepEqual(
      [m.payload.subscription.id, m.payload.event.broadcaster_user_id, m.payload.event.user_id],
      [sub, broadcaster, user],
    );
  };
  /** B's description changed to `text` (a user.update event of B). */
  const updateB = async (text: string) => {
    const res = await t.inject({
      method: 'PATCH',
      url: `/admin/users/${B}`,
      headers: admin,
      payload: JSON.stringify({ description: text }),
    });
    assert.equal(res.statusCode, 200, res.body);
  };
  /** The next message of `c`: B's user.update notification with `text`, to `sub`. */
  const updatedB = async (c: Client, sub: string, text: string) => {
    const m = await c.next();
    assert.equal(m.metadata.message_type, 'notification', JSON.stringify(m));
    assert.deepEqual([m.payload.subscription.id, m.payload.event.description], [sub, text]);
  };

  let c1: Client;
  let c2: Client;
  let s1: string;
  let s2: string;
  /** each session's user.update of B: the writes that say below that nothing else came */
  let u1: string;
  let u2: string;

  it('a subscription made amid events read in one batch gets those after its control row, none before', async () => {
    c1 = await connect(port);
    c2 = await connect(port);
    // Both sessions subscribe to B's user.update first, outside any batch.
    u1 = await subscribe(c1.session, 'user.update', { user_id: B }, B);
    u2 = await subscribe(c2.session, 'user.update', { user_id: B }, B);
    await updateB('before');
    await updatedB(c1, u1, 'before');
    await updatedB(c2, u2, 'before');
    const [f1, f2, f3] = followers as [string, string, string];

    const release = await hold(holderStore);
    try {
      await follow(B, f1); // before any subscription to B: to no one
      s1 = await subscribe(c1.session, 'channel.follow', followOf(B), B);
      await follow(B, f2); // after s1's control row, before s2's: to s1 only
      s2 = await subscribe(c2.session, 'channel.follow', followOf(B), B);
      await follow(B, f3); // after both
    } finally {
      await release();
    }
    await followed(c1, s1, B, f2);
    await followed(c1, s1, B, f3);
    await followed(c2, s2, B, f3);
    // Then the next write: the next message of each socket, so none of the follows above came to a
    // socket it was not listed for.
    await updateB('after the first batch');
    await updatedB(c1, u1, 'after the first batch');
    await updatedB(c2, u2, 'after the first batch');
  });

  it('a delete and a revocation after an event in one batch: the event is delivered, the events after them are not', async () => {
    const [f5, f6] = followers.slice(5) as [string, string];
    const release = await hold(holderStore);
    try {
      await follow(B, f5); // to s1 and s2
      const del = await t.inject({
        method: 'DELETE',
        url: `/helix/eventsub/subscriptions?id=${s1}`,
        headers: { ...bearer(await t.userToken([], Number(B))), 'client-id': t.seed?.demoClientId as string },
      });
      assert.equal(del.statusCode, 204, del.body);
      const rev = await t.inject({
        method: 'POST',
        url: `/admin/eventsub/subscriptions/${s2}/revoke`,
        headers: admin,
        payload: JSON.stringify({ status: 'authorization_revoked' }),
      });
      assert.equal(rev.statusCode, 200, rev.body);
      await follow(B, f6); // to no one
    } finally {
      await release();
    }
    await followed(c1, s1, B, f5);
    await followed(c2, s2, B, f5);
    const revoked = await c2.next();
    assert.equal(revoked.metadata.message_type, 'revocation');
    assert.equal(revoked.payload.subscription.id, s2);
    assert.equal(revoked.payload.subscription.status, 'authorization_revoked');
    await updateB('after the second batch');
    await updatedB(c1, u1, 'after the second batch');
    await updatedB(c2, u2, 'after the second batch');
    c1.ws.close();
    c2.ws.close();
  });

  it('user.update subscriptions made in one batch each get the email as their own grants say', async () => {
    const withScope = await connect(port);
    const without = await connect(port);
    await t.userToken(['user:read:email'], Number(GRANTED));
    await t.userToken(['user:read:follows'], Number(NOT_GRANTED));
    const release = await hold(holderStore);
    try {
      await subscribe(withScope.session, 'user.update', { user_id: GRANTED }, GRANTED as string);
      await subscribe(without.session, 'user.update', { user_id: NOT_GRANTED }, NOT_GRANTED as string);
      for (const id of [GRANTED, NOT_GRANTED]) {
        const res = await t.inject({
          method: 'PATCH',
          url: `/admin/users/${id}`,
          headers: admin,
          payload: JSON.stringify({ description: 'Updated in one batch' }),
        });
        assert.equal(res.statusCode, 200, res.body);
      }
    } finally {
      await release();
    }
    const a = (await withScope.next()).payload.event;
    const b = (await without.next()).payload.event;
    assert.deepEqual(
      [a.user_id, a.email, a.description],
      [GRANTED, 'batch_user_2@example.com', 'Updated in one batch'],
    );
    assert.deepEqual([b.user_id, b.email, b.description], [NOT_GRANTED, '', 'Updated in one batch']);
    withScope.ws.close();
    without.ws.close();
  });

  it('a control row whose payload does not parse is passed over: the tail reads on', async () => {
    // Only helixd writes these rows, so one that does not parse is written here directly (the
    // public surface cannot make it); a tail that threw on it would read the same batch forever.
    const c = await connect(port);
    const u = await subscribe(c.session, 'user.update', { user_id: B }, B);
    const release = await hold(holderStore);
    try {
      await t.store.db
        .insertInto('events')
        .values([
          {
            kind: 'control',
            type: 'subscription.enabled',
            match_key: `session:${c.session}`,
            payload: '{not json',
            at: Date.now(),
          },
          {
            kind: 'control',
            type: 'subscription.deleted',
            match_key: `session:${c.session}`,
            payload: '[]',
            at: Date.now(),
          },
        ])
        .execute();
      await updateB('after a row that does not parse');
    } finally {
      await release();
    }
    await updatedB(c, u, 'after a row that does not parse');
    c.ws.close();
  });
});
