import { type Kysely, PostgresAdapter, sql } from 'kysely';

// EventSub (docs/eventsub-design.md). `events` is the outbox: the write path records each event in
// the transaction of the write that caused it (src/records/events.ts), so the stored row is the
// truth every process delivers from, and nothing is recorded for a write that rolled back. A
// `control` row carries a change of the subscriptions or a command for a session through the same
// log, at its place in the order. Ids are the commit order: AUTOINCREMENT on SQLite (one writer at a
// time, a number never given twice); on PostgreSQL every transaction that records events takes one
// advisory lock first (src/store/events.ts), so an id never becomes visible after a later one.
//
// Tables added: events, eventsub_subscriptions, eventsub_sessions, eventsub_processes,
// webhook_deliveries. No column of another table changes.

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  const serial = pg ? 'bigserial primary key' : 'integer primary key autoincrement';
  const run = (text: string) => sql.raw(text).execute(db);
  // kind: 'event' or 'control'; match_key: the type and the value of its condition's key field
  // (`channel.follow:1234`), which a subscription stores too; payload: JSON text; at: Unix ms.
  await run(`create table events (id ${serial}, kind text not null, type text not null,
    match_key text not null, payload text not null, at bigint not null)`);
  await run('create index events_at on events (at)');

  // condition: canonical JSON text (the type's fields in the catalogue's order); times: Unix ms.
  await run(`create table eventsub_subscriptions (id text primary key, client_id text not null,
    type text not null, version text not null, condition text not null, match_key text not null,
    auth_user_id bigint, status text not null, method text not null, callback text, secret text,
    session_id text, cost integer not null, from_event bigint not null, created_at bigint not null,
    disabled_at bigint)`);
  await run('create index eventsub_subscriptions_match on eventsub_subscriptions (match_key, status)');
  await run(
    'create index eventsub_subscriptions_client on eventsub_subscriptions (client_id, created_at, id)',
  );
  await run('create index eventsub_subscriptions_session on eventsub_subscriptions (session_id)');
  // A duplicate is refused by the store however two requests race: one live subscription per
  // client, type, version, condition and destination.
  await run(`create unique index eventsub_subscriptions_unique on eventsub_subscriptions
    (client_id, type, version, condition, coalesce(callback, session_id))
    where status in ('enabled', 'webhook_callback_verification_pending')`);

  await run(`create table eventsub_sessions (id text primary key, owner text not null,
    status text not null, client_id text, user_id bigint, keepalive_seconds integer not null,
    connected_at bigint not null, cursor bigint not null, reconnect_hash text,
    reconnect_until bigint)`);
  await run('create index eventsub_sessions_owner on eventsub_sessions (owner)');
  await run(`create table eventsub_processes (id text primary key, seen_at bigint not null,
    cursor bigint not null)`);

  // A message waiting for its webhook: its body is made when it is sent, from the event and the
  // subscription (the events it names are kept until it goes: src/store/events.ts pruneEvents).
  await run(`create table webhook_deliveries (id ${serial}, subscription_id text not null,
    kind text not null, event_id bigint, challenge text, attempts integer not null,
    due_at bigint not null, claimed_by text, claimed_until bigint)`);
  await run('create index webhook_deliveries_subscription on webhook_deliveries (subscription_id, id)');
  await run('create index webhook_deliveries_due on webhook_deliveries (due_at)');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'webhook_deliveries',
    'eventsub_processes',
    'eventsub_sessions',
    'eventsub_subscriptions',
    'events',
  ])
    await sql.raw(`drop table ${table}`).execute(db);
}
