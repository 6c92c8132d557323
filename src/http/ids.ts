// Numeric-id parameters: text that is not a numeric id (src/wire/ids.ts) cannot name one, and is
// a 400 naming the parameter, before anything reaches SQL.
import { parseNumericId } from '../wire/ids.ts';
import { badRequest } from './errors.ts';

/** A numeric-id parameter, or a 400 naming it and the rule. */
export function readNumericId(name: string, value: string): number {
  const n = parseNumericId(value);
  if (n === undefined)
    throw badRequest(`The parameter "${name}" was malformed: the value must be a numeric ID`);
  return n;
}

/** A required numeric-id parameter: missing or empty is a 400 "Missing required parameter". */
export function readRequiredId(name: string, value: string | undefined): number {
  if (value === undefined || value === '') throw badRequest(`Missing required parameter "${name}"`);
  return readNumericId(name, value);
}

/** An optional numeric-id parameter: an empty value counts as not given. */
export function readOptionalId(name: string, value: string | undefined): number | undefined {
  return value === undefined || value === '' ? undefined : readNumericId(name, value);
}

/** A repeatable numeric-id parameter (`?id=1&id=2`): every value, or a 400 naming it and the rule. */
export function readNumericIds(name: string, values: readonly string[]): number[] {
  return values.map((v) => {
    const n = parseNumericId(v);
    if (n === undefined)
      throw badRequest(`The parameter "${name}" was malformed: each value must be a numeric ID`);
    return n;
  });
}
