// The EventSub subscriptions API (docs/eventsub-design.md, section 2), through HTTP on both stores:
// POST (every refusal names its field and creates nothing; 403, costs, limits, 409), GET (filters,
// pages, totals), DELETE, the /mock and bare paths, /openapi.json, and the revocations the token
// service and the write path make.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import WebSocket from 'ws';
import { mintToken } from '../../../src/auth/tokens.ts';
import { EVENT_TYPES } from '../../../src/eventsub/types.ts';
import { forEachStore, portOf, postForm, startTestApp, type TestApp } from '../../support/apps.ts';
import type { StoreKind } from '../../support/stores.ts';

const ADMIN_TOKEN = 'eventsub-admin-token-0123456789-0123456789';
const PATH = '/helix/eventsub/subscriptions';
/**
 * The webhooks' callback: a receiver that takes each request and never answers, so a subscription
 * stays `webhook_callback_verification_pending` while these tests look at it (its verification
 * waits for an answer for 10 s: test/eventsub/webhooks.test.ts covers what follows). Unref'd: it
 * does not keep the process alive.
 */
const silent = createServer((req) => req.socket.unref());
await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
silent.unref();
const CALLBACK = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/callback`;
const SECRET = 's3cr3t-0123456789';

type Json = Record<string, unknown>;
interface Sub {
  id: string;
  status: string;
  type: string;
  version: string;
  cost: number;
  condition: Record<string, string>;
  transport: Record<string, string>;
  created_at: string;
}
interface Listing {
  data: Sub[];
  total: number;
  total_cost: number;
  max_total_cost: number;
  pagination?: { cursor?: string };
}

const webhook = (type: string, version: string, condition: Json, callback = CALLBACK) => ({
  type,
  version,
  condition,
  transport: { method: 'webhook', callback, secret: SECRET },
});
const websocket = (type: string, version: string, condition: Json, session_id: string) => ({
  type,
  version,
  condition,
  transport: { method: 'websocket', session_id },
});

function describeApi(kind: StoreKind) {
  let t: TestApp;
  let client: string;
  let app: string;
  /** users no token of the demo client names, to be handed out to tests one by one */
  let fresh: number[];
  const next = () => {
    const u = fresh.shift();
    assert.ok(u !== undefined, 'enough users');
    return u;
  };
  const headers = (token: string) => ({ authorization: `Bearer ${token}`, 'client-id': client });
  const post = (body: unknown, token: string, path = PATH, type = 'application/json') =>
    t.inject({
      method: 'POST',
      url: path,
      headers: { ...headers(token), 'content-type': type },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const list = async (token: string, q = '', path = PATH): Promise<Listing> => {
    const res = await t.inject({ method: 'GET', url: `${path}?${q}`, headers: headers(token) });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  const del = (id: string, token: string, path = PATH) =>
    t.inject({ method: 'DELETE', url: `${path}?id=${encodeURIComponent(id)}`, headers: headers(token) });
  const created = (res: LightMyRequestResponse): Sub => {
    assert.equal(res.statusCode, 202, res.body);
    return (res.json() as Listing).data[0] as Sub;
  };
  /** the sockets the tests opened, closed at the end */
  const sockets: WebSocket[] = [];
  /** A connected session: a real socket at /ws; its id, from the welcome. */
  const session = async (): Promise<string> => {
    const ws = new WebSocket(`ws://127.0.0.1:${portOf(t.app)}/ws`);
    sockets.push(ws);
    const welcome = await new Promise<string>((resolve, reject) => {
      ws.once('message', (d) => resolve(String(d)));
      ws.once('error', reject);
    });
    return JSON.parse(welcome).payload.session.id as string;
  };
  const admin = (method: 'POST' | 'DELETE', url: string, payload?: unknown) =>
    t.inject({
      method,
      url,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      ...(payload === undefined ? {} : { payload: payload as Json }),
    });

  before(async () => {
    t = await startTestApp(kind, { users: 60, config: { adminToken: ADMIN_TOKEN } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    client = t.seed?.demoClientId as string;
    app = await t.appToken();
    const users = await t.store.db.selectFrom('users').select('id').orderBy('id').execute();
    const demo = t.seed?.demoUserId;
    fresh = users.map((u) => Number(u.id)).filter((id) => id !== demo);
  });
  after(async () => {
    for (const ws of sockets) ws.close();
    await t.close();
  });

  describe('POST: a webhook subscription with an app token', () => {
    it('answers 202 with the subscription pending verification, its cost and the totals', async () => {
      const b = next();
      const before = await list(app);
      const res = await post(webhook('stream.online', '1', { broadcaster_user_id: String(b) }), app);
      assert.equal(res.statusCode, 202, res.body);
      const body = res.json() as Listing;
      assert.deepEqual(Object.keys(body), ['data', 'total', 'total_cost', 'max_total_cost']);
      const sub = body.data[0] as Sub;
      assert.deepEqual(Object.keys(sub), [
        'id',
        'status',
        'type',
        'version',
        'cost',
        'condition',
        'transport',
        'created_at',
      ]);
      assert.match(sub.id, /^[0-9a-f-]{36}$/);
      assert.equal(sub.status, 'webhook_callback_verification_pending');
      assert.deepEqual(sub.condition, { broadcaster_user_id: String(b) });
      // The secret is never answered.
      assert.deepEqual(sub.transport, { method: 'webhook', callback: CALLBACK });
      assert.match(sub.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
      // Nobody of the condition authorized the client: it costs 1.
      assert.equal(sub.cost, 1);
      assert.equal(body.total, before.total + 1);
      assert.equal(body.total_cost, before.total_cost + 1);
      assert.equal(body.max_total_cost, 10000);
      const after = await list(app, `subscription_id=${sub.id}`);
      assert.deepEqual(after.data, [sub]);
    });

    it('costs 0 when the condition user has a live token of the client, whatever its scopes', async () => {
      const b = next();
      await t.userToken([], b);
      const sub = created(
        await post(webhook('stream.offline', '1', { broadcaster_user_id: String(b) }), app),
      );
      assert.equal(sub.cost, 0);
    });

    it('a token whose access token expired still authorizes while its refresh token is unspent', async () => {
      const b = next();
      await t.userToken(['channel:read:subscriptions'], b, 60);
      t.clock.advance(120_000);
      const sub = created(
        await post(webhook('channel.subscribe', '1', { broadcaster_user_id: String(b) }), app),
      );
      assert.equal(sub.cost, 0);
    });
  });

  describe('POST: refusals name the field and create nothing', () => {
    const refused = async (
      body: unknown,
      status: number,
      message: RegExp,
      token = () => app,
      type = 'application/json',
    ) => {
      const before = await list(token());
      const res = await post(body, token(), PATH, type);
      assert.equal(res.statusCode, status, res.body);
      const err = res.json() as Json;
      assert.equal(err.status, status);
      assert.match(err.message as string, message);
      const after = await list(token());
      assert.equal(after.total, before.total, 'nothing created');
      assert.deepEqual(after.data, before.data);
    };
    const b = () => String(fresh[0]);

    it('a body that is not a JSON object', async () => {
      await refused('', 400, /body must be a JSON object/);
      await refused('[]', 400, /body must be a JSON object/);
      await refused('{', 400, /JSON/i);
      await refused('{"type":"stream.online"}', 415, /Unsupported Media Type/, () => app, 'text/plain');
    });

    it('an unknown type lists the served ones; a wrong version names the served one', async () => {
      await refused(
        webhook('channel.raid', '1', { to_broadcaster_user_id: b() }),
        400,
        new RegExp(`"type".*${EVENT_TYPES.map((e) => e.type.replaceAll('.', '\\.')).join(', ')}`),
      );
      await refused(webhook('channel.follow', '1', { broadcaster_user_id: b() }), 400, /version.*"2"/);
      await refused({ ...webhook('stream.online', '1', {}), version: 1 }, 400, /"version" must be a string/);
    });

    it("the condition: exactly the type's fields, user ids as strings of digits, of users that exist", async () => {
      await refused(webhook('stream.online', '1', {}), 400, /"condition\.broadcaster_user_id"/);
      await refused(
        webhook('stream.online', '1', { broadcaster_user_id: b(), user_id: b() }),
        400,
        /"condition\.user_id" is not accepted/,
      );
      await refused(
        webhook('stream.online', '1', { broadcaster_user_id: Number(b()) }),
        400,
        /"condition\.broadcaster_user_id" must be a string/,
      );
      await refused(
        webhook('stream.online', '1', { broadcaster_user_id: 'abc' }),
        400,
        /"condition\.broadcaster_user_id" must be a user id/,
      );
      await refused(
        webhook('channel.follow', '2', { broadcaster_user_id: b() }),
        400,
        /"condition\.moderator_user_id"/,
      );
      await refused(
        webhook('stream.online', '1', { broadcaster_user_id: '999999999' }),
        400,
        /"condition\.broadcaster_user_id" does not exist/,
      );
      await refused({ ...webhook('stream.online', '1', {}), condition: undefined }, 400, /"condition"/);
    });

    it('the webhook transport: an absolute http(s) callback, a secret of 10 to 100 characters', async () => {
      const cond = { broadcaster_user_id: b() };
      const withTransport = (transport: Json) => ({ ...webhook('stream.online', '1', cond), transport });
      await refused(withTransport({ method: 'carrier-pigeon' }), 400, /"transport\.method"/);
      await refused(withTransport({ method: 'webhook', secret: SECRET }), 400, /"transport\.callback"/);
      for (const callback of ['/relative', 'ftp://example.com/x', 'not a url'])
        await refused(
          withTransport({ method: 'webhook', callback, secret: SECRET }),
          400,
          /"transport\.callback" must be an absolute http\(s\) URL/,
        );
      for (const secret of ['x'.repeat(9), 'x'.repeat(101)])
        await refused(
          withTransport({ method: 'webhook', callback: CALLBACK, secret }),
          400,
          /"transport\.secret" must be 10 to 100/,
        );
      await refused(withTransport({ method: 'webhook', callback: CALLBACK }), 400, /"transport\.secret"/);
      await refused(
        withTransport({ method: 'webhook', callback: CALLBACK, secret: SECRET, session_id: 'x' }),
        400,
        /"transport\.session_id" is not accepted/,
      );
    });

    it('a webhook needs an app token; a WebSocket a user token and a connected session', async () => {
      const user = await t.userToken([]);
      await refused(
        webhook('stream.online', '1', { broadcaster_user_id: b() }),
        400,
        /"webhook" requires an app access token/,
        () => user,
      );
      const sid = await session();
      await refused(
        websocket('stream.online', '1', { broadcaster_user_id: b() }, sid),
        400,
        /"websocket" requires a user access token/,
      );
      await refused(
        websocket('stream.online', '1', { broadcaster_user_id: b() }, randomUUID()),
        400,
        /"transport\.session_id" names no connected WebSocket session/,
        () => user,
      );
    });

    it("user.authorization.revoke: webhook only, for the caller's own client", async () => {
      const user = await t.userToken([]);
      await refused(
        websocket('user.authorization.revoke', '1', { client_id: client }, await session()),
        400,
        /"transport\.method".*webhook only/,
        () => user,
      );
      await refused(
        webhook('user.authorization.revoke', '1', { client_id: 'someoneelse0000000000000000000' }),
        400,
        /"condition\.client_id" must be the client/,
      );
      const sub = created(await post(webhook('user.authorization.revoke', '1', { client_id: client }), app));
      assert.equal(sub.cost, 0);
    });

    it('the production profile requires an https callback', async () => {
      const p = await startTestApp(kind, {
        users: 5,
        config: { profile: 'production', publicUrl: 'https://helixd.example' },
      });
      try {
        const token = await p.appToken();
        const cid = p.seed?.demoClientId as string;
        const b = String(p.seed?.demoUserId);
        const send = (callback: string) =>
          p.inject({
            method: 'POST',
            url: PATH,
            headers: {
              authorization: `Bearer ${token}`,
              'client-id': cid,
              'content-type': 'application/json',
            },
            payload: JSON.stringify(webhook('stream.online', '1', { broadcaster_user_id: b }, callback)),
          });
        const res = await send('http://example.com/cb');
        assert.equal(res.statusCode, 400);
        assert.match(res.json().message, /"transport\.callback" must be an https URL/);
        assert.equal((await send('https://example.com:8443/cb')).statusCode, 202);
      } finally {
        await p.close();
      }
    });
  });

  describe('POST: the 403, judged from the tokens of the client', () => {
    it("a type with scopes: 403 until the condition's user granted one of them to the client", async () => {
      const b = next();
      const body = webhook('channel.subscribe', '1', { broadcaster_user_id: String(b) });
      const forbidden = async () => {
        const res = await post(body, app);
        assert.equal(res.statusCode, 403, res.body);
        assert.deepEqual(res.json(), {
          error: 'Forbidden',
          status: 403,
          message: 'subscription missing proper authorization',
        });
      };
      await forbidden();
      await t.userToken(['moderation:read'], b);
      await forbidden();
      const token = await t.userToken(['channel:read:subscriptions'], b);
      assert.equal(created(await post(body, app)).cost, 0);
      // Revoked: the grant is gone, a new subscription is refused again.
      const res = await postForm(t, '/oauth2/revoke', { client_id: client, token });
      assert.equal(res.statusCode, 200, res.body);
      await forbidden();
    });

    it('channel.follow: the moderator must be the broadcaster or one of its moderators', async () => {
      const b = next();
      const m = next();
      await t.userToken(['moderator:read:followers'], m);
      await t.userToken(['moderator:read:followers'], b);
      const follow = (mod: number, callback = CALLBACK) =>
        webhook(
          'channel.follow',
          '2',
          { broadcaster_user_id: String(b), moderator_user_id: String(mod) },
          callback,
        );
      assert.equal((await post(follow(m), app)).statusCode, 403);
      assert.equal(created(await post(follow(b), app)).cost, 0);
      const made = await admin('POST', '/admin/moderators', {
        broadcaster_id: String(b),
        user_id: String(m),
        created_at: '2026-01-01T00:00:00Z',
      });
      assert.equal(made.statusCode, 201, made.body);
      const sub = created(await post(follow(m), app));
      assert.equal(sub.cost, 0);
      // The moderator removed: the subscription read through it is revoked.
      assert.equal((await admin('DELETE', `/admin/moderators/${b}/${m}`)).statusCode, 204);
      const after = await list(app, `subscription_id=${sub.id}`);
      assert.equal(after.data[0]?.status, 'moderator_removed');
      assert.equal((await post(follow(m), app)).statusCode, 403);
    });
  });

  describe('POST: duplicates', () => {
    it('409 for the same type, version, condition and callback, whatever the key order', async () => {
      const b = next();
      await t.userToken(['moderator:read:followers'], b);
      const first = created(
        await post(
          webhook('channel.follow', '2', { broadcaster_user_id: String(b), moderator_user_id: String(b) }),
          app,
        ),
      );
      const before = await list(app);
      for (const condition of [
        { broadcaster_user_id: String(b), moderator_user_id: String(b) },
        { moderator_user_id: String(b), broadcaster_user_id: String(b) },
      ]) {
        const res = await post(webhook('channel.follow', '2', condition), app);
        assert.equal(res.statusCode, 409, res.body);
        assert.deepEqual(res.json(), {
          error: 'Conflict',
          status: 409,
          message: 'subscription already exists',
        });
      }
      assert.equal((await list(app)).total, before.total);
      // Another callback is another subscription; deleted, the same one may be made again.
      created(
        await post(
          webhook(
            'channel.follow',
            '2',
            { broadcaster_user_id: String(b), moderator_user_id: String(b) },
            'http://localhost:9/other',
          ),
          app,
        ),
      );
      assert.equal((await del(first.id, app)).statusCode, 204);
      created(
        await post(
          webhook('channel.follow', '2', { moderator_user_id: String(b), broadcaster_user_id: String(b) }),
          app,
        ),
      );
    });

    it('two identical requests at once: one 202, one 409 (the unique index decides)', async () => {
      const body = webhook('stream.online', '1', { broadcaster_user_id: String(next()) });
      const answers = await Promise.all([post(body, app), post(body, app), post(body, app)]);
      assert.deepEqual(answers.map((r) => r.statusCode).sort(), [202, 409, 409]);
    });
  });

  describe('POST: WebSocket subscriptions', () => {
    it('202 enabled on a connected session, with its connected_at; the session bound to the user', async () => {
      const u = next();
      const token = await t.userToken(['channel:read:subscriptions'], u);
      const sid = await session();
      const res = await post(
        websocket('channel.subscribe', '1', { broadcaster_user_id: String(u) }, sid),
        token,
      );
      const body = res.json() as Listing;
      const sub = created(res);
      assert.equal(sub.status, 'enabled');
      assert.equal(sub.cost, 0);
      assert.equal(sub.transport.method, 'websocket');
      assert.equal(sub.transport.session_id, sid);
      assert.match(sub.transport.connected_at as string, /\.\d{9}Z$/);
      assert.deepEqual([body.total, body.total_cost, body.max_total_cost], [1, 0, 10]);
      // The control row that tells the session's process, and the subscription starts after it.
      const control = await t.store.db
        .selectFrom('events')
        .selectAll()
        .where('match_key', '=', `session:${sid}`)
        .execute();
      assert.deepEqual(
        control.map((c) => [c.kind, c.type, JSON.parse(c.payload)]),
        [['control', 'subscription.enabled', { subscription_id: sub.id }]],
      );
      const row = await t.store.db
        .selectFrom('eventsub_subscriptions')
        .select(['from_event', 'match_key'])
        .where('id', '=', sub.id)
        .executeTakeFirstOrThrow();
      assert.equal(Number(row.from_event), Number(control[0]?.id));
      assert.equal(row.match_key, `channel.subscribe:${u}`);
      // A user token lists its own WebSocket subscriptions; the app token does not see them.
      assert.deepEqual((await list(token)).data, [sub]);
      assert.ok(!(await list(app)).data.some((s) => s.id === sub.id));
      // Another user may not use the session.
      const other = await t.userToken([], next());
      const res2 = await post(
        websocket('stream.online', '1', { broadcaster_user_id: String(u) }, sid),
        other,
      );
      assert.equal(res2.statusCode, 400);
      assert.match(res2.json().message, /"transport\.session_id" names a session bound to another/);
      // Deleted: a control row again.
      assert.equal((await del(sub.id, token)).statusCode, 204);
      const types = await t.store.db
        .selectFrom('events')
        .select('type')
        .where('match_key', '=', `session:${sid}`)
        .orderBy('id')
        .execute();
      assert.deepEqual(
        types.map((r) => r.type),
        ['subscription.enabled', 'subscription.deleted'],
      );
      assert.deepEqual((await list(token)).data, []);
    });

    it("403 unless the request's own token is the authorizing user's, with the scope", async () => {
      const u = next();
      const b = next();
      await t.userToken(['channel:read:subscriptions'], b);
      const token = await t.userToken(['channel:read:subscriptions'], u);
      const sid = await session();
      const res = await post(
        websocket('channel.subscribe', '1', { broadcaster_user_id: String(b) }, sid),
        token,
      );
      assert.equal(res.statusCode, 403, res.body);
      const noScope = await t.userToken([], b);
      const res2 = await post(
        websocket('channel.subscribe', '1', { broadcaster_user_id: String(b) }, sid),
        noScope,
      );
      assert.equal(res2.statusCode, 403, res2.body);
      assert.deepEqual((await list(token)).data, []);
    });

    it('max_total_cost 10 per user: the eleventh subscription of cost 1 is a 429', async () => {
      const u = next();
      const token = await t.userToken([], u);
      const sid = await session();
      for (let i = 0; i < 10; i++) {
        const sub = created(
          await post(websocket('stream.online', '1', { broadcaster_user_id: String(next()) }, sid), token),
        );
        assert.equal(sub.cost, 1);
      }
      const res = await post(
        websocket('stream.online', '1', { broadcaster_user_id: String(next()) }, sid),
        token,
      );
      assert.equal(res.statusCode, 429, res.body);
      assert.match(res.json().message, /maximum total cost.*10/);
      // Free ones still fit.
      created(await post(websocket('stream.online', '1', { broadcaster_user_id: String(u) }, sid), token));
      const l = await list(token);
      assert.deepEqual([l.total, l.total_cost], [11, 10]);
    });

    it('3 sessions per user and client: a fourth session is a 429', async () => {
      const u = next();
      const token = await t.userToken([], u);
      for (let i = 0; i < 3; i++)
        created(
          await post(
            websocket('stream.online', '1', { broadcaster_user_id: String(u) }, await session()),
            token,
          ),
        );
      const sid = await session();
      const res = await post(websocket('stream.online', '1', { broadcaster_user_id: String(u) }, sid), token);
      assert.equal(res.statusCode, 429, res.body);
      assert.match(res.json().message, /at most 3 WebSocket sessions/);
      assert.equal((await list(token)).total, 3);
      // The refused request left the session unbound.
      const row = await t.store.db
        .selectFrom('eventsub_sessions')
        .select('user_id')
        .where('id', '=', sid)
        .executeTakeFirstOrThrow();
      assert.equal(row.user_id, null);
    });
  });

  describe('GET', () => {
    let token: string;
    let subs: Sub[];
    let u: number;
    let silent: ReturnType<typeof createServer>;
    before(async () => {
      // A client of its own: its listing holds only what this block makes.
      const created0 = await admin('POST', '/admin/clients', {
        id: 'eventsubgetclient0000000000001',
        name: 'get',
        redirect_uris: ['http://localhost:3000/cb'],
        created_at: '2020-01-01T00:00:00Z',
        secret: 'get-client-secret-0123',
      });
      assert.equal(created0.statusCode, 201, created0.body);
      client = 'eventsubgetclient0000000000001';
      const now = Math.floor(t.clock.now() / 1000);
      token = (await mintToken(t.store.db, { kind: 'app', clientId: client, scopes: [], ttl: 3600, now }))
        .access_token;
      u = next();
      subs = [];
      // Callbacks that take the verification and never answer (the sender waits 10 s): the
      // subscriptions stay pending while the block reads them, however soon the sender tries.
      silent = createServer(() => {});
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const base = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      for (let i = 0; i < 103; i++)
        subs.push(
          created(
            await post(
              webhook('stream.online', '1', { broadcaster_user_id: String(u) }, `${base}/${i}`),
              token,
            ),
          ),
        );
      subs.push(
        created(await post(webhook('user.update', '1', { user_id: String(next()) }, `${base}/user`), token)),
      );
    });
    after(() => {
      client = t.seed?.demoClientId as string;
      silent.closeAllConnections();
      silent.close();
    });

    it('pages of 100, oldest first, with a cursor; total and total_cost over the listing', async () => {
      const first = await list(token);
      assert.equal(first.data.length, 100);
      assert.deepEqual([first.total, first.total_cost, first.max_total_cost], [104, 104, 10000]);
      assert.ok(first.pagination?.cursor);
      const second = await list(token, `after=${encodeURIComponent(first.pagination?.cursor as string)}`);
      assert.equal(second.data.length, 4);
      assert.deepEqual(second.pagination, {});
      const ids = [...first.data, ...second.data].map((s) => s.id);
      assert.deepEqual(new Set(ids).size, 104);
      assert.deepEqual(new Set(ids), new Set(subs.map((s) => s.id)));
      const times = [...first.data, ...second.data].map((s) => s.created_at);
      assert.deepEqual(times, [...times].sort());
      // A cursor of another listing, or a forged one, is a 400.
      const other = await t.inject({
        method: 'GET',
        url: `${PATH}?type=stream.online&after=${encodeURIComponent(first.pagination?.cursor as string)}`,
        headers: headers(token),
      });
      assert.equal(other.statusCode, 400);
      const forged = await t.inject({ method: 'GET', url: `${PATH}?after=abc.def`, headers: headers(token) });
      assert.equal(forged.statusCode, 400);
    });

    it('filters: type, status, user_id, subscription_id; at most one', async () => {
      assert.equal((await list(token, 'type=user.update')).total, 1);
      assert.equal((await list(token, 'type=stream.online')).total, 103);
      assert.equal((await list(token, 'status=enabled')).total, 0);
      assert.equal((await list(token, 'status=webhook_callback_verification_pending')).total, 104);
      const byUser = await list(token, `user_id=${u}`);
      assert.equal(byUser.total, 103);
      assert.ok(byUser.data.every((s) => s.condition.broadcaster_user_id === String(u)));
      const last = subs[103] as Sub;
      assert.deepEqual((await list(token, `subscription_id=${last.id}`)).data, [last]);
      assert.deepEqual((await list(token, `user_id=${last.condition.user_id}`)).data, [last]);
      for (const [q, message] of [
        ['type=user.update&status=enabled', /only one filter/],
        ['user_id=abc', /"user_id" was malformed/],
        ['status=nope', /"status" was malformed/],
      ] as const) {
        const res = await t.inject({ method: 'GET', url: `${PATH}?${q}`, headers: headers(token) });
        assert.equal(res.statusCode, 400, q);
        assert.match(res.json().message, message);
      }
    });

    it("DELETE: 204, then 404; another client's id 404; no id 400", async () => {
      const victim = subs[0] as Sub;
      // The demo client's app token does not reach this client's subscription.
      const res404 = await t.inject({
        method: 'DELETE',
        url: `${PATH}?id=${victim.id}`,
        headers: { authorization: `Bearer ${app}`, 'client-id': t.seed?.demoClientId as string },
      });
      assert.equal(res404.statusCode, 404, res404.body);
      assert.equal((await del(victim.id, token)).statusCode, 204);
      const again = await del(victim.id, token);
      assert.equal(again.statusCode, 404);
      assert.equal(again.json().message, 'The subscription was not found.');
      const none = await t.inject({ method: 'DELETE', url: PATH, headers: headers(token) });
      assert.equal(none.statusCode, 400);
      assert.match(none.json().message, /"id"/);
      assert.equal((await list(token)).total, 103);
    });

    it('the /mock and bare paths serve the same operations (Twurple mock mode)', async () => {
      const made = created(
        await post(
          webhook('stream.offline', '1', { broadcaster_user_id: String(u) }),
          token,
          '/eventsub/subscriptions',
        ),
      );
      assert.deepEqual(
        (await list(token, `subscription_id=${made.id}`, '/mock/eventsub/subscriptions')).data,
        [made],
      );
      assert.deepEqual((await list(token, `subscription_id=${made.id}`, '/eventsub/subscriptions')).data, [
        made,
      ]);
      assert.equal((await del(made.id, token, '/eventsub/subscriptions')).statusCode, 204);
      assert.equal((await del(made.id, token, '/mock/eventsub/subscriptions')).statusCode, 404);
      const put = await t.inject({ method: 'PUT', url: '/eventsub/subscriptions', headers: headers(token) });
      assert.equal(put.statusCode, 405);
      assert.equal(put.headers.allow, 'POST, GET, HEAD, DELETE');
      const noToken = await t.inject({ method: 'POST', url: '/eventsub/subscriptions', payload: {} });
      assert.equal(noToken.statusCode, 401);
    });
  });

  describe('revocations', () => {
    it("the user's last token of the client revoked: authorization_revoked, and the event recorded", async () => {
      const b = next();
      const one = await t.userToken(['channel:read:subscriptions'], b);
      const two = await t.userToken([], b);
      const sub = created(
        await post(webhook('channel.subscription.end', '1', { broadcaster_user_id: String(b) }), app),
      );
      const revokeEvents = () =>
        t.store.db
          .selectFrom('events')
          .select('payload')
          .where('match_key', '=', `user.authorization.revoke:${client}`)
          .execute();
      const before = (await revokeEvents()).length;
      assert.equal((await postForm(t, '/oauth2/revoke', { client_id: client, token: one })).statusCode, 200);
      // Another token of (client, user) remains: still authorized.
      assert.equal((await list(app, `subscription_id=${sub.id}`)).data[0]?.status, sub.status);
      assert.equal((await revokeEvents()).length, before);
      assert.equal((await postForm(t, '/oauth2/revoke', { client_id: client, token: two })).statusCode, 200);
      const after = (await list(app, `subscription_id=${sub.id}`)).data[0];
      assert.equal(after?.status, 'authorization_revoked');
      const events = await revokeEvents();
      assert.equal(events.length, before + 1);
      const user = await t.store.db
        .selectFrom('users')
        .select(['login', 'display_name'])
        .where('id', '=', b)
        .executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(events[events.length - 1]?.payload as string), {
        client_id: client,
        user_id: String(b),
        user_login: user.login,
        user_name: user.display_name,
      });
      // A revoked subscription no longer counts: the same one may be made again once authorized.
      await t.userToken(['channel:read:subscriptions'], b);
      created(await post(webhook('channel.subscription.end', '1', { broadcaster_user_id: String(b) }), app));
    });

    it("a WebSocket subscription revoked with its maker's token: a control row for its session", async () => {
      const u = next();
      const token = await t.userToken([], u);
      const sid = await session();
      const sub = created(
        await post(websocket('stream.online', '1', { broadcaster_user_id: String(u) }, sid), token),
      );
      assert.equal((await postForm(t, '/oauth2/revoke', { client_id: client, token })).statusCode, 200);
      const rows = await t.store.db
        .selectFrom('events')
        .select(['type', 'payload'])
        .where('match_key', '=', `session:${sid}`)
        .orderBy('id')
        .execute();
      assert.deepEqual(
        rows.map((r) => [r.type, JSON.parse(r.payload)]),
        [
          ['subscription.enabled', { subscription_id: sub.id }],
          ['subscription.revoked', { subscription_id: sub.id, status: 'authorization_revoked' }],
        ],
      );
    });

    it('a user deleted: the subscriptions naming the user are user_removed', async () => {
      const id = '987654321';
      const made = await admin('POST', '/admin/users', {
        id,
        login: 'eventsubgone',
        display_name: 'EventsubGone',
        broadcaster_type: '',
        description: '',
        created_at: '2020-01-01T00:00:00Z',
      });
      assert.equal(made.statusCode, 201, made.body);
      const sub = created(await post(webhook('user.update', '1', { user_id: id }), app));
      assert.equal((await admin('DELETE', `/admin/users/${id}`)).statusCode, 204);
      const after = (await list(app, `subscription_id=${sub.id}`)).data[0];
      assert.equal(after?.status, 'user_removed');
    });
  });

  it('/openapi.json describes POST (202), GET and DELETE (204) under /helix only', async () => {
    const doc = JSON.parse((await t.inject({ method: 'GET', url: '/openapi.json' })).body) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: unknown }>>;
    };
    const ops = doc.paths[PATH];
    assert.deepEqual(Object.keys(ops ?? {}).sort(), ['delete', 'get', 'post']);
    assert.ok(ops?.post?.responses['202'] && ops.post.responses['403'] && ops.post.responses['409']);
    assert.ok(ops?.post?.requestBody);
    assert.ok(ops?.delete?.responses['204'] && ops.delete.responses['404']);
    assert.ok(ops?.get?.responses['200']);
    assert.equal(doc.paths['/mock/eventsub/subscriptions'], undefined);
    assert.equal(doc.paths['/eventsub/subscriptions'], undefined);
  });
}

forEachStore('/eventsub/subscriptions', describeApi);
