// The close codes of a client that misbehaves, through a raw `ws` client and the subscriptions API
// (docs/eventsub.md, "The WebSocket transport"): no pong to a ping (4002), a `session_reconnect` not
// taken up (4004), a client that stops reading (4005). Each ends the session's subscriptions with
// the platform's status, which `GET /eventsub/subscriptions` lists. `--ws-ping` and
// `--ws-reconnect-grace` are shortened so that the tests take a second, not a minute; the slow
// reader's 10 s are the server's own.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { freePort } from '../clients/twurple.ts';
import { ADMIN_TOKEN, bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';
import { type Client, connect, until } from '../support/ws-client.ts';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
const BROADCASTER = 996001;
/** The followers the slow reader's test writes: their notifications are ~6.5 MB, past the kernel's buffers. */
const FOLLOWERS = 10_000;

/** The users of a test app: the broadcaster, and `followers` more who may follow it. */
function usersOf(followers: number) {
  return [BROADCASTER, ...Array.from({ length: followers }, (_, i) => BROADCASTER + 1 + i)].map((id) => ({
    id: String(id),
    login: `close_codes_${id}`,
    display_name: `Close_Codes_${id}`,
    broadcaster_type: '',
    description: '',
    created_at: '2024-01-01T00:00:00Z',
  }));
}

interface Served {
  t: TestApp;
  /** ws://host:port */
  base: string;
  /** the broadcaster's user token (moderator:read:followers) */
  token: string;
}

/** A test app listening on the port its `--public-url` names, with the broadcaster and `followers` users. */
async function serve(kind: StoreKind, followers: number, config: Record<string, unknown>): Promise<Served> {
  const port = await freePort();
  const t = await startTestApp(kind, {
    users: 10,
    config: { adminToken: ADMIN_TOKEN, publicUrl: `http://127.0.0.1:${port}`, ...config },
  });
  await t.app.listen({ port, host: '127.0.0.1' });
  const res = await t.inject({
    method: 'POST',
    url: '/admin/users',
    headers: admin,
    payload: JSON.stringify(usersOf(followers)),
  });
  assert.equal(res.statusCode, 201, res.body.slice(0, 500));
  return {
    t,
    base: `ws://127.0.0.1:${port}`,
    token: await t.userToken(['moderator:read:followers'], BROADCASTER),
  };
}

const helix = (s: Served) => ({ ...bearer(s.token), 'client-id': s.t.seed?.demoClientId as string });

/** A session of `s` with one channel.follow subscription: the client and the ids. */
async function subscribed(
  s: Served,
  options: WebSocket.ClientOptions = {},
): Promise<{ c: Client; id: string; sessionId: string }> {
  const c = await connect(`${s.base}/ws`, options);
  const sessionId = (await c.next('session_welcome')).payload.session.id as string;
  const res = await s.t.inject({
    method: 'POST',
    url: '/helix/eventsub/subscriptions',
    headers: { ...helix(s), 'content-type': 'application/json' },
    payload: JSON.stringify({
      type: 'channel.follow',
      version: '2',
      condition: { broadcaster_user_id: String(BROADCASTER), moderator_user_id: String(BROADCASTER) },
      transport: { method: 'websocket', session_id: sessionId },
    }),
  });
  assert.equal(res.statusCode, 202, res.body);
  return { c, id: res.json().data[0].id as string, sessionId };
}

/** The subscription's status, as the subscriptions API lists it. */
async function status(s: Served, id: string): Promise<string> {
  const res = await s.t.inject({
    method: 'GET',
    url: `/helix/eventsub/subscriptions?subscription_id=${id}`,
    headers: helix(s),
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data[0]?.status as string;
}

forEachStore('EventSub close codes', (kind: StoreKind) => {
  let s: Served;
  before(async () => {
    s = await serve(kind, 0, { wsPing: '300ms', wsReconnectGrace: '500ms' });
  });
  after(() => s.t.close());

  it('closes 4002 a client that does not answer a ping, and keeps one that does', async () => {
    const answering = await subscribed(s);
    const silent = await subscribed(s, { autoPong: false });
    // The first ping at 300 ms, unanswered by the second at 600 ms.
    assert.deepEqual(await silent.c.closed, { code: 4002, reason: 'failed ping pong' });
    await until(
      'the subscription disabled',
      async () => (await status(s, silent.id)) === 'websocket_failed_ping_pong',
    );
    // Past several pings, the client that answers them is still there, its subscription enabled.
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(answering.c.ws.readyState, WebSocket.OPEN);
    assert.equal(await status(s, answering.id), 'enabled');
    answering.c.ws.close();
    await answering.c.closed;
  });

  it('closes 4004 a session whose reconnect URL is not taken up within the grace', async () => {
    const { c, id, sessionId } = await subscribed(s);
    const res = await s.t.inject({
      method: 'POST',
      url: `/admin/eventsub/sessions/${sessionId}/reconnect`,
      headers: admin,
    });
    assert.equal(res.statusCode, 202, res.body);
    const url = (await c.next('session_reconnect')).payload.session.reconnect_url as string;
    assert.deepEqual(await c.closed, { code: 4004, reason: 'reconnect grace time expired' });
    await until(
      'the subscription disabled',
      async () => (await status(s, id)) === 'websocket_failed_to_reconnect',
    );
    // Too late: the URL is no longer valid.
    const late = await connect(url);
    assert.deepEqual(await late.closed, { code: 4007, reason: 'invalid reconnect' });
  });

  it('closes 4005 a client that stopped reading, once 1 MiB waited for it 10 s', {
    timeout: 60_000,
  }, async () => {
    // The platform's ping interval: this client reads nothing, so a short one would close it first (4002).
    const slow = await serve(kind, FOLLOWERS, {});
    try {
      const { c, id } = await subscribed(slow);
      // The WebSocket layer's own socket stops being read: the kernel's buffers fill, then the server's.
      const socket = (c.ws as unknown as { _socket: import('node:net').Socket })._socket;
      socket.pause();
      const follows = Array.from({ length: FOLLOWERS }, (_, i) => ({
        broadcaster_id: String(BROADCASTER),
        user_id: String(BROADCASTER + 1 + i),
        followed_at: '2026-06-01T00:00:00Z',
      }));
      const res = await slow.t.inject({
        method: 'POST',
        url: '/admin/follows',
        headers: admin,
        payload: JSON.stringify(follows),
      });
      assert.equal(res.statusCode, 201, res.body.slice(0, 500));
      const written = Date.now();
      await until(
        'the subscription disabled',
        async () => (await status(slow, id)) === 'websocket_network_timeout',
        20_000,
      );
      // Not before its 10 s (the notifications are sent within a second of the write).
      assert.ok(Date.now() - written >= 9000, `closed ${Date.now() - written} ms after the write`);
      socket.resume();
      await c.closed;
    } finally {
      await slow.t.close();
    }
  });
});

describe('--ws-ping and --ws-reconnect-grace', () => {
  it('take a duration; the grace is at most 10 minutes, within the hour the outbox keeps an event', () => {
    const c = loadConfig({ wsPing: '250ms', wsReconnectGrace: '10m' }, {});
    assert.equal(c.wsPing, 250);
    assert.equal(c.wsReconnectGrace, 600_000);
    const d = loadConfig({}, { HELIXD_WS_PING: '45s' });
    assert.equal(d.wsPing, 45_000);
    assert.equal(d.wsReconnectGrace, 30_000);
    assert.throws(
      () => loadConfig({ wsReconnectGrace: '11m' }, {}),
      (e: Error) => {
        assert.ok(e instanceof ConfigError);
        assert.match(e.message, /--ws-reconnect-grace: "11m" must be at most 10m/);
        return true;
      },
    );
    assert.throws(() => loadConfig({ wsPing: '0s' }, {}), /--ws-ping: must be longer than 0/);
  });
});
