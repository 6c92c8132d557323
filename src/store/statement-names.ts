// Names for the statements PostgreSQL may keep prepared: the queries built once per shape
// (src/store/page.ts shapedRows). A named statement is parsed once per connection; each later run
// sends only its values (Bind, Execute), where an unnamed one sends its text and is parsed again
// every time (docs/perf/2026-11-27-per-request.md). The SQL text of every shape is named when the
// shape is made, and src/store/pg-deadline.ts runs a text that has a name as that named statement
// (the pool of a store with a query deadline, --query-timeout, which every served store has unless
// it is set to 0).
//
// A name is never given to another text (pg refuses a name whose text changed on a connection), so
// names only grow; past MAX_NAMED texts, new ones run unnamed as before. The shapes are bounded
// (listings x `first` x cursor direction x filters present), so the connections' prepared
// statements are too.
//
// The plans stay the ones each run's values get: the sessions run with plan_cache_mode =
// force_custom_plan (src/store/db.ts), so a named statement is planned for its values every time,
// as an unnamed one is, and never falls back on a generic plan that the plan tests do not see.
const names = new Map<string, string>();
const MAX_NAMED = 5000;

/** Gives `sql` a statement name, if it has none and the names are not all given. */
export function nameStatement(sql: string): void {
  if (names.size < MAX_NAMED && !names.has(sql)) names.set(sql, `helixd_${names.size + 1}`);
}

/** The statement name of `sql`, if it has one. */
export const statementName = (sql: string): string | undefined => names.get(sql);
