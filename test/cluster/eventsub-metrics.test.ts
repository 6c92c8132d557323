// EventSub in /metrics under `helixd serve --workers 2`, through the real program, on both stores:
// whichever worker answers the scrape, the sessions are those both workers hold (each worker's
// count, summed), the subscriptions are the store's (counted once, not once per worker), each
// notification counts once whichever worker sent it, and the outbox lag is one figure (the most of
// any worker's tail), 0 once every notification is sent.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import WebSocket from 'ws';
import { ADMIN_TOKEN, forEachStore } from '../support/apps.ts';
import { request } from '../support/http.ts';
import { find, parse, type Sample, value } from '../support/prometheus.ts';
import type { StoreKind } from '../support/stores.ts';
import { receiver, SECRET, verifyingThen } from '../support/webhooks.ts';
import { pidsOf, serveOnTempStore, sleep } from './served.ts';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
/**
 * WebSocket sessions, each on a connection of its own: the primary hands them to both workers (3,
 * the most sessions with subscriptions one user may hold for a client).
 */
const SESSIONS = 3;
/** The broadcasters whose stream.online the sessions subscribe to, one each. */
const BROADCASTERS = Array.from({ length: SESSIONS }, (_, i) => 996400 + i);
/** The broadcaster of the webhook subscription, and the times it goes live. */
const HOOKED = 996450;
const HOOKED_LIVES = 4;
/** Scrapes, each on a connection of its own, so that both workers answer some. */
const SCRAPES = 4;

interface Socket {
  ws: WebSocket;
  sessionId: string;
  /** the notifications received */
  notes: { payload: { event: { broadcaster_user_id: string } } }[];
}

/** A WebSocket to `/ws`, once its welcome came. */
function openSocket(port: number): Promise<Socket> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
  const notes: Socket['notes'] = [];
  return new Promise((resolve, reject) => {
    ws.once('error', reject);
    ws.on('message', (data) => {
      const m = JSON.parse(String(data));
      if (m.metadata.message_type === 'session_welcome')
        resolve({ ws, sessionId: m.payload.session.id, notes });
      else if (m.metadata.message_type === 'notification') notes.push(m);
    });
  });
}

async function until(what: () => boolean | Promise<boolean>, why: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await what())) {
    if (Date.now() > deadline) assert.fail(`timed out: ${why()}`);
    await sleep(50);
  }
}

forEachStore('EventSub in /metrics under serve --workers 2', (kind: StoreKind) => {
  let s: Awaited<ReturnType<typeof serveOnTempStore>>;
  let hook: Awaited<ReturnType<typeof receiver>>;
  const sockets: Socket[] = [];
  let scrapes = 0;

  const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const res = await request(s.port, path, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: res.body, json: () => JSON.parse(res.body) };
  };
  const adminWrite = async (path: string, body?: unknown, method = 'POST') => {
    const res = await call(method, path, admin, body);
    assert.ok([200, 201, 204].includes(res.status), `${path}: ${res.status} ${res.body}`);
  };
  const subscribe = async (token: string, broadcaster: number, transport: Record<string, string>) => {
    const res = await call(
      'POST',
      '/helix/eventsub/subscriptions',
      { authorization: `Bearer ${token}`, 'client-id': s.clientId, 'content-type': 'application/json' },
      {
        type: 'stream.online',
        version: '1',
        condition: { broadcaster_user_id: String(broadcaster) },
        transport,
      },
    );
    assert.equal(res.status, 202, res.body);
    return res.json().data[0].id as string;
  };
  const goLive = (streamId: number, broadcaster: number) =>
    adminWrite('/admin/streams', {
      id: String(streamId),
      user_id: String(broadcaster),
      game_id: '996401',
      title: 'Metered across',
      tags: [],
      viewer_count: 1,
      started_at: '2026-06-15T11:00:00Z',
      language: 'en',
      is_mature: false,
    });
  /** SCRAPES scrapes, each on a connection of its own; checks that both workers answered some. */
  const scrapeEach = async (check: (samples: Sample[], i: number) => void) => {
    const tag = `es-scrape${++scrapes}-`;
    for (let i = 0; i < SCRAPES; i++) {
      const a = await request(s.port, '/metrics', { headers: { 'x-request-id': `${tag}${i}` } });
      assert.equal(a.status, 200, a.body);
      check(parse(a.body), i);
    }
    const answered = await pidsOf(s, new RegExp(`^${tag}`), SCRAPES);
    assert.deepEqual([...new Set(answered.values())].sort(), [...s.workerPids].sort());
  };

  before(async () => {
    // A longer deadline than the 2 s default: on a loaded machine a write on SQLite may wait that
    // long for the other worker's lock, and this test is about counts, not deadlines.
    s = await serveOnTempStore(
      kind,
      ['--workers', '2', '--drain', '0s', '--admin-token', ADMIN_TOKEN, '--query-timeout', '10s'],
      2,
    );
    hook = await receiver(verifyingThen(204));
    await adminWrite('/admin/games', { id: '996401', name: 'Metered Game' });
    for (const id of [...BROADCASTERS, HOOKED])
      await adminWrite('/admin/users', {
        id: String(id),
        login: `metered_across_${id}`,
        display_name: `Metered_Across_${id}`,
        broadcaster_type: '',
        description: '',
        created_at: '2024-01-01T00:00:00Z',
      });
  });
  after(async () => {
    for (const socket of sockets) socket.ws.close();
    await s?.stop();
    await hook?.close();
  });

  it('sums the sessions each worker holds', async () => {
    for (let i = 0; i < SESSIONS; i++) sockets.push(await openSocket(s.port));
    // The owner of each session names the worker that holds it: both hold some.
    const listed = (await call('GET', '/admin/eventsub/sessions', admin)).json().data as { owner: string }[];
    assert.equal(listed.length, SESSIONS);
    const held = new Map<number, number>();
    for (const { owner } of listed) {
      const pid = Number(owner.split(':').at(-2));
      held.set(pid, (held.get(pid) ?? 0) + 1);
    }
    assert.deepEqual([...held.keys()].sort(), [...s.workerPids].sort(), 'both workers hold sessions');

    await scrapeEach((samples, i) =>
      assert.equal(value(samples, 'helixd_eventsub_sessions'), SESSIONS, `scrape ${i}`),
    );
  });

  it("counts the store's subscriptions once, not once per worker", async () => {
    const userToken = s.banner('user token');
    assert.ok(userToken, 'the banner shows a user token');
    for (const [i, b] of BROADCASTERS.entries())
      await subscribe(userToken, b, { method: 'websocket', session_id: (sockets[i] as Socket).sessionId });
    const hooked = await subscribe(s.appToken, HOOKED, {
      method: 'webhook',
      callback: hook.url('/hook'),
      secret: SECRET,
    });
    await until(
      async () =>
        (
          await call('GET', `/helix/eventsub/subscriptions?subscription_id=${hooked}`, {
            authorization: `Bearer ${s.appToken}`,
            'client-id': s.clientId,
          })
        ).json().data[0]?.status === 'enabled',
      () => 'the webhook subscription is not enabled',
    );

    await scrapeEach((samples, i) => {
      const subs = (transport: string, status: string) =>
        value(samples, 'helixd_eventsub_subscriptions', { transport, status });
      assert.equal(subs('websocket', 'enabled'), SESSIONS, `scrape ${i}`);
      assert.equal(subs('webhook', 'enabled'), 1, `scrape ${i}`);
      assert.equal(find(samples, 'helixd_eventsub_subscriptions').length, 2, `scrape ${i}`);
    });
  });

  it('counts each notification once, whichever worker sent it', async () => {
    // Each write on a connection of its own: either worker takes it, and the one holding the
    // session (or claiming the webhook message) sends the notification.
    for (const [i, b] of BROADCASTERS.entries()) await goLive(99640000 + i, b);
    for (let k = 0; k < HOOKED_LIVES; k++) {
      await goLive(99645000 + k, HOOKED);
      await adminWrite(`/admin/streams/${99645000 + k}`, undefined, 'DELETE');
    }
    for (const [i, socket] of sockets.entries())
      await until(
        () => socket.notes.length >= 1,
        () => `session ${i} got no notification`,
      );
    await hook.wait('/hook', 1 + HOOKED_LIVES);
    // A webhook message is counted once its receiver has answered: a scrape may come between.
    const sent = (samples: Sample[], transport: string) =>
      find(samples, 'helixd_eventsub_deliveries_total', { transport, type: 'stream.online' }).reduce(
        (n, x) => n + x.value,
        0,
      );
    await until(
      async () => sent(parse((await request(s.port, '/metrics')).body), 'webhook') >= HOOKED_LIVES,
      () => 'the webhook notifications are not all counted',
    );
    // Each worker's tail moves past an event once it has sent its notifications.
    await until(
      async () => value(parse((await request(s.port, '/metrics')).body), 'helixd_eventsub_outbox_lag') === 0,
      () => 'a tail is still behind',
    );

    await scrapeEach((samples, i) => {
      for (const [transport, n] of [
        ['websocket', SESSIONS],
        ['webhook', HOOKED_LIVES],
      ] as const) {
        assert.equal(
          value(samples, 'helixd_eventsub_deliveries_total', { transport, type: 'stream.online' }),
          n,
          `${transport}, scrape ${i}`,
        );
        assert.equal(value(samples, 'helixd_eventsub_delivery_seconds_count', { transport }), n);
      }
      assert.deepEqual(find(samples, 'helixd_eventsub_delivery_failures_total'), []);
      // One figure for the cluster (the most of any worker), whichever worker answers.
      assert.equal(value(samples, 'helixd_eventsub_outbox_lag'), 0);
    });
    for (const [i, socket] of sockets.entries()) {
      assert.equal(socket.notes.length, 1, `session ${i}`);
      assert.equal(socket.notes[0]?.payload.event.broadcaster_user_id, String(BROADCASTERS[i]));
    }
    const notifications = hook.messages.filter((m) => m.json.challenge === undefined);
    assert.equal(notifications.length, HOOKED_LIVES);
  });
});
