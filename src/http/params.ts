// Request rules shared by several operations (docs/api.md, "Shared rules"), written once.
import { type Static, type TObject, type TProperties, type TSchema, Type } from 'typebox';
import type { Key, Page } from '../store/page.ts';
import { MAX_INDEXED_TEXT } from '../store/text.ts';
import { parseRfc3339 } from '../wire/datetime.ts';
import { cursorScope, decodeCursor, encodeCursor } from './cursor.ts';
import { badRequest } from './errors.ts';

export const MAX_FIRST = 100;
export const DEFAULT_FIRST = 20;

// Each parameter and response shape is declared once, as a TypeBox schema: Fastify validates the
// query string with it, serialises the answer with it, and @fastify/swagger describes it in
// /openapi.json; the TypeScript types are derived from it (`Static`, `QueryOf`).

declare const DEFAULTED: unique symbol;
/** A parameter with a default: never missing once the query string has been validated. */
export type TDefaulted<T extends TSchema = TSchema> = T & { readonly [DEFAULTED]: true };

/** `schema` with a default value (applied by the validator when the parameter is not given). */
export function withDefault<T extends TSchema>(schema: T, value: Static<T>): TDefaulted<T> {
  return { ...schema, default: value } as unknown as TDefaulted<T>;
}

/**
 * The query a handler receives for the parameters `P`: a parameter with a default is always
 * there, any other may be missing. No parameter is required by the schema: the operations check
 * their selectors themselves, so that the message names the rule ("exactly one of ...").
 */
export type QueryOf<P extends TProperties> = {
  [K in keyof P as P[K] extends TDefaulted ? K : never]: Static<P[K]>;
} & {
  [K in keyof P as P[K] extends TDefaulted ? never : K]?: Static<P[K]>;
};

/** The querystring schema of the parameters `P` (every one optional on the wire). */
export function querySchema(params: TProperties): TObject {
  return Type.Object(Object.fromEntries(Object.entries(params).map(([k, v]) => [k, Type.Optional(v)])));
}

/**
 * `first`: an integer 1..100, default `byDefault` (20 for most operations: `firstParam`). The query
 * string always holds it as text.
 */
export const firstParamOf = (byDefault: number) =>
  withDefault(
    Type.Integer({
      minimum: 1,
      maximum: MAX_FIRST,
      description: `How many items a page holds (default ${byDefault})`,
    }),
    byDefault,
  );
/** `first`: an integer 1..100, default 20. */
export const firstParam = firstParamOf(DEFAULT_FIRST);
/** A boolean parameter: `true` or `false` in any letter case (the rule lives in query-validator.ts). */
export const booleanParam = Type.Boolean();
export const cursorParam = Type.String({ maxLength: 2048, description: 'A cursor from a previous page' });
/** A parameter given once (a repeated one is a 400 "may be given only once"). */
export const singleString = Type.String({ maxLength: MAX_INDEXED_TEXT });
/** A repeatable parameter (`?id=a&id=b`), at most `max` values. */
export const stringList = (max: number) =>
  Type.Array(Type.String({ maxLength: MAX_INDEXED_TEXT }), { maxItems: max });
/**
 * A parameter that takes one of `values`. `type` comes first so that a repeated parameter is "may
 * be given only once", not "must be one of".
 */
export const stringEnum = <const T extends readonly string[]>(values: T) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: values });

export const pagingParams = {
  first: firstParam,
  after: cursorParam,
  before: cursorParam,
};

export type PagingQuery = QueryOf<typeof pagingParams>;

/** The keyset request behind `first`/`after`/`before`, with the cursor checked against the query's scope. */
export interface Paging {
  first: number;
  after?: Key;
  before?: Key;
  /** the walk's epoch a cursor carries (src/store/moves.ts) */
  epoch?: number;
  scope: string;
}

/**
 * For operations that page forward only (Helix documents only `after` for them): a `before`
 * is a 400 rather than ignored, since ignoring a backward cursor would restart the walk at page 1.
 */
export function refuseBefore(q: PagingQuery): void {
  if (q.before !== undefined)
    throw badRequest('The parameter "before" is not supported by this operation; page forward with "after"');
}

function readPaging(
  secret: string,
  operation: string,
  q: PagingQuery,
  scopeParams: Record<string, unknown>,
): Paging {
  if (q.after !== undefined && q.before !== undefined)
    throw badRequest('The parameters "after" and "before" cannot be used together');
  const scope = cursorScope(operation, scopeParams);
  const p: Paging = { first: q.first, scope };
  const cursor = q.after || q.before;
  if (cursor) {
    const decoded = decodeCursor(secret, scope, cursor);
    if (q.after) p.after = decoded.last;
    else p.before = decoded.first;
    if (decoded.epoch !== undefined) p.epoch = decoded.epoch;
  }
  return p;
}

/** `pagination`: the cursor of the next page in the direction of travel, or `{}`. */
export const paginationSchema = Type.Object({ cursor: Type.Optional(Type.String()) });
export type Pagination = Static<typeof paginationSchema>;

/**
 * The cursor of a page: its first and last rows' keys (shapedPage reads them from the rows by its
 * own column list), signed for `scope`, when more rows lie in the direction of travel.
 */
export function cursorOf(secret: string, scope: string, page: Page<unknown>): string | undefined {
  return page.hasMore && page.ends ? encodeCursor(secret, scope, page.ends, page.epoch) : undefined;
}

/** The paging of one operation: its cursors are scoped to its path and signed with `secret`. */
export interface OperationPaging {
  /**
   * The keyset request of `q`, its cursor checked against the operation's scope with `scopeParams`
   * (everything that decides the rows and their order).
   */
  read(q: PagingQuery, scopeParams: Record<string, unknown>): Paging;
  /** `pagination` for a page: a cursor when more rows lie in the direction of travel, `{}` otherwise. */
  pagination(paging: Paging, page: Page<unknown>): Pagination;
}

/** The paging of the operation at `path` (without its prefix: both prefixes share their cursors). */
export function operationPaging(secret: string, path: string): OperationPaging {
  return {
    read: (q, scopeParams) => readPaging(secret, path, q, scopeParams),
    pagination(paging, page) {
      const cursor = cursorOf(secret, paging.scope, page);
      return cursor === undefined ? {} : { cursor };
    },
  };
}

/**
 * The 200 response of a list operation: `data` of `item` and `pagination`. The same schema
 * serialises the answer (fast-json-stringify), in this property order.
 */
export const listResponse = <T extends TSchema>(item: T) =>
  Type.Object({ data: Type.Array(item), pagination: paginationSchema });

/**
 * The 200 response of a lookup that answers in one piece (GET /users, GET /games): `data` only.
 * Production sends no `pagination` key there at all, not even an empty one.
 */
export const dataResponse = <T extends TSchema>(item: T) => Type.Object({ data: Type.Array(item) });

/** An instant on the wire: RFC 3339, in UTC (`2026-06-15T12:00:00Z`). */
export const dateTime = Type.String({ format: 'date-time' });

/** A value that may be null on the wire (`type: ['string', 'null']`, as OpenAPI 3.1 writes it). */
export const nullable = <T extends TSchema>(schema: T) =>
  Type.Unsafe<Static<T> | null>({ ...schema, type: [(schema as unknown as { type: string }).type, 'null'] });

const quoted = (names: readonly string[]) => names.map((n) => `"${n}"`);
const listed = (names: readonly string[]) =>
  names.length < 2
    ? quoted(names).join('')
    : `${quoted(names.slice(0, -1)).join(', ')} and ${quoted(names.slice(-1)).join('')}`;

/**
 * Repeatable parameters that share one limit (GET /users: `id` and `login` name at most 100 users
 * together): how many values they give in all, or a 400 naming them and the limit. Each value
 * counts, repeated ones too: the limit is on the request, before duplicates are collapsed.
 */
export function valuesTogether<K extends string>(
  query: Partial<Record<K, readonly unknown[]>>,
  names: readonly K[],
  max: number,
): number {
  const total = names.reduce((n, k) => n + (query[k]?.length ?? 0), 0);
  if (total > max)
    throw badRequest(
      `The parameters ${listed(names)} may be given at most ${max} times together: ${total} values were given`,
    );
  return total;
}

/** The one selector a query gives: its name, and its value, which is there. */
export type Selected<Q, K extends keyof Q> = { [S in K]-?: { kind: S; value: NonNullable<Q[S]> } }[K];

/**
 * "Exactly one kind of selector" (docs/api.md, GET /clips and GET /videos): the one of `kinds` that
 * the query gives, with its value, or a 400 that names them all (in alphabetical order) when none
 * or several are given.
 */
export function exactlyOneSelector<Q extends object, K extends keyof Q & string>(
  query: Q,
  kinds: readonly K[],
): Selected<Q, K> {
  const named = [...kinds].sort();
  const given = named.filter((k) => query[k] !== undefined);
  const oneOf = `exactly one of ${quoted(named).join(', ')} must be given`;
  if (given.length === 0) throw badRequest(`Missing required parameter: ${oneOf}`);
  if (given.length > 1)
    throw badRequest(`The parameters ${quoted(given).join(' and ')} cannot be used together: ${oneOf}`);
  const kind = given[0] as K;
  return { kind, value: query[kind] } as Selected<Q, K>;
}

/** A date-time query parameter, or a 400 naming it and the rule. */
export function readDateTime(name: string, value: string): number {
  const t = parseRfc3339(value);
  if (t === undefined)
    throw badRequest(
      `The parameter "${name}" was malformed: the value must be an RFC 3339 date-time such as 2026-06-01T00:00:00Z`,
    );
  return t;
}
