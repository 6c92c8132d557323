// The validator Fastify compiles every request schema with (app.setValidatorCompiler): Ajv, with
// the strict reading of query-string text that Helix applies. A violation of these text rules
// is a HelixError with its message; a violation of the schema goes to Fastify as Ajv's errors, and
// Fastify's schemaErrorFormatter (helixSchemaError) turns them into the Helix message.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifySchemaValidationError } from 'fastify';
import { unstorableText } from '../store/text.ts';
import { HelixError, validationMessage } from './errors.ts';

// Query strings arrive as text, and a repeated parameter as an array: coerce "20" to 20 and a single
// value to a one-element array where the schema wants a list; a list where the schema wants one
// value stays a list and fails ("may be given only once").
// Made, like each route's validator, when first needed: compiling every route's schema at start
// was a large part of the CPU a start took (docs/perf/2026-11-22-startup.md), and most servers are
// asked a few of the routes.
let ajv: Ajv | undefined;
const ajvOptions = { coerceTypes: 'array', useDefaults: true, allErrors: false, strict: false } as const;

// Ajv coerces any text JavaScript reads as a number ("1e1", "0x10", " 5", "10.0"); Helix
// parses an integer parameter as decimal digits and refuses the rest, so helixd does too (a request
// that works here must work there).
const DECIMAL_INTEGER = /^[+-]?[0-9]+$/;

// Booleans (`type: 'boolean'` in a querystring schema, e.g. params.ts `booleanParam`): Helix
// reads `true` and `false` in any letter case (`True` is what Python clients send for True); any
// other text is a 400 "must be true or false".
const BOOLEAN_TEXT: Record<string, boolean> = { true: true, false: false };

/** What Fastify expects of a compiled validator: the new value, an error, or false with `errors`. */
type Validator = ((data: unknown) => { value: unknown } | { error: Error } | false) & {
  errors?: ErrorObject[] | null;
};

/**
 * A request schema (in practice a querystring) in Fastify's validator shape; Ajv compiles it on the
 * first request that needs it.
 */
export function compileValidator({ schema }: { schema: object }): Validator {
  let compiled: ValidateFunction | undefined;
  const validate = (data: unknown) => {
    ajv ??= new Ajv(ajvOptions);
    compiled ??= ajv.compile(schema);
    return compiled(data);
  };
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const integers = Object.keys(properties).filter((k) => properties[k]?.type === 'integer');
  const booleans = Object.keys(properties).filter((k) => properties[k]?.type === 'boolean');
  const names = Object.keys(properties);
  const fn: Validator = (raw) => {
    const data: Record<string, unknown> = { ...(raw as object) };
    // Text no store can hold (src/store/text.ts) is refused before any other rule: every value of a
    // parameter may reach SQL.
    for (const k of names) {
      const v = data[k];
      for (const text of Array.isArray(v) ? v : [v]) {
        const rule = typeof text === 'string' ? unstorableText(text) : undefined;
        if (rule !== undefined)
          return { error: new HelixError(400, `The parameter "${k}" was malformed: the value ${rule}`) };
      }
    }
    for (const k of integers) {
      const v = data[k];
      if (typeof v === 'string' && !DECIMAL_INTEGER.test(v))
        return {
          error: new HelixError(400, `The parameter "${k}" was malformed: the value must be an integer`),
        };
    }
    for (const k of booleans) {
      const v = data[k];
      if (typeof v !== 'string') continue;
      const b = BOOLEAN_TEXT[v.toLowerCase()];
      if (b === undefined)
        return {
          error: new HelixError(400, `The parameter "${k}" was malformed: the value must be true or false`),
        };
      data[k] = b;
    }
    if (validate(data)) return { value: data };
    fn.errors = compiled?.errors;
    return false;
  };
  return fn;
}

/** Fastify's schemaErrorFormatter: the first schema violation as the Helix message. */
export function helixSchemaError(errors: FastifySchemaValidationError[]): Error {
  return new HelixError(400, validationMessage(errors as unknown as ErrorObject[]));
}

/**
 * A querystring schema's validator for a caller that validates the query itself (an operation's
 * one step, src/http/operation.ts): the query as the schema makes it, or the error Fastify would
 * have answered with (the same HelixError: the text rules' own, or helixSchemaError's).
 */
export function queryReader(schema: object): (query: unknown) => unknown {
  const validate = compileValidator({ schema });
  return (query) => {
    const r = validate(query);
    if (r === false)
      throw helixSchemaError((validate.errors ?? []) as unknown as FastifySchemaValidationError[]);
    if ('error' in r) throw r.error;
    return r.value;
  };
}
