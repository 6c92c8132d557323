// Queries of the analytics reports: the games and extensions a user owns (the report subjects),
// what data each has, and its daily rows in day order. Games and extensions have the same shape
// here (a subject table with `owner_id`, a days table keyed by (subject, day)), so one query text
// serves both, picked by a table description.
import { type ExpressionBuilder, type Kysely, sql } from 'kysely';
import { parseNumericId } from '../wire/ids.ts';
import { type Page, type PageQuery, shapedPage } from './page.ts';
import type { Database, ExtensionDayRow, GameDayRow } from './schema.ts';

/** The kinds of analytics report: one per kind of subject a user can own. */
export const REPORT_KINDS = ['games', 'extensions'] as const;
export type ReportKind = (typeof REPORT_KINDS)[number];

const TABLES = {
  games: { subject: 'games', days: 'game_days', fk: 'game_id' },
  extensions: { subject: 'extensions', days: 'extension_days', fk: 'extension_id' },
} as const satisfies Record<ReportKind, { subject: keyof Database; days: keyof Database; fk: string }>;

/** A game or extension with what the date rules need to know about its data. */
export interface ReportSubjectRow {
  id: number | string;
  name: string;
  owner_id: number | null;
  /** first day with data before the request's day, or null */
  first_day: string | null;
  /** the day before the request's day has data (0/1 on SQLite, boolean on PostgreSQL) */
  has_yesterday: number | boolean;
}

export interface ReportSubject {
  id: string;
  name: string;
  ownerId: number | null;
  firstDay: string | null;
  hasYesterday: boolean;
}

export function reportSubjectRowToReportSubject(row: ReportSubjectRow): ReportSubject {
  return {
    id: String(row.id),
    name: row.name,
    ownerId: row.owner_id,
    firstDay: row.first_day,
    hasYesterday: Boolean(row.has_yesterday),
  };
}

// biome-ignore lint/suspicious/noExplicitAny: the table names come from TABLES, checked above
type AnyDb = Kysely<any>;
// biome-ignore lint/suspicious/noExplicitAny: as above
type AnyEb = ExpressionBuilder<any, any>;

/** `today`: the request's UTC day; `yesterday` the day before. Data from today on is not reported. */
function subjects(db: Kysely<Database>, kind: ReportKind, today: string, yesterday: string) {
  const t = TABLES[kind];
  const days = (eb: AnyEb) => eb.selectFrom(t.days).whereRef(`${t.days}.${t.fk}`, '=', `${t.subject}.id`);
  return (db as AnyDb)
    .selectFrom(t.subject)
    .select([`${t.subject}.id as id`, `${t.subject}.name as name`, `${t.subject}.owner_id as owner_id`])
    .select((eb) => [
      days(eb)
        .select((e) => e.fn.min('day').as('d'))
        .where('day', '<', today)
        .as('first_day'),
      eb.exists(days(eb).select(sql.lit(1).as('one')).where('day', '=', yesterday)).as('has_yesterday'),
    ]);
}

/** One subject by id, whoever owns it. */
export async function findReportSubject(
  db: Kysely<Database>,
  kind: ReportKind,
  id: string,
  today: string,
  yesterday: string,
): Promise<ReportSubject | undefined> {
  // Game ids are integers in the store: anything else names no game (and must not reach SQL as one).
  const key = kind === 'games' ? parseNumericId(id) : id;
  if (key === undefined) return undefined;
  const row = await subjects(db, kind, today, yesterday)
    .where(`${TABLES[kind].subject}.id`, '=', key)
    .executeTakeFirst();
  return row ? reportSubjectRowToReportSubject(row as ReportSubjectRow) : undefined;
}

export interface SubjectFilter {
  ownerId: number;
  today: string;
  yesterday: string;
}

/**
 * The user's games or extensions, by id: every one has a report, whatever data it has (days
 * without data are zeros), so none is left out.
 */
export async function ownedReportSubjects(
  db: Kysely<Database>,
  kind: ReportKind,
  f: SubjectFilter,
  page: PageQuery,
): Promise<Page<ReportSubjectRow>> {
  const t = TABLES[kind];
  // By id, ascending (index games_owner / extensions_owner: (owner_id, id)); built once per shape
  // (src/store/page.ts shapedPage).
  return shapedPage(
    db,
    `report subjects, ${kind}`,
    { today: f.today, yesterday: f.yesterday, owner: f.ownerId },
    (v) =>
      subjects(db, kind, v.today as string, v.yesterday as string).where(
        `${t.subject}.owner_id`,
        '=',
        v.owner as number,
      ),
    [`${t.subject}.id`],
    'asc',
    page,
  ) as Promise<Page<ReportSubjectRow>>;
}

export type ReportDayRow<K extends ReportKind> = K extends 'games' ? GameDayRow : ExtensionDayRow;

/**
 * The stored daily rows of one subject from `from` to `to` (days), in day order: one primary-key
 * range scan. Callers read a report window by window, so a window bounds the rows read at once.
 */
export async function reportDays<K extends ReportKind>(
  db: Kysely<Database>,
  kind: K,
  id: string,
  range: { from: string; to: string },
): Promise<ReportDayRow<K>[]> {
  const t = TABLES[kind];
  return (db as AnyDb)
    .selectFrom(t.days)
    .selectAll()
    .where(t.fk, '=', kind === 'games' ? Number(id) : id)
    .where('day', '>=', range.from)
    .where('day', '<=', range.to)
    .orderBy('day', 'asc')
    .execute() as Promise<ReportDayRow<K>[]>;
}

const DAY_SECONDS = 86_400;

/** A clip's UTC day as a number of days since 1970-01-01: the key of the index clips_game_day. */
const clipDay = sql<number | string>`created_at / ${sql.lit(DAY_SECONDS)}`;

const dayNumber = (day: string) => Date.parse(`${day}T00:00:00Z`) / 1000 / DAY_SECONDS;

/**
 * How many clips of the game were created on each UTC day from `from` to `to`, by day; days
 * without clips are absent. One range scan of the covering index clips_game_day (game_id, day
 * number, created_at), whose order is the grouping's: migration 009 says why the report counts
 * clips rather than storing the count.
 */
export async function clipsCreatedPerDay(
  db: Kysely<Database>,
  gameId: string,
  range: { from: string; to: string },
): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('clips')
    .select([clipDay.as('d'), (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('game_id', '=', Number(gameId))
    .where(clipDay, '>=', dayNumber(range.from))
    .where(clipDay, '<=', dayNumber(range.to))
    .groupBy(clipDay)
    .execute();
  return new Map(
    rows.map((r) => [new Date(Number(r.d) * DAY_SECONDS * 1000).toISOString().slice(0, 10), Number(r.n)]),
  );
}
