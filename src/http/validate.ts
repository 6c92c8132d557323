import { Ajv } from 'ajv';
import { HelixError, validationMessage } from './errors.ts';

// Query strings arrive as text, and a repeated parameter as an array: coerce "20" to 20 and a single
// value to a one-element array where the schema wants a list; a list where the schema wants one
// value stays a list and fails ("may be given only once").
const ajv = new Ajv({ coerceTypes: 'array', useDefaults: true, allErrors: false, strict: false });

/** Compiles a querystring schema into a function that returns the typed, defaulted query or throws a 400. */
export function compileQuery<Q>(schema: object): (raw: unknown) => Q {
  const validate = ajv.compile(schema);
  return (raw) => {
    const query = { ...(raw as object) };
    if (!validate(query)) throw new HelixError(400, validationMessage(validate.errors ?? []));
    return query as Q;
  };
}
