// The field types records are made of, and how a field's wire value becomes a column value and
// back. A record is the wire object of the matching GET: ids as strings of digits, instants as
// RFC 3339 date-times, flags as booleans; the store keeps integers (src/store/schema.ts).
import { type TSchema, Type } from 'typebox';
import { IsDateTime, Set as setFormat } from 'typebox/format';
import { ANALYTICS_FIRST_DAY } from '../reports/dates.ts';
import { MAX_INDEXED_TEXT } from '../store/text.ts';
import { daysIn, readCanonical, readRfc3339, rfc3339 } from '../wire/datetime.ts';
import { NUMERIC_ID_DIGITS, parseNumericId } from '../wire/ids.ts';

/** Why a field was refused: the rule, and the status (400 unless said). */
export class FieldRule extends Error {
  constructor(
    readonly field: string,
    readonly rule: string,
    readonly status: 400 | 404 | 409 = 400,
  ) {
    super(`${field}: ${rule}`);
  }
}

/** The rule of a pattern, for the messages of fields the schema refuses by pattern. */
const PATTERN_RULES = new Map<string, string>();
const patterned = (pattern: string, rule: string, description: string) => {
  PATTERN_RULES.set(pattern, rule);
  return Type.String({ pattern, description });
};
export const ruleOfPattern = (pattern: string): string | undefined => PATTERN_RULES.get(pattern);

const NUMERIC_ID = `^(${NUMERIC_ID_DIGITS})$`;
const ID_RULE = 'must be a string of digits without a leading zero, below 2^53 (a numeric id)';

/** A numeric id (users, games, videos, streams): digits on the wire, an integer in the store. */
export const numericId = (description: string) => patterned(NUMERIC_ID, ID_RULE, description);
/** A numeric id that may be absent, written "" as the wire writes it (a clip's video_id). */
export const optionalId = (description: string) =>
  patterned(`^(|${NUMERIC_ID_DIGITS})$`, `must be "" or ${ID_RULE.replace('must be ', '')}`, description);
/**
 * A stream's tag: letters and digits only, as the platform has them (no spaces, no signs), at most
 * `max` characters. Also what bounds a tag's bytes in the JSON of the /streams listing indexes
 * (migration 014): no character is written as an escape there.
 */
export const streamTag = (max: number, description: string) =>
  patterned(
    `^[\\p{L}\\p{N}]{1,${max}}$`,
    `must be 1 to ${max} letters or digits, no spaces or other signs`,
    description,
  );
/** A text id (clips, markers, clients, extensions): letters, digits, "-" and "_". */
export const textId = (description: string) =>
  patterned('^[A-Za-z0-9_-]{1,100}$', 'must be 1 to 100 letters, digits, "-" or "_"', description);
export const uuid = (description: string) =>
  patterned(
    '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
    'must be a UUID in lower case',
    description,
  );
export const login = patterned(
  '^[a-z0-9_]{1,25}$',
  'must be 1 to 25 lower-case letters, digits or "_"',
  'The login name, unique among users',
);
export const dateTime = (description: string) =>
  Type.String({ format: 'date-time', description: `${description}; RFC 3339, 1970 to 9999, whole seconds` });
export const day = Type.String({
  format: 'date',
  description: `The day, YYYY-MM-DD (UTC), from ${ANALYTICS_FIRST_DAY} on`,
});

/** The largest value of an `integer` column on PostgreSQL (int4). */
export const MAX_INT = 2_147_483_647;
export const count = (description: string) => Type.Integer({ minimum: 0, maximum: MAX_INT, description });
/**
 * Text. `indexed`: the store indexes the column (a game's name, a language, a clip's title), and
 * an index entry has a size limit (MAX_INDEXED_TEXT, src/store/text.ts). Text no store can hold (a
 * NUL, a lone surrogate) is refused for every string of a record by the write path.
 */
export const text = (description: string, o: { indexed?: boolean } = {}) =>
  Type.String({ ...(o.indexed ? { maxLength: MAX_INDEXED_TEXT } : {}), description });
/** Text that must not be empty. */
export const name = (description: string, o: { indexed?: boolean } = {}) =>
  Type.String({ minLength: 1, ...(o.indexed ? { maxLength: MAX_INDEXED_TEXT } : {}), description });

export const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** The latest instant an RFC 3339 date-time of four-digit years can write: 9999-12-31T23:59:59Z. */
const LAST_SECOND = 253_402_300_799;

/** Whether `v` is a day written YYYY-MM-DD that the calendar has, read by character codes. */
function isDay(v: string): boolean {
  if (v.length !== 10 || v.charCodeAt(4) !== 45 || v.charCodeAt(7) !== 45) return false;
  let year = 0;
  for (let i = 0; i < 4; i++) {
    const d = v.charCodeAt(i) - 48;
    if (!(d >= 0 && d <= 9)) return false;
    year = year * 10 + d;
  }
  const m1 = v.charCodeAt(5) - 48;
  const m2 = v.charCodeAt(6) - 48;
  const d1 = v.charCodeAt(8) - 48;
  const d2 = v.charCodeAt(9) - 48;
  if (!(m1 >= 0 && m1 <= 9 && m2 >= 0 && m2 <= 9 && d1 >= 0 && d1 <= 9 && d2 >= 0 && d2 <= 9)) return false;
  const month = m1 * 10 + m2;
  const date = d1 * 10 + d2;
  return month >= 1 && month <= 12 && date >= 1 && date <= daysIn(year, month);
}

// The `date-time` and `date` formats of the records' schemas (and of any TypeBox schema compiled
// after this module loads), which an import checks millions of times: TypeBox's own checks run
// two or three regular expressions per value. A date-time in the form helixd writes
// (YYYY-MM-DDTHH:MM:SSZ, no leap second) is read by character codes, any other goes to TypeBox's
// check, so exactly what TypeBox accepts is accepted; a day is read by character codes, the same
// rule as TypeBox's (four digits, two, two, a day the calendar has).
setFormat('date-time', (v: string) => (readCanonical(v) !== null && v[17] !== '6') || IsDateTime(v));
setFormat('date', isDay);

/** Field readers: wire value -> column value, or a FieldRule naming the field. */
export const read = {
  id(field: string, v: string): number {
    const n = parseNumericId(v);
    if (n === undefined) throw new FieldRule(field, ID_RULE);
    return n;
  },
  optionalId(field: string, v: string): number | null {
    return v === '' ? null : read.id(field, v);
  },
  instant(field: string, v: string): number {
    const t = readRfc3339(v);
    if (t === undefined)
      throw new FieldRule(field, 'must be an RFC 3339 date-time such as 2026-06-01T00:00:00Z');
    if (t.hasFraction) throw new FieldRule(field, 'must be a whole second (the store keeps seconds)');
    if (t.seconds < 0 || t.seconds > LAST_SECOND)
      throw new FieldRule(field, 'must be from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z');
    return t.seconds;
  },
  day(field: string, v: string): string {
    // Checked by numbers, not through a Date: an import reads millions of days.
    if (!isDay(v)) throw new FieldRule(field, 'must be a day written YYYY-MM-DD');
    if (v < ANALYTICS_FIRST_DAY)
      throw new FieldRule(field, `must not be before ${ANALYTICS_FIRST_DAY}, where analytics data starts`);
    return v;
  },
  flag: (v: boolean): number => (v ? 1 : 0),
  /** A number of hours to 2 decimals, kept in whole minutes: what the report shows, exactly. */
  hours(field: string, v: number): number {
    const minutes = Math.round(v * 60);
    if (minutes > MAX_INT) throw new FieldRule(field, `must be at most ${Math.floor(MAX_INT / 60)} hours`);
    if (write.hours(minutes) !== v)
      throw new FieldRule(
        field,
        'must be a whole number of minutes in hours to 2 decimals, as the report writes it (0.02 for 1 minute)',
      );
    return minutes;
  },
};

/** Field writers: column value -> wire value. */
export const write = {
  id: (n: number): string => String(n),
  optionalId: (n: number | null): string => (n === null ? '' : String(n)),
  instant: (t: number): string => rfc3339(t),
  flag: (n: number): boolean => n === 1,
  hours: (minutes: number): number => Number((minutes / 60).toFixed(2)),
};
