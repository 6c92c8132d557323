// RFC 3339 on the wire: the one reading (strict, section 5.6 `date-time`) and the one writing (UTC,
// `Z`, no fraction) of every timestamp helixd takes or gives, in a query, a record or a report.
// RFC 3339 section 5.6 `date-time`: full-date "T" full-time, with a fraction of a second allowed
// and the offset `Z` or `±hh:mm` required. "T" and "Z" may be lower case (section 5.6, note).
// Date.parse alone is not used: it accepts other forms and rolls 2026-02-30 over to March 2.
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
export const daysIn = (year: number, month: number) =>
  month === 2 && isLeap(year) ? 29 : (DAYS[month - 1] as number);

/** An RFC 3339 date-time taken apart: the instant, and how it was written. */
export interface Rfc3339Parts {
  /** Unix seconds of the instant, the fraction dropped */
  seconds: number;
  /** the offset from UTC it was written in, in seconds (0 for `Z`, `+00:00` and `-00:00`) */
  offsetSeconds: number;
  /** whether a fraction of a second other than zero was given (`.000` is zero) */
  hasFraction: boolean;
}

/**
 * Reads an RFC 3339 date-time into Unix seconds (the fraction dropped), or undefined when `value`
 * is not one. A leap second (`:60`) is accepted, as RFC 3339 allows, and read as the second before.
 */
export function parseRfc3339(value: string): number | undefined {
  return readRfc3339(value)?.seconds;
}

/** The digit at `i`, or NaN. */
const digitAt = (v: string, i: number): number => {
  const d = v.charCodeAt(i) - 48;
  return d >= 0 && d <= 9 ? d : Number.NaN;
};
const twoAt = (v: string, i: number) => digitAt(v, i) * 10 + digitAt(v, i + 1);

/**
 * `YYYY-MM-DDTHH:MM:SSZ` from year 100 on, the form helixd itself writes, read by character codes
 * (an import reads millions); null for any other form, which the general reading takes.
 */
export function readCanonical(v: string): Rfc3339Parts | null {
  if (v.length !== 20 || v[4] !== '-' || v[7] !== '-' || v[13] !== ':' || v[16] !== ':') return null;
  if ((v[10] !== 'T' && v[10] !== 't') || (v[19] !== 'Z' && v[19] !== 'z')) return null;
  const year = twoAt(v, 0) * 100 + twoAt(v, 2);
  const month = twoAt(v, 5);
  const day = twoAt(v, 8);
  const hour = twoAt(v, 11);
  const minute = twoAt(v, 14);
  const second = twoAt(v, 17);
  if (!(year >= 100) || !(month >= 1 && month <= 12) || !(day >= 1 && day <= daysIn(year, month)))
    return null;
  if (!(hour <= 23 && minute <= 59 && second <= 60)) return null;
  const ms = Date.UTC(year, month - 1, day, hour, minute, Math.min(second, 59));
  return { seconds: ms / 1000, offsetSeconds: 0, hasFraction: false };
}

/** parseRfc3339, keeping the offset and whether there was a fraction. */
export function readRfc3339(value: string): Rfc3339Parts | undefined {
  const canonical = readCanonical(value);
  if (canonical) return canonical;
  const m = DATE_TIME.exec(value);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  let offset = 0;
  if (!m[8]) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return undefined;
    offset = (m[9] === '-' ? -1 : 1) * (oh * 3600 + om * 60);
  }
  // Date.UTC reads years 0..99 as 1900..1999: set the year separately.
  const d = new Date(Date.UTC(2000, month - 1, day, hour, minute, Math.min(second, 59)));
  d.setUTCFullYear(year);
  return {
    seconds: d.getTime() / 1000 - offset,
    offsetSeconds: offset,
    hasFraction: /[1-9]/.test(m[7] ?? ''),
  };
}

/** "00" .. "59": the time of day's fields. */
const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
/** The last second of 9999-12-31: past it toISOString writes a six-digit, signed year. */
const LAST_FOUR_DIGIT_YEAR = 253_402_300_799;
/** "2026-11-23T" by day number since 1970: the days a store's rows fall on are few. */
const dayPrefixes = new Map<number, string>();

/**
 * RFC 3339 UTC with `Z` and no fraction, the wire's timestamp form. Every row of a page carries one
 * or two instants, and `Date#toISOString` was the largest single cost of turning a row into its wire
 * form: the date part is kept per day, the time of day is put together from a table.
 */
export function rfc3339(unixSeconds: number): string {
  if (!Number.isInteger(unixSeconds) || unixSeconds < 0 || unixSeconds > LAST_FOUR_DIGIT_YEAR)
    return new Date(unixSeconds * 1000).toISOString().replace('.000Z', 'Z');
  const day = Math.floor(unixSeconds / 86400);
  let prefix = dayPrefixes.get(day);
  if (prefix === undefined) {
    if (dayPrefixes.size >= 100_000) dayPrefixes.clear();
    prefix = new Date(day * 86_400_000).toISOString().slice(0, 11);
    dayPrefixes.set(day, prefix);
  }
  const t = unixSeconds - day * 86400;
  const h = Math.floor(t / 3600);
  const m = Math.floor((t - h * 3600) / 60);
  return `${prefix}${TWO_DIGITS[h]}:${TWO_DIGITS[m]}:${TWO_DIGITS[t - h * 3600 - m * 60]}Z`;
}
