// EventSub's housekeeping (docs/eventsub-design.md section 3, "Pruning"), rule by rule and at each
// rule's boundary: processes not seen for 30 s are swept with their sessions (a session being handed
// over is left while its reconnect window is open), and so is a process whose tail has not read an
// event the hour's rule deletes; events go once at or below the least cursor of the live processes
// and of the sessions being handed over and older than 60 s, and any older than an hour, except
// from the first one a queued webhook message needs; subscriptions disabled for more than an hour go
// with their queued messages.
//
// The rows are made through the app (sockets, the subscriptions API, admin triggers and commands, a
// webhook receiver). Then `housekeep(store, now)` runs with a chosen `now`, so that no minute or hour
// has to pass, and the outcome is read from the store's tables and, where there is one, the public
// surface. The app's own rounds (every 10 s, by the real clock) act on none of it first: by the real
// clock every row these tests make is fresh (the row of a lost process is written 20 s old, short of
// the 30 s; the rows of processes beating at a `now` ahead count as live). A `now` more than 30 s
// ahead finds the app's own process not seen: it is swept too, and at its next heartbeat closes its
// sockets (4000) and registers again, which the tests that hold sockets allow for. Rows the public
// surface cannot make are written directly, each said so where it is written.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/app.ts';
import { housekeep } from '../../src/eventsub/housekeeping.ts';
import { openStore } from '../../src/store/db.ts';
import { freePort } from '../clients/twurple.ts';
import { ADMIN_TOKEN, bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';
import { postWebhookSubscription, type Received, receiver, subscriptionStatus } from '../support/webhooks.ts';
import { type Client, connect, until } from '../support/ws-client.ts';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
const SECOND = 1000;
const HOUR = 3_600_000;
/** The WebSocket channel, the channel of other follows, and the two webhook channels. */
const CHANNEL = 995001;
const OTHER = 995002;
const HOOKED = 995003;
const REVOKED = 995004;
/** A process id no process has: the holder of sessions that stands for one killed. */
const LOST = 'lost-host:1:1';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// The two stores at once (each waits up to 5 s for a heartbeat); each store's tests one after another.
describe('EventSub housekeeping, the two stores at once', { concurrency: true }, () => {
  forEachStore('EventSub housekeeping', (kind: StoreKind) => {
    describe('one rule after another', { concurrency: false }, () => {
      let t: TestApp;
      let base: string;
      let userToken: string;
      let appToken: string;
      let hooks: Awaited<ReturnType<typeof receiver>>;
      /** notifications to /keep fail (500) while this holds */
      let failing = true;
      /** answers the revocation held by the receiver */
      let release: (() => void) | undefined;

      before(async () => {
        const port = await freePort();
        t = await startTestApp(kind, {
          users: 20,
          config: {
            adminToken: ADMIN_TOKEN,
            publicUrl: `http://127.0.0.1:${port}`,
            // Past the events' 60 s: what a session being handed over keeps is seen only with a
            // window that long (the platform's is 30 s; the longest allowed, 10 minutes).
            wsReconnectGrace: '10m',
            webhookBackoff: '200ms',
            webhookRetries: 20,
          },
        });
        await t.app.listen({ port, host: '127.0.0.1' });
        base = `ws://127.0.0.1:${port}`;
        const users = [CHANNEL, OTHER, HOOKED, REVOKED].map((id) => ({
          id: String(id),
          login: `housekept_${id}`,
          display_name: `Housekept_${id}`,
          broadcaster_type: '',
          description: '',
          created_at: '2024-01-01T00:00:00Z',
        }));
        const res = await t.inject({
          method: 'POST',
          url: '/admin/users',
          headers: admin,
          payload: JSON.stringify(users),
        });
        assert.equal(res.statusCode, 201, res.body);
        userToken = await t.userToken(['moderator:read:followers'], CHANNEL);
        appToken = await t.appToken();
        hooks = await receiver((m: Received) => {
          if (m.json.challenge !== undefined) return { status: 200, body: m.json.challenge };
          if (m.path === '/keep') return { status: failing ? 500 : 204 };
          // The revocation to /held is answered when the test says: until then it is queued, claimed.
          return new Promise((resolve) => {
            release = () => resolve({ status: 204 });
          });
        });
      });
      after(async () => {
        release?.();
        await t.close();
        await hooks.close();
      });

      const db = () => t.store.db;

      /** A socket with one channel.follow subscription of CHANNEL made through the subscriptions API. */
      async function subscribed(): Promise<{ c: Client; sessionId: string; subscriptionId: string }> {
        const c = await connect(`${base}/ws`);
        const sessionId = (await c.next('session_welcome')).payload.session.id as string;
        const res = await t.inject({
          method: 'POST',
          url: '/helix/eventsub/subscriptions',
          headers: {
            ...bearer(userToken),
            'client-id': t.seed?.demoClientId as string,
            'content-type': 'application/json',
          },
          payload: JSON.stringify({
            type: 'channel.follow',
            version: '2',
            condition: { broadcaster_user_id: String(CHANNEL), moderator_user_id: String(CHANNEL) },
            transport: { method: 'websocket', session_id: sessionId },
          }),
        });
        assert.equal(res.statusCode, 202, res.body);
        return { c, sessionId, subscriptionId: res.json().data[0].id };
      }

      /** The status GET /helix/eventsub/subscriptions shows for a WebSocket subscription (undefined: none). */
      async function wsStatus(id: string): Promise<string | undefined> {
        const res = await t.get(`/helix/eventsub/subscriptions?subscription_id=${id}`, bearer(userToken));
        assert.equal(res.statusCode, 200, res.body);
        return res.json().data[0]?.status;
      }

      /** An admin trigger; the user it drew or named. */
      async function trigger(type: string, broadcaster: number): Promise<Record<string, string>> {
        const res = await t.inject({
          method: 'POST',
          url: '/admin/eventsub/trigger',
          headers: admin,
          payload: JSON.stringify({ type, broadcaster_id: String(broadcaster) }),
        });
        assert.equal(res.statusCode, 201, res.body);
        return res.json().written[0].data;
      }

      /** The last event recorded: its id and time. */
      async function lastEvent(): Promise<{ id: number; at: number }> {
        const row = await db()
          .selectFrom('events')
          .select(['id', 'at'])
          .orderBy('id', 'desc')
          .limit(1)
          .executeTakeFirstOrThrow();
        return { id: Number(row.id), at: Number(row.at) };
      }

      /** A write at a later millisecond than every event before it: its last event. */
      async function laterWrite(type: string, broadcaster: number): Promise<{ id: number; at: number }> {
        const before = await lastEvent().catch(() => ({ id: 0, at: 0 }));
        while (Date.now() <= before.at) await sleep(1);
        await trigger(type, broadcaster);
        const last = await lastEvent();
        assert.ok(last.at > before.at && last.id > before.id);
        return last;
      }

      const eventIds = async () =>
        (await db().selectFrom('events').select('id').orderBy('id').execute()).map((r) => Number(r.id));
      const processIds = async () =>
        (await db().selectFrom('eventsub_processes').select('id').execute()).map((r) => r.id);
      const session = (id: string) =>
        db().selectFrom('eventsub_sessions').selectAll().where('id', '=', id).executeTakeFirst();

      /**
       * Written directly: a process that beats at `seenAt` with its tail at `cursor`. No process of this
       * test can be seen at a `now` ahead of the real clock; this row stands for one that is.
       */
      const beating = (id: string, seenAt: number, cursor: number) =>
        db()
          .insertInto('eventsub_processes')
          .values({ id, seen_at: seenAt, cursor })
          .onConflict((oc) => oc.column('id').doUpdateSet({ seen_at: seenAt, cursor }))
          .execute();
      const forget = (...ids: string[]) =>
        db().deleteFrom('eventsub_processes').where('id', 'in', ids).execute();

      it('sweeps a process not seen for 30 s: its heartbeat row stays at 30.000 s and goes at 30.001 s', async () => {
        // A socket: the app's own process registers its heartbeat row with it.
        const { c } = await subscribed();
        const own = await processIds();
        assert.equal(own.length, 1);
        // Written directly: the row a process killed 20 s ago leaves (a stopped one deletes its own).
        const seen = Date.now() - 20 * SECOND;
        await beating('killed-host:1:1', seen, 0);
        try {
          await housekeep(t.store, seen + 30 * SECOND);
          assert.deepEqual((await processIds()).sort(), [...own, 'killed-host:1:1'].sort());
          await housekeep(t.store, seen + 30 * SECOND + 1);
          // The app's own process beats every 5 s: seen at this `now`, it stays.
          assert.deepEqual(await processIds(), own);
        } finally {
          await forget('killed-host:1:1');
          c.ws.close();
          await c.closed;
        }
      });

      it('ends the sessions of a process not seen for 30 s (websocket_disconnected); alive, it closes them 4000', async () => {
        const { c, sessionId, subscriptionId } = await subscribed();
        // A second session being handed over when the sweep comes: left to its reconnect.
        const moving = await subscribed();
        const asked = await t.inject({
          method: 'POST',
          url: `/admin/eventsub/sessions/${moving.sessionId}/reconnect`,
          headers: admin,
        });
        assert.equal(asked.statusCode, 202, asked.body);
        const movingUrl = (await moving.c.next('session_reconnect')).payload.session.reconnect_url as string;
        const { id: owner } = await db()
          .selectFrom('eventsub_sessions')
          .select('owner as id')
          .where('id', '=', sessionId)
          .executeTakeFirstOrThrow();
        const { seen_at } = await db()
          .selectFrom('eventsub_processes')
          .select('seen_at')
          .where('id', '=', owner)
          .executeTakeFirstOrThrow();
        // Seen 30 s before `now` (a heartbeat meanwhile only makes it later): nothing goes.
        await housekeep(t.store, Number(seen_at) + 30 * SECOND);
        assert.equal((await session(sessionId))?.status, 'connected');
        assert.equal(await wsStatus(subscriptionId), 'enabled');

        // 35 s ahead of the clock: the app's process was last seen more than 30 s before.
        const now = Date.now() + 35 * SECOND;
        await housekeep(t.store, now);
        assert.ok(!(await processIds()).includes(owner));
        assert.equal(await session(sessionId), undefined);
        assert.equal(await wsStatus(subscriptionId), 'websocket_disconnected');
        const sub = await db()
          .selectFrom('eventsub_subscriptions')
          .select('disabled_at')
          .where('id', '=', subscriptionId)
          .executeTakeFirstOrThrow();
        assert.equal(Number(sub.disabled_at), now);
        // The process is alive: its next heartbeat finds its row gone, it closes its sockets with 4000
        // and registers again.
        const late = new Promise((r) => setTimeout(r, 8 * SECOND, 'still open').unref());
        assert.equal(await Promise.race([c.closed.then((x) => x.code), late]), 4000);
        await until(
          'the swept process registered again',
          async () => (await processIds()).includes(owner),
          6000,
        );
        assert.equal(await wsStatus(subscriptionId), 'websocket_disconnected');
        // The session being handed over: its old socket closed too, its row kept for the claim.
        assert.equal((await moving.c.closed).code, 4000);
        assert.equal((await session(moving.sessionId))?.status, 'reconnecting');
        const claimed = await connect(movingUrl);
        assert.equal((await claimed.next('session_welcome')).payload.session.id, moving.sessionId);
        assert.equal(await wsStatus(moving.subscriptionId), 'enabled');
        claimed.ws.close();
        await claimed.closed;
      });

      it('leaves a session being handed over to its reconnect window; its cursor keeps the later events', async () => {
        const [a, b, c] = [await subscribed(), await subscribed(), await subscribed()];
        const reconnect = async (s: { c: Client; sessionId: string }) => {
          const res = await t.inject({
            method: 'POST',
            url: `/admin/eventsub/sessions/${s.sessionId}/reconnect`,
            headers: admin,
          });
          assert.equal(res.statusCode, 202, res.body);
          const url = (await s.c.next('session_reconnect')).payload.session.reconnect_url as string;
          // The next one's window ends a few milliseconds later.
          await sleep(5);
          return url;
        };
        const urlA = await reconnect(a);
        const urlB = await reconnect(b);
        const urlC = await reconnect(c);
        const ids = [a.sessionId, b.sessionId, c.sessionId];
        // Written directly: the process holding the three was killed while handing them over (this
        // app, swept below as not seen, would otherwise end them when it closes its sockets).
        await db().updateTable('eventsub_sessions').set({ owner: LOST }).where('id', 'in', ids).execute();
        const [rowA, rowB] = [await session(a.sessionId), await session(b.sessionId)];
        assert.equal(rowB?.status, 'reconnecting');
        const untilA = Number(rowA?.reconnect_until);
        const untilB = Number(rowB?.reconnect_until);
        assert.ok(untilA < untilB, `${untilA} < ${untilB}`);
        // A follow after their cursors: none of them was sent it, as far as the store knows.
        const followed = await trigger('channel.follow', CHANNEL);
        const follow = await lastEvent();
        assert.ok(follow.id > Number(rowB?.cursor));

        // Older than 60 s and read by no live process (this app's is not seen at this `now`): kept for
        // the sessions being handed over. The events at or below the least of their cursors go.
        await housekeep(t.store, follow.at + 60 * SECOND + 1);
        for (const id of ids) assert.equal((await session(id))?.status, 'reconnecting');
        let left = await eventIds();
        assert.ok(left.includes(follow.id), 'the event after the cursors stays');
        assert.ok(
          left.every((id) => id > Number(rowA?.cursor)),
          `at or below the least cursor: gone (${left})`,
        );

        // The client of C reconnects, through a load balancer, to another instance: welcomed with the
        // same id, it is sent the follow it had not been sent.
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
          const fresh = await connect(urlC.replace(base, `ws://127.0.0.1:${port}`));
          assert.equal((await fresh.next('session_welcome')).payload.session.id, c.sessionId);
          const note = await fresh.next('notification');
          assert.equal(note.payload.event.user_id, followed.user_id);
          assert.equal(await wsStatus(c.subscriptionId), 'enabled');
          fresh.ws.close();
          await fresh.closed;
        } finally {
          await other.close();
          // The app does not close the store it was given (a PostgreSQL pool would hold the process).
          await otherStore.close();
        }

        // At the end of B's window (ten minutes on): B is left for the client that may still
        // reconnect, A, whose window ended a few milliseconds before, is swept.
        await housekeep(t.store, untilB);
        assert.equal(await session(a.sessionId), undefined);
        assert.equal(await wsStatus(a.subscriptionId), 'websocket_disconnected');
        // Its reconnect URL names nothing now.
        assert.equal((await (await connect(urlA)).closed).code, 4007);
        assert.equal((await session(b.sessionId))?.status, 'reconnecting');
        assert.equal(await wsStatus(b.subscriptionId), 'enabled');
        // B's cursor still keeps the follow.
        left = await eventIds();
        assert.ok(left.includes(follow.id), `kept for B (${left})`);

        // B's client reconnects and leaves: the session ends (its cursor would hold the next tests' events).
        const back = await connect(urlB);
        assert.equal((await back.next('session_welcome')).payload.session.id, b.sessionId);
        back.ws.close();
        await back.closed;
        await until('the session of B ended', async () => (await session(b.sessionId)) === undefined);
        for (const s of [a, b, c]) {
          s.c.ws.close();
          await s.c.closed;
        }
      });

      it('prunes the events at or below the least cursor of the live processes once older than 60 s', async () => {
        const first = await laterWrite('channel.follow', OTHER);
        const second = await laterWrite('channel.follow', OTHER);
        const now = second.at + 60 * SECOND + 1;
        try {
          // A tail that has read every event but the last.
          await beating('reader-host:1:1', now, second.id - 1);
          await housekeep(t.store, now);
          let left = await eventIds();
          assert.ok(!left.includes(first.id), 'at or below the cursor: gone');
          assert.deepEqual(left, [second.id], 'above the cursor: kept');

          // The tail read on (written directly): the last event goes once older than 60 s, not before.
          await beating('reader-host:1:1', now, second.id);
          await housekeep(t.store, second.at + 60 * SECOND);
          left = await eventIds();
          assert.deepEqual(left, [second.id], '60 s old: kept');
          await housekeep(t.store, second.at + 60 * SECOND + 1);
          left = await eventIds();
          assert.deepEqual(left, [], '60.001 s old: gone');
        } finally {
          await forget('reader-host:1:1');
        }
      });

      it('prunes an event older than an hour whoever has not read it, and sweeps a tail that far behind', async () => {
        const first = await laterWrite('channel.follow', OTHER);
        const second = await laterWrite('channel.follow', OTHER);
        const now = second.at + HOUR;
        try {
          // Two tails: one beating at `now` that has not read every event recorded before the hour's
          // bound (the first write), and one that has, last seen 30 s before `now` (still live).
          await beating('behind-host:1:1', now, first.id - 1);
          await beating('reader-host:1:1', now - 30 * SECOND, first.id);
          await housekeep(t.store, now);
          assert.deepEqual(
            (await processIds()).filter((p) => p.endsWith(':1:1')),
            ['reader-host:1:1'],
          );
          let left = await eventIds();
          // The first write is older than an hour: gone, though the grace rule alone would keep it for
          // the tail behind (swept). The second, an hour old to the millisecond, is kept for the reader.
          assert.ok(!left.includes(first.id));
          assert.ok(left.includes(second.id), 'an hour old: kept');

          // The reader beats again, its tail where it was.
          await beating('reader-host:1:1', now + 1, first.id);
          await housekeep(t.store, now + 1);
          left = await eventIds();
          assert.ok(!left.includes(second.id), 'an hour and a millisecond old: gone');
          // Its tail had not read it: swept, though seen.
          assert.ok(!(await processIds()).includes('reader-host:1:1'));
        } finally {
          await forget('behind-host:1:1', 'reader-host:1:1');
        }
      });

      it('keeps the event a queued webhook notification needs, and every later one, past the hour', async () => {
        const res = await postWebhookSubscription(
          t,
          appToken,
          'stream.online',
          { broadcaster_user_id: String(HOOKED) },
          hooks.url('/keep'),
        );
        assert.equal(res.statusCode, 202, res.body);
        const id = res.json().data[0].id as string;
        await until(
          'the webhook verified',
          async () => (await subscriptionStatus(t, appToken, id)) === 'enabled',
        );
        const before = await laterWrite('channel.follow', OTHER);
        await laterWrite('stream.online', HOOKED);
        // Its notification fails (500) and waits for its next attempt.
        await hooks.wait('/keep', 2);
        const later = await laterWrite('channel.follow', OTHER);
        const queued = await db()
          .selectFrom('webhook_deliveries')
          .select('event_id')
          .where('subscription_id', '=', id)
          .executeTakeFirstOrThrow();
        const needed = Number(queued.event_id);
        assert.ok(before.id < needed && needed < later.id);

        const now = later.at + HOUR + 1;
        await housekeep(t.store, now);
        const left = await eventIds();
        assert.equal(left[0], needed, `from the one a queued message needs: kept (${left})`);
        assert.ok(left.includes(later.id), 'a later one: kept');

        // The callback recovers: the next attempt is made from the event kept.
        failing = false;
        await until(
          'the notification sent',
          async () =>
            (
              await db()
                .selectFrom('webhook_deliveries')
                .select('id')
                .where('subscription_id', '=', id)
                .execute()
            ).length === 0,
        );
        const sent = hooks.messages.filter((m) => m.path === '/keep').at(-1);
        assert.equal(sent?.headers['twitch-eventsub-message-type'], 'notification');
        assert.equal(sent?.json.event?.broadcaster_user_id, String(HOOKED));
        await housekeep(t.store, now);
        assert.deepEqual(await eventIds(), [], 'nothing needs them now: gone');
      });

      it('deletes a subscription disabled for more than an hour, with its queued message', async () => {
        const res = await postWebhookSubscription(
          t,
          appToken,
          'stream.online',
          { broadcaster_user_id: String(REVOKED) },
          hooks.url('/held'),
        );
        assert.equal(res.statusCode, 202, res.body);
        const id = res.json().data[0].id as string;
        await until(
          'the webhook verified',
          async () => (await subscriptionStatus(t, appToken, id)) === 'enabled',
        );
        const revoked = await t.inject({
          method: 'POST',
          url: `/admin/eventsub/subscriptions/${id}/revoke`,
          headers: admin,
          payload: JSON.stringify({ status: 'authorization_revoked' }),
        });
        assert.equal(revoked.statusCode, 200, revoked.body);
        // The revocation is being sent: the callback holds its answer, the message stays queued.
        await hooks.wait('/held', 2);
        const deliveries = () =>
          db().selectFrom('webhook_deliveries').select('kind').where('subscription_id', '=', id).execute();
        assert.deepEqual(await deliveries(), [{ kind: 'revocation' }]);
        const { disabled_at } = await db()
          .selectFrom('eventsub_subscriptions')
          .select('disabled_at')
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        const disabledAt = Number(disabled_at);

        await housekeep(t.store, disabledAt + HOUR);
        assert.equal(await subscriptionStatus(t, appToken, id), 'authorization_revoked');
        assert.equal((await deliveries()).length, 1);
        await housekeep(t.store, disabledAt + HOUR + 1);
        assert.equal(await subscriptionStatus(t, appToken, id), undefined);
        assert.deepEqual(await deliveries(), []);
        release?.();
      });
    });
  });
});
