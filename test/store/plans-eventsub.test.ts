// Query plans of the limit checks a subscription POST runs (src/store/eventsub-subscriptions.ts):
// the live subscriptions of one (client, user) (`liveCost`) and the sessions of one (client, user)
// (`sessionsOf`) are each one range of an index of migration 016, not the client's every
// subscription nor the whole sessions table, so that creating subscriptions does not slow as they
// grow (bench/eventsub.ts). And the two reads of a tail's batch of control rows
// (src/eventsub/service.ts `#readEnabled`): the subscriptions by id (`subscriptionsByIds`) and the
// grants of their users (`grantingScope`) are probes of an index, not a read of the whole table.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import { subscriptionsByIds } from '../../src/store/eventsub-sessions.ts';
import { grantingScope, grantKey, liveCost, sessionsOf } from '../../src/store/eventsub-subscriptions.ts';
import { forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';
import { queryPlans } from './plans.ts';

forEachStore('query plans of the EventSub limit checks', (kind: StoreKind) => {
  let t: TestApp;
  const USERS = 500;
  let client: string;
  /** the ids of the store's users, in order */
  let userIds: number[];

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
    // Ten user tokens of the client for each of the store's users (a user's logins accumulate
    // them; every other user's grant user:read:email), and ten of another client granting it: what
    // a batch's grants are read from.
    await db
      .insertInto('clients')
      .values({
        id: 'another-client',
        name: 'Another',
        secret_hash: 'x',
        demo_secret: null,
        redirect_uris: '[]',
        created_at: 0,
      })
      .execute();
    userIds = (await db.selectFrom('users').select('id').orderBy('id').execute()).map((r) => Number(r.id));
    for (let n = 0; n < 10; n++) {
      const token = (clientId: string, userId: number, scopes: string) => ({
        hash: `plan-token-${clientId}-${userId}-${n}`,
        kind: 'user' as const,
        client_id: clientId,
        user_id: userId,
        scopes,
        expires_at: 4_000_000_000,
        refresh_hash: null,
        created_at: 0,
      });
      await db
        .insertInto('tokens')
        .values(
          userIds.flatMap((u, i) => [
            token(client, u, i % 2 ? 'user:read:email' : 'moderation:read'),
            token('another-client', u, 'user:read:email'),
          ]),
        )
        .execute();
    }
    if (kind === 'postgres') await sql`analyze eventsub_sessions, eventsub_subscriptions, tokens`.execute(db);
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

  it('subscriptionsByIds reads a batch of subscriptions in one query, by the primary key', async () => {
    const ids = Array.from({ length: 50 }, (_, i) => `sub-${i * 7 + 1}-${i % 10}`);
    const queries = await captured((db) => subscriptionsByIds(db, [...ids, 'sub-none']));
    assert.equal(queries.length, 1, 'one query for the batch');
    const pk =
      kind === 'sqlite' ? 'sqlite_autoindex_eventsub_subscriptions_1' : 'eventsub_subscriptions_pkey';
    assertRange(await plan(queries[0] as (typeof queries)[0]), 'eventsub_subscriptions', pk);
    const rows = await subscriptionsByIds(t.store.db, [...ids, 'sub-none', ids[0] as string]);
    assert.deepEqual([...rows.keys()].sort(), [...ids].sort());
    assert.equal(rows.get('sub-8-1')?.session_id, 's8');
  });

  it('grantingScope reads the grants of a batch of users in one query, by tokens_client_user', async () => {
    const pairs = userIds.slice(0, 50).map((userId) => ({ clientId: client, userId }));
    const queries = await captured((db) => grantingScope(db, pairs, 'user:read:email', 1000));
    assert.equal(queries.length, 1, 'one query for the batch');
    assertRange(await plan(queries[0] as (typeof queries)[0]), 'tokens', 'tokens_client_user');
    // Every other user granted the scope to this client; another client's grant counts for none.
    const granted = await grantingScope(t.store.db, pairs, 'user:read:email', 1000);
    assert.deepEqual(
      [...granted].sort(),
      pairs
        .filter((_, i) => i % 2)
        .map((p) => grantKey(p.clientId, p.userId))
        .sort(),
    );
    // A grant whose token is dead (expired, no refresh token) is no grant.
    assert.deepEqual([...(await grantingScope(t.store.db, pairs, 'user:read:email', 4_000_000_001))], []);
  });
});
