// Request rules shared by several operations (spec section 4, common rules), written once.
import type { AppContext } from '../context.ts';
import type { Key, Page } from '../store/page.ts';
import { cursorScope, decodeCursor, encodeCursor } from './cursor.ts';
import { badRequest } from './errors.ts';

export const MAX_FIRST = 100;
export const DEFAULT_FIRST = 20;

/** `first`: an integer 1..100, default 20. The query string always holds it as text. */
export const firstSchema = {
  type: 'integer',
  minimum: 1,
  maximum: MAX_FIRST,
  default: DEFAULT_FIRST,
} as const;
/** A boolean parameter: `true` or `false` in any letter case (the rule lives in validate.ts). */
export const booleanParam = { type: 'boolean' } as const;
export const cursorParamSchema = { type: 'string', maxLength: 2048 } as const;
/** A parameter given once (a repeated one is a 400 "may be given only once"). */
export const singleString = { type: 'string', maxLength: 256 } as const;
/** A repeatable parameter (`?id=a&id=b`), at most `max` values. */
export const stringList = (max: number) =>
  ({ type: 'array', items: { type: 'string', maxLength: 256 }, maxItems: max }) as const;

export const pagingProperties = {
  first: firstSchema,
  after: cursorParamSchema,
  before: cursorParamSchema,
} as const;

export interface PagingQuery {
  first: number;
  after?: string;
  before?: string;
}

/** The keyset request behind `first`/`after`/`before`, with the cursor checked against the query's scope. */
export interface Paging {
  first: number;
  after?: Key;
  before?: Key;
  scope: string;
}

/**
 * For operations that page forward only (production documents only `after` for them): a `before`
 * is a 400 rather than ignored, since ignoring a backward cursor would restart the walk at page 1.
 */
export function refuseBefore(q: PagingQuery): void {
  if (q.before !== undefined)
    throw badRequest('The parameter "before" is not supported by this operation; page forward with "after"');
}

export function readPaging(
  ctx: AppContext,
  operation: string,
  q: PagingQuery,
  scopeParams: Record<string, unknown>,
): Paging {
  if (q.after !== undefined && q.before !== undefined)
    throw badRequest('The parameters "after" and "before" cannot be used together');
  const scope = cursorScope(operation, scopeParams);
  const p: Paging = { first: q.first, scope };
  if (q.after !== undefined && q.after !== '') p.after = decodeCursor(ctx.secret, scope, q.after).last;
  if (q.before !== undefined && q.before !== '') p.before = decodeCursor(ctx.secret, scope, q.before).first;
  return p;
}

export interface Pagination {
  cursor?: string;
}

/**
 * The cursor of a page: its first and last rows' keys (keysetPage reads them from the rows by its
 * own column list), signed for `scope`, when more rows lie in the direction of travel.
 */
export function cursorOf(secret: string, scope: string, page: Page<unknown>): string | undefined {
  return page.hasMore && page.ends ? encodeCursor(secret, scope, page.ends) : undefined;
}

/** `pagination` for a page: a cursor when more rows lie in the direction of travel, `{}` otherwise. */
export function paginationOf(ctx: AppContext, paging: Paging, page: Page<unknown>): Pagination {
  const cursor = cursorOf(ctx.secret, paging.scope, page);
  return cursor === undefined ? {} : { cursor };
}

export const paginationSchema = {
  type: 'object',
  properties: { cursor: { type: 'string' } },
} as const;

/**
 * The 200 response schema of a list operation: `data` of `item` and `pagination`. The same schema
 * serialises the answer (fast-json-stringify), in this property order.
 */
export function listResponseSchema(item: object) {
  return {
    200: {
      type: 'object',
      properties: { data: { type: 'array', items: item }, pagination: paginationSchema },
      required: ['data', 'pagination'],
    },
  } as const;
}

/**
 * The 200 response schema of a lookup that answers in one piece (GET /users, GET /games): `data`
 * only. Production sends no `pagination` key there at all, not even an empty one.
 */
export function dataResponseSchema(item: object) {
  return {
    200: {
      type: 'object',
      properties: { data: { type: 'array', items: item } },
      required: ['data'],
    },
  } as const;
}

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

/**
 * "Exactly one kind of selector" (spec 4.2, 4.3): the one of `kinds` that the query gives, or a
 * 400 that names them all when none or several are given.
 */
export function exactlyOneSelector<K extends string>(
  query: Partial<Record<K, unknown>>,
  kinds: readonly K[],
): K {
  const given = kinds.filter((k) => query[k] !== undefined);
  const oneOf = `exactly one of ${quoted(kinds).join(', ')} must be given`;
  if (given.length === 0) throw badRequest(`Missing required parameter: ${oneOf}`);
  if (given.length > 1)
    throw badRequest(`The parameters ${quoted(given).join(' and ')} cannot be used together: ${oneOf}`);
  return given[0] as K;
}
