// The CSV of an analytics report: RFC 4180 (CRLF line ends, fields with a comma, quote or line
// break quoted, quotes doubled), a header row, then one row per day of the range in ascending order.
// It is produced as a stream of chunks read from the store `CHUNK_DAYS` days at a time, so a report
// over many years is never held in memory whole.
import type { Kysely } from 'kysely';
import { clipsCreatedPerDay, type ReportKind, type ReportSubject, reportDays } from '../store/analytics.ts';
import type { Database, ExtensionDayRow, GameDayRow } from '../store/schema.ts';
import { addDays } from './dates.ts';
import type { ReportSpec } from './signing.ts';

/** Days read per store query and written per chunk. */
export const CHUNK_DAYS = 500;

/**
 * A day of a game report: the stored figures, and the clips of the game created that day, counted
 * from the clips themselves so that the report agrees with GET /clips whoever wrote them.
 */
export type GameReportDay = GameDayRow & { clips_created: number };

type ReportRow<K extends ReportKind> = K extends 'games' ? GameReportDay : ExtensionDayRow;

type Cell = string | number;

/** A column: its header and how a day's row (undefined for a day without data) fills it. */
type Column<R> = readonly [header: string, value: (day: string, s: ReportSubject, r: R | undefined) => Cell];

const count =
  <R>(f: (r: R) => number) =>
  (_d: string, _s: ReportSubject, r: R | undefined): Cell =>
    r ? f(r) : 0;

/** Up to `digits` decimals, no trailing zeros, 0 for a zero denominator: what spreadsheets parse. */
const ratio = (num: number, den: number, digits: number): number =>
  den === 0 ? 0 : Number((num / den).toFixed(digits));

/** overview_v2 columns of a game report (Helix publishes none; helixd's own set, docs/api.md). */
export const GAME_COLUMNS: readonly Column<GameReportDay>[] = [
  ['Date', (d) => d],
  ['Game Name', (_d, s) => s.name],
  ['Game ID', (_d, s) => s.id],
  ['Views', count((r) => r.views)],
  ['Unique Viewers', count((r) => r.unique_viewers)],
  ['Hours Watched', count((r) => ratio(r.minutes_watched, 60, 2))],
  ['Broadcasters', count((r) => r.broadcasters)],
  ['Hours Broadcast', count((r) => ratio(r.minutes_broadcast, 60, 2))],
  ['Clips Created', count((r) => r.clips_created)],
  ['Follows', count((r) => r.follows)],
];

/** overview_v2 columns of an extension report, in the order third-party parsers read them. */
export const EXTENSION_COLUMNS: readonly Column<ExtensionDayRow>[] = [
  ['Date', (d) => d],
  ['Extension Name', (_d, s) => s.name],
  ['Extension Client ID', (_d, s) => s.id],
  ['Installs', count((r) => r.installs)],
  ['Uninstalls', count((r) => r.uninstalls)],
  ['Activations', count((r) => r.activations)],
  ['Unique Active Channels', count((r) => r.unique_active_channels)],
  ['Renders', count((r) => r.renders)],
  ['Unique Renders', count((r) => r.unique_renders)],
  ['Views', count((r) => r.views)],
  ['Unique Viewers', count((r) => r.unique_viewers)],
  ['Unique Interactors', count((r) => r.unique_interactors)],
  ['Clicks', count((r) => r.clicks)],
  ['Clicks Per Interactor', count((r) => ratio(r.clicks, r.unique_interactors, 2))],
  ['Interaction Rate', count((r) => ratio(r.unique_interactors, r.unique_viewers, 4))],
];

const COLUMNS = { games: GAME_COLUMNS, extensions: EXTENSION_COLUMNS } as const;

function columnsOf<K extends ReportKind>(kind: K): readonly Column<ReportRow<K>>[] {
  return COLUMNS[kind] as readonly Column<ReportRow<K>>[];
}

type Range = { from: string; to: string };

/** A game's report rows of the days in `range`, by day. */
async function gameDays(db: Kysely<Database>, id: string, range: Range): Promise<Map<string, GameReportDay>> {
  const [stored, clips] = await Promise.all([
    reportDays(db, 'games', id, range),
    clipsCreatedPerDay(db, id, range),
  ]);
  const days = new Map(stored.map((r) => [r.day, { ...r, clips_created: clips.get(r.day) ?? 0 }]));
  // A day with clips but no stored figures (a gap in the platform's data, or clips written without
  // analytics) still reports its clips, its other figures zeros as on any day without data.
  for (const [day, n] of clips)
    if (!days.has(day)) days.set(day, { ...noGameData(Number(id), day), clips_created: n });
  return days;
}

function noGameData(game_id: number, day: string): GameDayRow {
  return {
    game_id,
    day,
    views: 0,
    unique_viewers: 0,
    minutes_watched: 0,
    broadcasters: 0,
    minutes_broadcast: 0,
    follows: 0,
  };
}

async function extensionDays(
  db: Kysely<Database>,
  id: string,
  range: Range,
): Promise<Map<string, ExtensionDayRow>> {
  return new Map((await reportDays(db, 'extensions', id, range)).map((r) => [r.day, r]));
}

const DAYS: {
  [K in ReportKind]: (db: Kysely<Database>, id: string, range: Range) => Promise<Map<string, ReportRow<K>>>;
} = {
  games: gameDays,
  extensions: extensionDays,
};

/** One RFC 4180 field. */
export function csvField(v: Cell): string {
  const s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

function csvLine(cells: readonly Cell[]): string {
  return `${cells.map(csvField).join(',')}\r\n`;
}

/** The report's file name: kind, id, type and range, safe in a quoted Content-Disposition value. */
export function reportFileName(r: ReportSpec): string {
  const id = r.id.replace(/[^A-Za-z0-9_-]/g, '_');
  return `${r.kind === 'games' ? 'game' : 'extension'}-${id}-${r.type}-${r.start}-to-${r.end}.csv`;
}

/**
 * The CSV text in chunks: the header, then rows for every day from `r.start` to `r.end`, read and
 * written `CHUNK_DAYS` days at a time. Days the store has no row for (the platform's gaps) are rows
 * of zeros, so there is exactly one row per day.
 */
export async function* reportCsv<K extends ReportKind>(
  db: Kysely<Database>,
  r: ReportSpec & { kind: K },
  subject: ReportSubject,
): AsyncGenerator<string> {
  const columns = columnsOf(r.kind);
  const days = DAYS[r.kind] as (
    db: Kysely<Database>,
    id: string,
    range: Range,
  ) => Promise<Map<string, ReportRow<K>>>;
  yield csvLine(columns.map(([h]) => h));
  for (let from = r.start; from <= r.end; ) {
    const last = addDays(from, CHUNK_DAYS - 1);
    const to = last < r.end ? last : r.end;
    const data = await days(db, r.id, { from, to });
    const lines: string[] = [];
    for (let day = from; day <= to; day = addDays(day, 1))
      lines.push(csvLine(columns.map(([, value]) => value(day, subject, data.get(day)))));
    yield lines.join('');
    from = addDays(to, 1);
  }
}
