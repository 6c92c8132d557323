// The date rules of the two analytics operations (docs/api.md, Date rules). Days are `YYYY-MM-DD`
// strings (UTC), the form the store keeps them in, so that they compare as text in SQL and in code
// alike.

import { badRequest } from '../http/errors.ts';
import { readRfc3339 } from '../wire/datetime.ts';

const DAY_MS = 86_400_000;

/** The first day analytics exist for (docs/api.md, Date rules). */
export const ANALYTICS_FIRST_DAY = '2018-01-31';

export function dayOfMs(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export function addDays(day: string, n: number): string {
  return dayOfMs(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS);
}

/** Number of days from `a` to `b` (b - a). */
export function daysBetween(a: string, b: string): number {
  return Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / DAY_MS);
}

/** The wire form of a day in `date_range`: that day at midnight UTC, `2018-03-01T00:00:00Z`. */
export function dayToWire(day: string): string {
  return `${day}T00:00:00Z`;
}

/**
 * Rule 1: a UTC midnight, `YYYY-MM-DDT00:00:00Z`. Any RFC 3339 spelling of that instant is read
 * (`z`, `+00:00`, `-00:00`, a lower-case `t`, a zero fraction such as `.000`): client libraries
 * write UTC that way (Python's isoformat gives `+00:00`). Another instant, or midnight written
 * with a non-zero offset (`2019-03-01T01:00:00+01:00`), is a 400.
 */
export function parseMidnight(name: string, value: string): string {
  const t = readRfc3339(value);
  if (t === undefined || t.offsetSeconds !== 0 || t.hasFraction || t.seconds % 86_400 !== 0)
    throw badRequest(
      `The parameter "${name}" was malformed: it must be a UTC midnight of the form YYYY-MM-DDT00:00:00Z`,
    );
  return dayOfMs(t.seconds * 1000);
}

/** The days a request asked for, after the rules that need no report data (docs/api.md, Date rules). */
export interface RequestedRange {
  /** first day asked for; undefined: the report's default start */
  start?: string;
  /** last day asked for, covered whole (rule 5); undefined: the report's default end */
  end?: string;
}

/**
 * Checks `started_at` / `ended_at` against the rules that hold for every report: the form, both or
 * neither, not before 2018-01-31, not after each other, and `started_at` before the request's day
 * (no report has data for today or later: rule 6's default end is 1 to 2 days back).
 */
export function readRequestedRange(
  startedAt: string | undefined,
  endedAt: string | undefined,
  today: string,
): RequestedRange {
  const start = startedAt === undefined ? undefined : parseMidnight('started_at', startedAt);
  const end = endedAt === undefined ? undefined : parseMidnight('ended_at', endedAt);
  if (start === undefined && end === undefined) return {};
  if (start === undefined)
    throw badRequest('The parameter "started_at" is required when "ended_at" is given');
  if (end === undefined) throw badRequest('The parameter "ended_at" is required when "started_at" is given');
  if (start < ANALYTICS_FIRST_DAY)
    throw badRequest(`The parameter "started_at" must be on or after ${dayToWire(ANALYTICS_FIRST_DAY)}`);
  if (start > end) throw badRequest('The parameter "started_at" must not be later than "ended_at"');
  if (start >= today)
    throw badRequest(
      `The parameter "started_at" must be on or before ${dayToWire(addDays(today, -1))}: reports hold data up to 1 to 2 days before the request`,
    );
  return { start, end };
}

/** What the store knows about one report's data, as of the request's day. */
export interface Availability {
  /** the first day with data before the request's day; null when there is none */
  firstDay: string | null;
  /** whether the day before the request's day has data */
  hasYesterday: boolean;
}

/**
 * The report's default range, used when no dates are given. Start (rule 4): its first day with
 * data, never before 2018-01-31 ("all available data"); a report with no data at all starts at
 * 2018-01-31, the default start of overview_v2, and is all zeros. End (rule 6): the day before the
 * request when that day's data is in, otherwise the day before that: "1 to 2 days before the
 * request, depending on availability".
 */
export function defaultRange(a: Availability, today: string): { start: string; end: string } {
  const start = a.firstDay === null || a.firstDay < ANALYTICS_FIRST_DAY ? ANALYTICS_FIRST_DAY : a.firstDay;
  return { start, end: addDays(today, a.hasYesterday ? -1 : -2) };
}

/**
 * The range a report covers. No dates: the default range. Dates: the requested window, never
 * refused for lacking data (days without data are rows of zeros in the CSV), with its start raised
 * to 2018-01-31 (rule 4) and its end lowered to the default end (rule 6). A window that starts
 * after the default end (it starts yesterday, whose data is not in yet) covers its first day.
 */
export function effectiveRange(
  requested: RequestedRange,
  a: Availability,
  today: string,
): { start: string; end: string } {
  const d = defaultRange(a, today);
  if (requested.start === undefined || requested.end === undefined) return d;
  const start = requested.start < ANALYTICS_FIRST_DAY ? ANALYTICS_FIRST_DAY : requested.start;
  const end = requested.end < d.end ? requested.end : d.end;
  return { start, end: end < start ? start : end };
}
