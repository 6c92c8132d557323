// Query plans of the limit checks a subscription POST runs (src/store/eventsub-subscriptions.ts):
// the live subscriptions of one (client, user) (`liveCost`) and the sessions of one (client, user)
// (`sessionsOf`) are each one range of an index of migration 016, not the client's every
// subscription nor the whole sessions table, so that creating subscriptions does not slow as they
// grow (bench/eventsub.ts).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import { liveCost, sessionsOf } from '../../src/store/eventsub-subscriptions.ts';
import { forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';
import { queryPlans } from './plans.ts';

forEachStore('query plans of the EventSub limit checks', (kind: StoreKind) => {
  let t: TestApp;
  const USERS = 500;
  let client: string;

  before(async () => {
    t = await startTestApp(kind);
    const db = t.store.db;
    client = t.seed?.demoClientId ?? '';
    assert.ok(client, 'the seeded store has a demo client');
    // One client, 500 users with a session and 10 WebSocket subscriptions each, as the bench has.
    for (let u = 1; u <= USERS; u++) {
      await db
        .insertInto('eventsub_sessions')
        .values({
          id: `s${u}`,
          owner: 'test',
          status: 'connected',
          client_id: client,
          user_id: u,
          keepalive_seconds: 10,
          connected_at: 0,
          cursor: 0,
        })
        .execute();
      await db
        .insertInto('eventsub_subscriptions')
        .values(
          Array.from({ length: 10 }, (_, i) => ({
            id: `sub-${u}-${i}`,
            client_id: client,
            type: 'stream.online',
            version: '1',
            condition: JSON.stringify({ broadcaster_user_id: String(u * 100 + i) }),
            match_key: `stream.online:${u * 100 + i}`,
            auth_user_id: u,
            status: 'enabled',
            method: 'websocket',
            session_id: `s${u}`,
            cost: 0,
            from_event: 0,
            created_at: u,
          })),
        )
        .execute();
    }
    if (kind === 'postgres') await sql`analyze eventsub_sessions, eventsub_subscriptions`.execute(db);
    else await sql`analyze`.execute(db);
  });
  after(() => t.close());

  const { captured, plan } = queryPlans(kind, () => t);
  const assertRange = (lines: string[], table: string, index: string) => {
    const text = lines.join('\n');
    assert.match(text, new RegExp(`\\b${index}\\b`), `expected ${index}:\n${text}`);
    if (kind === 'sqlite') assert.ok(!lines.some((l) => l.startsWith('SCAN')), `full scan:\n${text}`);
    else assert.doesNotMatch(text, /Seq Scan/, `full scan:\n${text}`);
    assert.ok(text.includes(table), text);
  };

  it('liveCost reads the live subscriptions of one (client, user) by eventsub_subscriptions_owner', async () => {
    const [q] = await captured((db) => liveCost(db, { method: 'websocket', clientId: client, userId: 7 }));
    assert.ok(q);
    assertRange(await plan(q), 'eventsub_subscriptions', 'eventsub_subscriptions_owner');
    const cost = await liveCost(t.store.db, {
      method: 'websocket',
      clientId: client,
      userId: 7,
    });
    assert.deepEqual(cost, { count: 10, cost: 0 });
  });

  it('sessionsOf reads the sessions of one (client, user) by eventsub_sessions_user', async () => {
    const [q] = await captured((db) => sessionsOf(db, client, 7));
    assert.ok(q);
    assertRange(await plan(q), 'eventsub_sessions', 'eventsub_sessions_user');
    assert.equal(await sessionsOf(t.store.db, client, 7), 1);
  });
});
