import { badRequest } from './errors.ts';

// Users, games and videos have numeric ids (strings on the wire, spec 2.2), all below 2^53 so that
// they read back as JS numbers on both stores. Text that is not such a number cannot name one:
// a 400 naming the parameter, before anything reaches SQL (a bigint compared with 'abc' would be a
// PostgreSQL error).
const NUMERIC_ID = /^(0|[1-9][0-9]{0,15})$/;

export function parseNumericId(value: string): number | undefined {
  if (!NUMERIC_ID.test(value)) return undefined;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** A numeric-id parameter, or a 400 naming it and the rule. */
export function readNumericId(name: string, value: string): number {
  const n = parseNumericId(value);
  if (n === undefined)
    throw badRequest(`The parameter "${name}" was malformed: the value must be a numeric ID`);
  return n;
}

/** A repeatable numeric-id parameter: every value a numeric id, or a 400 naming it and the rule. */
export function readNumericIds(name: string, values: readonly string[]): number[] {
  return values.map((v) => {
    const n = parseNumericId(v);
    if (n === undefined)
      throw badRequest(`The parameter "${name}" was malformed: each value must be a numeric ID`);
    return n;
  });
}
