// Users, games and videos have numeric ids (strings on the wire), all below 2^53 so that they read
// back as JS numbers on both stores. Only the canonical spelling names one: digits without a
// leading zero, as the store writes them back, so that one id has one spelling on the wire and in
// signed texts. Anything else must be refused before it reaches SQL (a bigint compared with 'abc'
// is a PostgreSQL error): this is the one place that says what a numeric id is.
/** The spellings of a numeric id, as a regular-expression alternative (schemas build on it). */
export const NUMERIC_ID_DIGITS = '0|[1-9][0-9]{0,15}';
const NUMERIC_ID = new RegExp(`^(${NUMERIC_ID_DIGITS})$`);

/** The id that `value` spells, or undefined when it is not a numeric id in its canonical spelling. */
export function parseNumericId(value: string): number | undefined {
  if (!NUMERIC_ID.test(value)) return undefined;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * Digits only, however many and with any leading zeros: text that looks like an id but need not
 * spell one. The legacy /users/follows answers such a value that is not a numeric id with nothing
 * (no user has it) rather than a 400, as Helix did.
 */
export function isDigits(value: string): boolean {
  return /^[0-9]+$/.test(value);
}
