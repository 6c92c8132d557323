// EventSub's metrics in /metrics: the sessions open (1 while a socket is, 0 after), the
// subscriptions by transport and status (counted from the store at the scrape), notifications sent
// and failed by transport and subscription type, the time from an event's commit to its send, and
// the outbox events the process's tail has not yet read (0 while it has no tail).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, it } from 'node:test';
import WebSocket from 'ws';
import { ADMIN_TOKEN, bearer, forEachStore, portOf, startTestApp, type TestApp } from '../support/apps.ts';
import { parse, type Sample, value } from '../support/prometheus.ts';
import type { StoreKind } from '../support/stores.ts';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

forEachStore('/metrics of EventSub', (kind: StoreKind) => {
  let t: TestApp;
  let hook: Server;
  let hookUrl: string;
  let ws: WebSocket;
  const messages: { metadata: Record<string, string>; payload: { session?: { id: string } } }[] = [];

  const scrape = async (): Promise<Sample[]> => {
    const res = await t.get('/metrics');
    assert.equal(res.statusCode, 200, res.body);
    return parse(res.body);
  };
  const until = async (what: () => Promise<boolean> | boolean) => {
    const deadline = Date.now() + 10_000;
    while (!(await what())) {
      if (Date.now() > deadline) assert.fail('timed out');
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const adminWrite = async (url: string, body: unknown) => {
    const res = await t.inject({ method: 'POST', url, headers: admin, payload: JSON.stringify(body) });
    assert.equal(res.statusCode, 201, res.body);
  };
  const subscribe = async (token: string, userId: string, transport: Record<string, string>) => {
    const res = await t.inject({
      method: 'POST',
      url: '/helix/eventsub/subscriptions',
      headers: {
        ...bearer(token),
        'client-id': t.seed?.demoClientId ?? '',
        'content-type': 'application/json',
      },
      payload: JSON.stringify({
        type: 'stream.online',
        version: '1',
        condition: { broadcaster_user_id: userId },
        transport,
      }),
    });
    assert.equal(res.statusCode, 202, res.body);
    return res.json().data[0].id as string;
  };
  const subscriptions = (s: Sample[], transport: string, status: string) =>
    value(s, 'helixd_eventsub_subscriptions', { transport, status });

  before(async () => {
    t = await startTestApp(kind, {
      users: 20,
      config: { adminToken: ADMIN_TOKEN, webhookRetries: 2, webhookBackoff: '100ms' },
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    // A receiver that answers the verification and fails every notification.
    hook = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c;
      });
      req.on('end', () => {
        const { challenge } = JSON.parse(body);
        if (challenge !== undefined) res.writeHead(200).end(challenge);
        else res.writeHead(500).end();
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(hook.address() as { port: number }).port}/hook`;
    await adminWrite('/admin/games', { id: '997301', name: 'Metrics Game' });
    for (const id of ['997310', '997311', '997312'])
      await adminWrite('/admin/users', {
        id,
        login: `metered_${id}`,
        display_name: `Metered_${id}`,
        broadcaster_type: '',
        description: '',
        created_at: '2024-01-01T00:00:00Z',
      });
  });
  after(async () => {
    ws?.close();
    await t.close();
    await new Promise<void>((r) => hook.close(() => r()));
  });

  it('reports an outbox lag of 0 while no WebSocket has started a tail, events written or not', async () => {
    // A stream.online in the outbox, which no tail here reads: a process without one sends nothing
    // that waits on it.
    await adminWrite('/admin/streams', {
      id: '97300003',
      user_id: '997312',
      game_id: '997301',
      title: 'Unread',
      tags: [],
      viewer_count: 1,
      started_at: '2026-06-15T11:00:00Z',
      language: 'en',
      is_mature: false,
    });
    assert.equal(value(await scrape(), 'helixd_eventsub_outbox_lag'), 0);
  });

  it('counts the open sessions: 0, then 1 while a socket is open', async () => {
    assert.equal(value(await scrape(), 'helixd_eventsub_sessions'), 0);
    ws = new WebSocket(`ws://127.0.0.1:${portOf(t.app)}/ws`);
    ws.on('message', (data) => messages.push(JSON.parse(String(data))));
    await until(() => messages.length > 0);
    assert.equal(value(await scrape(), 'helixd_eventsub_sessions'), 1);
  });

  it('counts a WebSocket notification sent, and the time from its commit to its send', async () => {
    const session = messages[0]?.payload.session?.id;
    assert.ok(session);
    await subscribe(await t.userToken([], 997310), '997310', { method: 'websocket', session_id: session });
    const wrote = Date.now();
    await adminWrite('/admin/streams', {
      id: '97300001',
      user_id: '997310',
      game_id: '997301',
      title: 'Metered',
      tags: [],
      viewer_count: 1,
      started_at: '2026-06-15T11:00:00Z',
      language: 'en',
      is_mature: false,
    });
    await until(() => messages.some((m) => m.metadata.message_type === 'notification'));
    const took = (Date.now() - wrote) / 1000;
    const s = await scrape();
    const labels = { transport: 'websocket', type: 'stream.online' };
    assert.equal(value(s, 'helixd_eventsub_deliveries_total', labels), 1);
    assert.equal(value(s, 'helixd_eventsub_delivery_seconds_count', { transport: 'websocket' }), 1);
    const seconds = value(s, 'helixd_eventsub_delivery_seconds_sum', { transport: 'websocket' });
    assert.ok(seconds >= 0 && seconds <= took, `${seconds} s, within the ${took} s the test waited`);
    assert.equal(
      value(s, 'helixd_eventsub_delivery_seconds_bucket', { transport: 'websocket', le: '+Inf' }),
      1,
    );
    assert.equal(subscriptions(s, 'websocket', 'enabled'), 1);
    // The tail moves past the event once its notification is sent: nothing is left behind.
    await until(async () => value(await scrape(), 'helixd_eventsub_outbox_lag') === 0);
  });

  it('counts the failed webhook attempts, and the revoked subscription by its status', async () => {
    const id = await subscribe(await t.appToken(), '997311', {
      method: 'webhook',
      callback: hookUrl,
      secret: 'webhook-secret-0123456789',
    });
    const status = async () =>
      (await t.get(`/helix/eventsub/subscriptions?subscription_id=${id}`, bearer(await t.appToken()))).json()
        .data[0]?.status;
    await until(async () => (await status()) === 'enabled');
    await adminWrite('/admin/streams', {
      id: '97300002',
      user_id: '997311',
      game_id: '997301',
      title: 'Failing',
      tags: [],
      viewer_count: 1,
      started_at: '2026-06-15T11:00:00Z',
      language: 'en',
      is_mature: false,
    });
    await until(async () => (await status()) === 'notification_failures_exceeded');
    const s = await scrape();
    const labels = { transport: 'webhook', type: 'stream.online' };
    assert.equal(value(s, 'helixd_eventsub_delivery_failures_total', labels), 2);
    assert.equal(subscriptions(s, 'webhook', 'notification_failures_exceeded'), 1);
    assert.equal(subscriptions(s, 'websocket', 'enabled'), 1);
  });

  it('counts no session once the socket is closed', async () => {
    ws.close();
    await until(async () => value(await scrape(), 'helixd_eventsub_sessions') === 0);
    await until(async () => {
      const s = await scrape();
      return s.some(
        (x) =>
          x.name === 'helixd_eventsub_subscriptions' &&
          x.labels.transport === 'websocket' &&
          x.labels.status === 'websocket_disconnected' &&
          x.value === 1,
      );
    });
  });
});
