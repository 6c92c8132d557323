import { type Kysely, sql } from 'kysely';

// EventSub's limit checks, by index (src/store/eventsub-subscriptions.ts). Each subscription POST
// counts the live subscriptions of its owner (`liveCost`: client, method and, for a WebSocket, the
// user) and the sessions of its (client, user) (`sessionsOf`). With only 015's indexes the first
// read the client's whole range of the unique index (every live subscription of the client) and the
// second scanned `eventsub_sessions`: with one client, 1,000 sessions and 10,000 subscriptions,
// creating them slowed from 251 a second to 45 (bench/eventsub.ts,
// docs/perf/2026-11-27-eventsub.md). These two indexes make each check one range of its owner.
//
// Indexes added: eventsub_subscriptions_owner, eventsub_sessions_user. No table or column changes.

export async function up(db: Kysely<unknown>): Promise<void> {
  const run = (text: string) => sql.raw(text).execute(db);
  await run(
    'create index eventsub_subscriptions_owner on eventsub_subscriptions (client_id, method, auth_user_id, status)',
  );
  await run('create index eventsub_sessions_user on eventsub_sessions (client_id, user_id)');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql.raw('drop index eventsub_sessions_user').execute(db);
  await sql.raw('drop index eventsub_subscriptions_owner').execute(db);
}
