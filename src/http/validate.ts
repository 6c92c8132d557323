import { Ajv } from 'ajv';
import { HelixError, validationMessage } from './errors.ts';

// Query strings arrive as text, and a repeated parameter as an array: coerce "20" to 20 and a single
// value to a one-element array where the schema wants a list; a list where the schema wants one
// value stays a list and fails ("may be given only once").
const ajv = new Ajv({ coerceTypes: 'array', useDefaults: true, allErrors: false, strict: false });

// Ajv coerces any text JavaScript reads as a number ("1e1", "0x10", " 5", "10.0"); production
// parses an integer parameter as decimal digits and refuses the rest, so helixd does too (a request
// that works here must work there).
const DECIMAL_INTEGER = /^[+-]?[0-9]+$/;

// Booleans (`type: 'boolean'` in a querystring schema, e.g. params.ts `booleanParam`): production
// reads `true` and `false` in any letter case (`True` is what Python clients send for True); any
// other text is a 400 "must be true or false".
const BOOLEAN_TEXT: Record<string, boolean> = { true: true, false: false };

/** Compiles a querystring schema into a function that returns the typed, defaulted query or throws a 400. */
export function compileQuery<Q>(schema: object): (raw: unknown) => Q {
  const validate = ajv.compile(schema);
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const integers = Object.keys(properties).filter((k) => properties[k]?.type === 'integer');
  const booleans = Object.keys(properties).filter((k) => properties[k]?.type === 'boolean');
  return (raw) => {
    const query: Record<string, unknown> = { ...(raw as object) };
    for (const k of integers) {
      const v = query[k];
      if (typeof v === 'string' && !DECIMAL_INTEGER.test(v))
        throw new HelixError(400, `The parameter "${k}" was malformed: the value must be an integer`);
    }
    for (const k of booleans) {
      const v = query[k];
      if (typeof v !== 'string') continue;
      const b = BOOLEAN_TEXT[v.toLowerCase()];
      if (b === undefined)
        throw new HelixError(400, `The parameter "${k}" was malformed: the value must be true or false`);
      query[k] = b;
    }
    if (!validate(query)) throw new HelixError(400, validationMessage(validate.errors ?? []));
    return query as Q;
  };
}
