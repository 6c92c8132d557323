// The webhook transport through the real app and a plain node:http receiver that checks every
// message's signature with the published algorithm (HMAC-SHA256 of id + timestamp + raw body): the
// verification, notifications caused by admin writes (which the read API then shows), a callback
// that keeps failing retried and then revoked, and a verification answered wrongly.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ADMIN_TOKEN, bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';
import { postWebhookSubscription, receiver, subscriptionStatus, verifyingThen } from '../support/webhooks.ts';

forEachStore('EventSub webhooks', (kind: StoreKind) => {
  let t: TestApp;
  let appToken: string;
  let hooks: Awaited<ReturnType<typeof receiver>>;
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
  const adminWrite = (method: 'POST' | 'DELETE', url: string, body?: unknown) =>
    t.inject({
      method,
      url,
      headers: admin,
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  const subscribe = (type: string, condition: Record<string, string>, callback: string) =>
    postWebhookSubscription(t, appToken, type, condition, callback);
  const statusOf = (id: string) => subscriptionStatus(t, appToken, id);
  const until = async (what: () => Promise<boolean>, ms = 10_000) => {
    const deadline = Date.now() + ms;
    while (!(await what())) {
      if (Date.now() > deadline) assert.fail('timed out');
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const newUser = async (id: string, login: string) => {
    const res = await adminWrite('POST', '/admin/users', {
      id,
      login,
      display_name: login.toUpperCase(),
      broadcaster_type: '',
      description: '',
      created_at: '2024-01-01T00:00:00Z',
    });
    assert.equal(res.statusCode, 201, res.body);
  };
  const goLive = async (streamId: string, userId: string) => {
    const res = await adminWrite('POST', '/admin/streams', {
      id: streamId,
      user_id: userId,
      game_id: '997001',
      title: 'Hooked',
      tags: [],
      viewer_count: 5,
      started_at: '2026-06-15T11:00:00Z',
      language: 'en',
      is_mature: false,
    });
    assert.equal(res.statusCode, 201, res.body);
  };

  before(async () => {
    t = await startTestApp(kind, {
      users: 20,
      config: { adminToken: ADMIN_TOKEN, webhookRetries: 3, webhookBackoff: '100ms' },
    });
    appToken = await t.appToken();
    hooks = await receiver((m) =>
      m.path === '/failing'
        ? verifyingThen(500)(m)
        : m.path === '/wrong'
          ? { status: 200, body: 'no' }
          : verifyingThen(204)(m),
    );
    const game = await adminWrite('POST', '/admin/games', { id: '997001', name: 'Webhook Game' });
    assert.equal(game.statusCode, 201, game.body);
    await newUser('997100', 'hooked');
    await newUser('997101', 'failing');
  });
  after(async () => {
    await t.close();
    await hooks.close();
  });

  it('verifies the callback, then sends the stream.online of an admin write, signed, and the read API shows the stream', async () => {
    const res = await subscribe('stream.online', { broadcaster_user_id: '997100' }, hooks.url('/ok'));
    assert.equal(res.statusCode, 202, res.body);
    const sub = res.json().data[0];
    assert.equal(sub.status, 'webhook_callback_verification_pending');
    const [verification] = await hooks.wait('/ok', 1);
    assert.ok(verification);
    assert.equal(verification.headers['twitch-eventsub-message-type'], 'webhook_callback_verification');
    assert.equal(verification.headers['twitch-eventsub-subscription-type'], 'stream.online');
    assert.equal(verification.headers['twitch-eventsub-subscription-version'], '1');
    assert.equal(verification.json.subscription.id, sub.id);
    assert.match(String(verification.json.challenge), /^\S{10,}$/);
    await until(async () => (await statusOf(sub.id)) === 'enabled');

    await goLive('97000001', '997100');
    const [, note] = await hooks.wait('/ok', 2);
    assert.ok(note);
    assert.equal(note.headers['twitch-eventsub-message-type'], 'notification');
    assert.equal(note.headers['twitch-eventsub-message-retry'], '0');
    assert.match(
      String(note.headers['twitch-eventsub-message-id']),
      /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    assert.match(
      String(note.headers['twitch-eventsub-message-timestamp']),
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/,
    );
    assert.deepEqual(note.json.event, {
      id: '97000001',
      broadcaster_user_id: '997100',
      broadcaster_user_login: 'hooked',
      broadcaster_user_name: 'HOOKED',
      type: 'live',
      started_at: '2026-06-15T11:00:00Z',
    });
    assert.equal(note.json.subscription.status, 'enabled');
    const streams = await t.get('/helix/streams?user_id=997100', bearer(appToken));
    assert.deepEqual(
      streams.json().data.map((s: { id: string }) => s.id),
      ['97000001'],
    );
  });

  it('retries a callback that keeps failing, with the same message id, then revokes the subscription', async () => {
    const res = await subscribe('stream.online', { broadcaster_user_id: '997101' }, hooks.url('/failing'));
    assert.equal(res.statusCode, 202, res.body);
    const id = res.json().data[0].id;
    await until(async () => (await statusOf(id)) === 'enabled');
    await goLive('97000002', '997101');
    // the verification, three attempts, then the revocation (sent once, answered 500 too)
    const all = await hooks.wait('/failing', 5);
    const attempts = all.filter((m) => m.headers['twitch-eventsub-message-type'] === 'notification');
    assert.deepEqual(
      attempts.map((m) => m.headers['twitch-eventsub-message-retry']),
      ['0', '1', '2'],
    );
    assert.equal(new Set(attempts.map((m) => m.headers['twitch-eventsub-message-id'])).size, 1);
    const revocation = all[4];
    assert.equal(revocation?.headers['twitch-eventsub-message-type'], 'revocation');
    assert.equal(revocation?.json.subscription.status, 'notification_failures_exceeded');
    assert.equal(await statusOf(id), 'notification_failures_exceeded');
  });

  it('a verification answered without the challenge fails the subscription, and nothing more is sent to it', async () => {
    const res = await subscribe('stream.offline', { broadcaster_user_id: '997100' }, hooks.url('/wrong'));
    assert.equal(res.statusCode, 202, res.body);
    const id = res.json().data[0].id;
    await until(async () => (await statusOf(id)) === 'webhook_callback_verification_failed');
    const del = await adminWrite('DELETE', '/admin/streams/97000001');
    assert.equal(del.statusCode, 204, del.body);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(hooks.messages.filter((m) => m.path === '/wrong').length, 1);
  });
});
