import { type Kysely, sql } from 'kysely';
import { isPostgres } from './010_clips_covering.ts';

// The check that 011 and 014 run before they build indexes whose entries hold text: a store
// written before a record took a length limit may hold longer text, and an index over it could
// not be built. It refuses before anything changes, naming the rows, the rule and the SQL that
// shortens them (`helixd migrate` and `serve` print it as their one line). Both migrations call
// it, so its behaviour is part of theirs: change its wording, never what it refuses.

/** How many keys of the refused rows the error names. */
const NAMED = 5;

export interface TextLimit {
  table: string;
  /** what the error calls the rows and the field */
  what: string;
  rule: string;
  /** the row's key as text, for the error */
  key: string;
  /** a row breaks the limit where this holds (SQLite and PostgreSQL) */
  breaks: (postgres: boolean) => string;
  /** the SQL that brings them within it */
  fix: string;
}

/** A limit of characters: `length` counts them on both stores, as the write path does (code points). */
export const tooLong = (column: string, max: number) => () => `length(${column}) > ${max}`;

/** Throws, naming them, if any row holds text the write path no longer accepts. */
export async function refuseLongText(db: Kysely<unknown>, limits: readonly TextLimit[]): Promise<void> {
  const postgres = isPostgres(db);
  const found: string[] = [];
  const fixes: string[] = [];
  for (const l of limits) {
    const where = l.breaks(postgres);
    const { rows } = await sql<{ k: string; n: number | string }>`
      select ${sql.raw(l.key)} as k, count(*) over () as n from ${sql.table(l.table)}
      where ${sql.raw(where)} order by 1 limit ${sql.lit(NAMED)}`.execute(db);
    const n = Number(rows[0]?.n ?? 0);
    if (n === 0) continue;
    const keys = rows.map((r) => String(r.k)).join(', ') + (n > rows.length ? ', ...' : '');
    found.push(`${l.what}: ${l.rule}: ${n} row${n === 1 ? '' : 's'} of ${l.table} (${keys})`);
    fixes.push(l.fix.replace('<the condition above>', where));
  }
  if (found.length === 0) return;
  throw new Error(
    `the store holds rows whose text is now too long for a record (${found.join('; ')}); ` +
      'nothing was changed. Shorten them, then migrate again: with the helixd version that wrote ' +
      'them (PATCH /admin/<kind>/<key>, or export, edit and import into an empty store), or in ' +
      `SQL: ${fixes.join(' ')}`,
  );
}
