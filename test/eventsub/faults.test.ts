// The delivery faults of `--faults` (docs/faults.md, "EventSub deliveries") through the real app:
// dup-delivery sends a WebSocket notification twice with one message_id; drop-delivery fails every
// webhook attempt until the subscription is revoked notification_failures_exceeded; delay-delivery
// sends a notification no sooner than its delay after the write. The rules change at run time
// through PUT /admin/faults, which takes the delivery rules like any other.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, it } from 'node:test';
import WebSocket from 'ws';
import { ADMIN_TOKEN, bearer, forEachStore, portOf, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';

const SECRET = 'webhook-secret-0123456789';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

// biome-ignore lint/suspicious/noExplicitAny: messages are checked field by field
type Message = { metadata: Record<string, string>; payload: any; at: number };

/** A WebSocket client of /ws: its messages in order, each with when it arrived. */
async function connect(t: TestApp) {
  const ws = new WebSocket(`ws://127.0.0.1:${portOf(t.app)}/ws`);
  const messages: Message[] = [];
  ws.on('message', (data) => messages.push({ ...JSON.parse(String(data)), at: Date.now() }));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return {
    ws,
    messages,
    /** the messages of `type` once there are `n` (within 10 s) */
    async wait(type: string, n: number): Promise<Message[]> {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const mine = messages.filter((m) => m.metadata.message_type === type);
        if (mine.length >= n) return mine;
        if (Date.now() > deadline) assert.fail(`${mine.length} of ${n} ${type} messages came`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

/** A webhook receiver that answers the verification with its challenge and everything else 204. */
async function receiver() {
  const messages: { type: string; id: string; status: string }[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c;
    });
    req.on('end', () => {
      const json = JSON.parse(body);
      messages.push({
        type: String(req.headers['twitch-eventsub-message-type']),
        id: String(req.headers['twitch-eventsub-message-id']),
        status: json.subscription.status,
      });
      if (json.challenge !== undefined) res.writeHead(200).end(json.challenge);
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    messages,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

forEachStore('EventSub delivery faults', (kind: StoreKind) => {
  let t: TestApp;
  let hooks: Awaited<ReturnType<typeof receiver>>;
  let appToken: string;
  let streamId = 97100000;

  const adminWrite = (method: string, url: string, body?: unknown) =>
    t.inject({
      method: method as 'POST',
      url,
      headers: admin,
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  const setFaults = async (faults: string) => {
    const res = await adminWrite('PUT', '/admin/faults', { faults, seed: 1 });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().faults, faults);
  };
  const subscribe = (token: string, type: string, userId: string, transport: Record<string, string>) =>
    t.inject({
      method: 'POST',
      url: '/helix/eventsub/subscriptions',
      headers: {
        ...bearer(token),
        'client-id': t.seed?.demoClientId ?? '',
        'content-type': 'application/json',
      },
      payload: JSON.stringify({ type, version: '1', condition: { broadcaster_user_id: userId }, transport }),
    });
  const statusOf = async (id: string) => {
    const res = await t.get(`/helix/eventsub/subscriptions?subscription_id=${id}`, bearer(appToken));
    return res.json().data[0]?.status as string | undefined;
  };
  const until = async (what: () => Promise<boolean>) => {
    const deadline = Date.now() + 10_000;
    while (!(await what())) {
      if (Date.now() > deadline) assert.fail('timed out');
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const goLive = async (userId: string) => {
    const res = await adminWrite('POST', '/admin/streams', {
      id: String(++streamId),
      user_id: userId,
      game_id: '997201',
      title: 'Faulty',
      tags: [],
      viewer_count: 5,
      started_at: '2026-06-15T11:00:00Z',
      language: 'en',
      is_mature: false,
    });
    assert.equal(res.statusCode, 201, res.body);
  };
  /** A new user, and a WebSocket session subscribed to its stream.online. */
  const wsSubscriber = async (userId: string) => {
    const res = await adminWrite('POST', '/admin/users', {
      id: userId,
      login: `faulty_${userId}`,
      display_name: `Faulty_${userId}`,
      broadcaster_type: '',
      description: '',
      created_at: '2024-01-01T00:00:00Z',
    });
    assert.equal(res.statusCode, 201, res.body);
    const c = await connect(t);
    const [welcome] = await c.wait('session_welcome', 1);
    const token = await t.userToken([], Number(userId));
    const sub = await subscribe(token, 'stream.online', userId, {
      method: 'websocket',
      session_id: welcome?.payload.session.id,
    });
    assert.equal(sub.statusCode, 202, sub.body);
    return c;
  };

  before(async () => {
    t = await startTestApp(kind, {
      users: 20,
      config: {
        adminToken: ADMIN_TOKEN,
        faults: 'dup-delivery:100%',
        faultSeed: 1,
        webhookRetries: 2,
        webhookBackoff: '100ms',
      },
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    appToken = await t.appToken();
    hooks = await receiver();
    const game = await adminWrite('POST', '/admin/games', { id: '997201', name: 'Fault Game' });
    assert.equal(game.statusCode, 201, game.body);
  });
  after(async () => {
    await t.close();
    await hooks.close();
  });

  it('dup-delivery:100% sends each WebSocket notification twice, with the same message_id', async () => {
    const c = await wsSubscriber('997210');
    await goLive('997210');
    const [a, b] = await c.wait('notification', 2);
    assert.equal(a?.metadata.message_id, b?.metadata.message_id);
    assert.deepEqual(a?.payload, b?.payload);
    assert.equal(a?.payload.event.broadcaster_user_id, '997210');
    // Only the notification is doubled: one welcome.
    assert.equal((await c.wait('session_welcome', 1)).length, 1);
    c.ws.close();
  });

  it('drop-delivery:100% fails every webhook attempt: the subscription is revoked notification_failures_exceeded', async () => {
    await setFaults('drop-delivery:100%');
    const user = await adminWrite('POST', '/admin/users', {
      id: '997211',
      login: 'hooked_faulty',
      display_name: 'HOOKED_FAULTY',
      broadcaster_type: '',
      description: '',
      created_at: '2024-01-01T00:00:00Z',
    });
    assert.equal(user.statusCode, 201, user.body);
    const res = await subscribe(appToken, 'stream.online', '997211', {
      method: 'webhook',
      callback: hooks.url,
      secret: SECRET,
    });
    assert.equal(res.statusCode, 202, res.body);
    const id = res.json().data[0].id;
    // The verification is not a notification: it is sent, and answered.
    await until(async () => (await statusOf(id)) === 'enabled');
    await goLive('997211');
    await until(async () => (await statusOf(id)) === 'notification_failures_exceeded');
    await until(async () => hooks.messages.some((m) => m.type === 'revocation'));
    // No attempt reached the receiver: the verification, then the revocation.
    assert.deepEqual(
      hooks.messages.map((m) => [m.type, m.status]),
      [
        ['webhook_callback_verification', 'webhook_callback_verification_pending'],
        ['revocation', 'notification_failures_exceeded'],
      ],
    );
  });

  it('delay-delivery sends a WebSocket notification no sooner than its delay after the write', async () => {
    await setFaults('delay-delivery:600ms:100%');
    const c = await wsSubscriber('997212');
    const wrote = Date.now();
    await goLive('997212');
    const [m] = await c.wait('notification', 1);
    assert.ok(m && m.at - wrote >= 600, `arrived ${m && m.at - wrote} ms after the write`);
    assert.equal(m?.payload.event.broadcaster_user_id, '997212');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(c.messages.filter((x) => x.metadata.message_type === 'notification').length, 1);
    c.ws.close();
  });

  it('PUT /admin/faults refuses a malformed delivery rule, naming it', async () => {
    const res = await adminWrite('PUT', '/admin/faults', { faults: 'delay-delivery:99%' });
    assert.equal(res.statusCode, 400, res.body);
    assert.match(res.json().message, /"delay-delivery:99%" is not a rule/);
    assert.equal((await adminWrite('GET', '/admin/faults')).json().faults, 'delay-delivery:600ms:100%');
  });
});
