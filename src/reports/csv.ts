// The CSV of an analytics report: RFC 4180 (CRLF line ends, fields with a comma, quote or line
// break quoted, quotes doubled), a header row, then one row per day of the range in ascending order.
// It is produced as a stream of chunks read from the store `CHUNK_DAYS` days at a time, so a report
// over many years is never held in memory whole.
import type { Kysely } from 'kysely';
import { type ReportDayRow, type ReportKind, type ReportSubject, reportDays } from '../store/analytics.ts';
import type { Database, ExtensionDayRow, GameDayRow } from '../store/schema.ts';
import { addDays } from './dates.ts';
import type { ReportSpec } from './signing.ts';

/** Days read per store query and written per chunk. */
export const CHUNK_DAYS = 500;

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

/** overview_v2 columns of a game report (production publishes none; helixd's own set, docs/api.md). */
export const GAME_COLUMNS: readonly Column<GameDayRow>[] = [
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

function columnsOf<K extends ReportKind>(kind: K): readonly Column<ReportDayRow<K>>[] {
  return COLUMNS[kind] as readonly Column<ReportDayRow<K>>[];
}

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
 * The CSV text in chunks: the header, then rows for every day from `r.start` to `r.end`. Days the
 * store has no row for (the platform's gaps) are rows of zeros, so there is exactly one row per day.
 */
export async function* reportCsv<K extends ReportKind>(
  db: Kysely<Database>,
  r: ReportSpec & { kind: K },
  subject: ReportSubject,
): AsyncGenerator<string> {
  const columns = columnsOf(r.kind);
  yield csvLine(columns.map(([h]) => h));
  const row = (day: string, data: ReportDayRow<K> | undefined) =>
    csvLine(columns.map(([, value]) => value(day, subject, data)));
  let next = r.start; // the next day to write
  let after: string | undefined;
  let lines: string[] = [];
  const flush = () => {
    const text = lines.join('');
    lines = [];
    return text;
  };
  for (;;) {
    const rows = await reportDays(db, r.kind, r.id, { from: r.start, to: r.end, after }, CHUNK_DAYS);
    for (const data of rows) {
      for (; next < data.day; next = addDays(next, 1)) {
        lines.push(row(next, undefined));
        // a long gap is written in bounded chunks too
        if (lines.length >= CHUNK_DAYS) yield flush();
      }
      lines.push(row(data.day, data));
      next = addDays(data.day, 1);
    }
    if (lines.length) yield flush();
    const last = rows[rows.length - 1];
    if (rows.length < CHUNK_DAYS || !last) break;
    after = last.day;
  }
  for (; next <= r.end; next = addDays(next, 1)) {
    lines.push(row(next, undefined));
    if (lines.length >= CHUNK_DAYS) yield flush();
  }
  if (lines.length) yield flush();
}
