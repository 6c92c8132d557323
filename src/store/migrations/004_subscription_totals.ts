import { type Kysely, PostgresAdapter, sql } from 'kysely';

// GET /subscriptions returns `total` (all subscribers of the broadcaster) and `points` (Tier 1 = 1,
// Tier 2 = 2, Tier 3 = 6) with every page. Aggregating them per request costs time proportional to
// the broadcaster's size even over a covering index (measured on a broadcaster of 500,000
// subscriptions: docs/api.md, GET /subscriptions), so they are kept as counters, one row per
// broadcaster, read with one primary-key lookup.
//
// Triggers keep the counters right whatever writes the subscriptions (seeding, import, an admin
// write path). PostgreSQL uses statement-level triggers with transition tables, so a bulk insert
// of the seeder updates each broadcaster's row once per statement rather than once per row; SQLite
// only has row triggers. TRUNCATE bypasses triggers: empty the table with DELETE.
const POINTS = (tier: string) =>
  `(case ${tier} when '1000' then 1 when '2000' then 2 when '3000' then 6 else 0 end)`;

/**
 * Fills an empty subscription_totals from the subscriptions, one row per broadcaster, as the
 * triggers keep them; on SQLite in the order of each broadcaster's first subscription (its least
 * rowid), the order in which the insert trigger adds them. Run by this migration, and by a bulk
 * load that drops the triggers while it writes (src/store/subscriptions.ts, recountTotals).
 */
export const fillTotals = (postgres: boolean) => `
  insert into subscription_totals (broadcaster_id, total, points)
  select broadcaster_id, count(*), sum(${POINTS('tier')}) from subscriptions group by broadcaster_id
  ${postgres ? '' : 'order by min(rowid)'}`;

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('subscription_totals')
    .addColumn('broadcaster_id', 'bigint', (c) => c.primaryKey())
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('points', 'integer', (c) => c.notNull())
    .execute();

  if (isPostgres(db)) {
    await sql
      .raw(`
      create function subscription_totals_apply() returns trigger language plpgsql as $$
      begin
        if tg_op in ('DELETE', 'UPDATE') then
          update subscription_totals t set total = t.total - d.n, points = t.points - d.p
          from (select broadcaster_id, count(*) as n, sum(${POINTS('tier')}) as p
                from old_rows group by broadcaster_id) d
          where t.broadcaster_id = d.broadcaster_id;
        end if;
        if tg_op in ('INSERT', 'UPDATE') then
          insert into subscription_totals (broadcaster_id, total, points)
          select broadcaster_id, count(*), sum(${POINTS('tier')}) from new_rows group by broadcaster_id
          on conflict (broadcaster_id) do update
            set total = subscription_totals.total + excluded.total,
                points = subscription_totals.points + excluded.points;
        end if;
        return null;
      end $$`)
      .execute(db);
    // A trigger with transition tables serves one event only.
    await sql
      .raw(`create trigger subscriptions_totals_insert after insert on subscriptions
      referencing new table as new_rows for each statement execute function subscription_totals_apply()`)
      .execute(db);
    await sql
      .raw(`create trigger subscriptions_totals_delete after delete on subscriptions
      referencing old table as old_rows for each statement execute function subscription_totals_apply()`)
      .execute(db);
    await sql
      .raw(`create trigger subscriptions_totals_update after update on subscriptions
      referencing old table as old_rows new table as new_rows
      for each statement execute function subscription_totals_apply()`)
      .execute(db);
  } else {
    const add = (row: string) => `
      insert into subscription_totals (broadcaster_id, total, points)
      values (${row}.broadcaster_id, 1, ${POINTS(`${row}.tier`)})
      on conflict (broadcaster_id) do update
        set total = total + 1, points = points + excluded.points;`;
    const remove = (row: string) => `
      update subscription_totals set total = total - 1, points = points - ${POINTS(`${row}.tier`)}
      where broadcaster_id = ${row}.broadcaster_id;`;
    await sql
      .raw(`create trigger subscriptions_totals_insert after insert on subscriptions begin ${add('new')} end`)
      .execute(db);
    await sql
      .raw(
        `create trigger subscriptions_totals_delete after delete on subscriptions begin ${remove('old')} end`,
      )
      .execute(db);
    await sql
      .raw(
        `create trigger subscriptions_totals_update after update of broadcaster_id, tier on subscriptions
        begin ${remove('old')} ${add('new')} end`,
      )
      .execute(db);
  }

  // A store that already holds subscriptions gets its counters now.
  await sql.raw(fillTotals(isPostgres(db))).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['insert', 'delete', 'update']) {
    await sql
      .raw(
        isPostgres(db)
          ? `drop trigger subscriptions_totals_${t} on subscriptions`
          : `drop trigger subscriptions_totals_${t}`,
      )
      .execute(db);
  }
  if (isPostgres(db)) await sql.raw('drop function subscription_totals_apply()').execute(db);
  await db.schema.dropTable('subscription_totals').execute();
}
