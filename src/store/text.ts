// Text a store can hold. Both stores keep text as UTF-8, and PostgreSQL refuses a NUL character in
// it outright (SQLite keeps it, so the stores would answer differently); a lone UTF-16 surrogate
// (JSON's "\ud800") has no UTF-8 form at all: PostgreSQL refuses it inside JSON and both stores
// silently turn it into U+FFFD elsewhere, so what is read back is not what was written. Such text
// is refused where it enters (the query validator, the token service's parameters, the records'
// fields and keys), with a 400 naming the parameter or field: this is the one place that says what
// it is.

// In a `u` expression a surrogate pair is one code point: \p{Cs} matches only a lone surrogate.
const UNSTORABLE = /[\0\p{Cs}]/u;

/** Why a store cannot hold `value` (the rule, e.g. "must not contain a NUL character"), or undefined. */
export function unstorableText(value: string): string | undefined {
  const m = UNSTORABLE.exec(value);
  if (!m) return undefined;
  return m[0] === '\0'
    ? 'must not contain a NUL character (U+0000)'
    : 'must be well-formed Unicode (a lone surrogate such as \\ud800 has no UTF-8 form)';
}

/**
 * The longest text a record may give where the store indexes it (a game's name, a stream's
 * language): PostgreSQL refuses an index entry larger than about 2700 bytes, and a character
 * takes up to 4 bytes in UTF-8. It is also the longest value a query parameter may give, so that
 * whatever is written can be asked for.
 */
export const MAX_INDEXED_TEXT = 256;

/**
 * The first string in `value` (strings, and the keys and values of arrays and objects at any depth)
 * that a store cannot hold: where it is (`[]`: `value` itself; a key is named by its object's path)
 * and the rule, or undefined.
 */
export function findUnstorable(
  value: unknown,
  path: readonly (string | number)[] = [],
): { path: (string | number)[]; rule: string } | undefined {
  if (typeof value === 'string') {
    const rule = unstorableText(value);
    return rule === undefined ? undefined : { path: [...path], rule };
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const entries = Array.isArray(value) ? value.entries() : Object.entries(value);
  for (const [k, v] of entries) {
    const inKey = typeof k === 'string' ? unstorableText(k) : undefined;
    if (inKey !== undefined) return { path: [...path], rule: `a key ${inKey}` };
    const found = findUnstorable(v, [...path, k]);
    if (found) return found;
  }
  return undefined;
}
