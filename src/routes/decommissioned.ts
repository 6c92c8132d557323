// The two decommissioned operations (spec 4.9, 4.10, 9). By default they answer 410 Gone as
// production does; with --legacy (HELIXD_LEGACY) they are served from the store under their
// former rules, for old clients and their tests.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { rfc3339 } from '../clock.ts';
import type { AppContext } from '../context.ts';
import { badRequest, errorBody } from '../http/errors.ts';
import { OPERATION_PREFIXES, registerOperation } from '../http/operation.ts';
import {
  cursorParamSchema,
  firstSchema,
  listResponseSchema,
  type PagingQuery,
  paginationOf,
  paginationSchema,
  readPaging,
  refuseBefore,
  singleString,
  stringList,
} from '../http/params.ts';
import { countFollows, type FollowListRow, type FollowSelector, followsPage } from '../store/follows.ts';
import { isDigits, parseNumericId } from '../store/ids.ts';
import type { TagRow } from '../store/schema.ts';
import { allTags, tagsByIds } from '../store/tags.ts';

interface Successor {
  path: string;
  title: string;
}

interface Decommissioned {
  path: string;
  /** the day production switched the operation off (spec 9) */
  sunset: string;
  successors: readonly Successor[];
}

export const FOLLOWS: Decommissioned = {
  path: '/users/follows',
  sunset: '2023-09-12',
  successors: [
    { path: '/channels/followers', title: 'Get Channel Followers' },
    { path: '/channels/followed', title: 'Get Followed Channels' },
  ],
};

export const STREAM_TAGS: Decommissioned = {
  path: '/tags/streams',
  sunset: '2023-07-13',
  successors: [{ path: '/channels', title: 'Get Channel Information (free-form tags)' }],
};

export const GONE_MESSAGE = 'This API is not available.';

/**
 * `Sunset` (RFC 8594: an HTTP-date, here the decommission day) and `Link` (RFC 8288) naming the
 * replacement operations with rel="successor-version", under the prefix the request came in on.
 */
export function noticeHeaders(op: Decommissioned, prefix: string): Record<string, string> {
  return {
    sunset: new Date(`${op.sunset}T00:00:00Z`).toUTCString(),
    link: op.successors
      .map((s) => `<${prefix}${s.path}>; rel="successor-version"; title="${s.title}"`)
      .join(', '),
  };
}

function prefixOf(url: string): string {
  return OPERATION_PREFIXES.find((p) => url.startsWith(`${p}/`)) ?? OPERATION_PREFIXES[0];
}

function setNotice(reply: FastifyReply, op: Decommissioned): void {
  reply.headers(noticeHeaders(op, prefixOf(reply.request.url)));
}

export function decommissionedRoutes(app: FastifyInstance, ctx: AppContext): void {
  if (ctx.config.legacy) {
    legacyFollows(app, ctx);
    legacyStreamTags(app, ctx);
    return;
  }
  // Production answers 410 to any request, before looking at the token or the parameters; Gone
  // is about the resource, so every method gets it (RFC 9110 section 15.5.11).
  for (const op of [FOLLOWS, STREAM_TAGS]) {
    for (const prefix of OPERATION_PREFIXES) {
      app.route({
        method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
        url: prefix + op.path,
        handler: (_req, reply) => {
          reply
            .code(410)
            .headers(noticeHeaders(op, prefix))
            .type('application/json; charset=utf-8')
            .send(errorBody(410, GONE_MESSAGE));
        },
      });
    }
  }
}

// ---- GET /users/follows (legacy) ----------------------------------------------------------------

export interface Follow {
  from_id: string;
  from_login: string;
  from_name: string;
  to_id: string;
  to_login: string;
  to_name: string;
  followed_at: string;
}

export function followRowToFollow(r: FollowListRow): Follow {
  return {
    from_id: String(r.from_id),
    from_login: r.from_login,
    from_name: r.from_name,
    to_id: String(r.to_id),
    to_login: r.to_login,
    to_name: r.to_name,
    followed_at: rfc3339(r.followed_at),
  };
}

const followSchema = {
  type: 'object',
  properties: {
    from_id: { type: 'string' },
    from_login: { type: 'string' },
    from_name: { type: 'string' },
    to_id: { type: 'string' },
    to_login: { type: 'string' },
    to_name: { type: 'string' },
    followed_at: { type: 'string' },
  },
  required: ['from_id', 'from_login', 'from_name', 'to_id', 'to_login', 'to_name', 'followed_at'],
} as const;

interface FollowsQuery extends PagingQuery {
  from_id?: string;
  to_id?: string;
}

/**
 * A user id parameter: digits; '' counts as not given. `null`: digits that spell no numeric id
 * (too long, or a leading zero), so no stored user has them.
 */
function userIdParam(name: string, v: string | undefined): number | null | undefined {
  if (v === undefined || v === '') return undefined;
  if (!isDigits(v))
    throw badRequest(`The parameter "${name}" was malformed: the value must be a user ID (digits only)`);
  return parseNumericId(v) ?? null;
}

function legacyFollows(app: FastifyInstance, ctx: AppContext): void {
  registerOperation<FollowsQuery>(app, ctx, {
    path: FOLLOWS.path,
    access: { token: 'any' },
    schema: {
      querystring: {
        type: 'object',
        properties: {
          from_id: singleString,
          to_id: singleString,
          first: firstSchema,
          after: cursorParamSchema,
          before: cursorParamSchema,
        },
      },
      response: {
        200: {
          type: 'object',
          properties: {
            total: { type: 'integer' },
            data: { type: 'array', items: followSchema },
            pagination: paginationSchema,
          },
          required: ['total', 'data', 'pagination'],
        },
      },
    },
    async handler(ctx, { query, reply }) {
      setNotice(reply, FOLLOWS);
      const from = userIdParam('from_id', query.from_id);
      const to = userIdParam('to_id', query.to_id);
      if (from === undefined && to === undefined)
        throw badRequest('Missing required parameter "from_id" or "to_id"');
      refuseBefore(query);
      const paging = readPaging(ctx, FOLLOWS.path, query, { from_id: query.from_id, to_id: query.to_id });
      if (from === null || to === null) return { total: 0, data: [], pagination: {} };
      const sel = { from, to } as FollowSelector;
      const [page, total] = await Promise.all([
        followsPage(ctx.store.db, sel, paging),
        countFollows(ctx.store.db, sel),
      ]);
      return {
        total,
        data: page.rows.map(followRowToFollow),
        pagination: paginationOf(ctx, paging, page),
      };
    },
  });
}

// ---- GET /tags/streams (legacy) -----------------------------------------------------------------

export interface StreamTag {
  tag_id: string;
  is_auto: boolean;
  localization_names: Record<string, string>;
  localization_descriptions: Record<string, string>;
}

export function tagRowToStreamTag(r: TagRow): StreamTag {
  return {
    tag_id: r.id,
    is_auto: r.is_auto === 1,
    localization_names: JSON.parse(r.localization_names) as Record<string, string>,
    localization_descriptions: JSON.parse(r.localization_descriptions) as Record<string, string>,
  };
}

const localizedSchema = { type: 'object', additionalProperties: { type: 'string' } } as const;

const streamTagSchema = {
  type: 'object',
  properties: {
    tag_id: { type: 'string' },
    is_auto: { type: 'boolean' },
    localization_names: localizedSchema,
    localization_descriptions: localizedSchema,
  },
  required: ['tag_id', 'is_auto', 'localization_names', 'localization_descriptions'],
} as const;

export const MAX_TAG_IDS = 100;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface StreamTagsQuery extends PagingQuery {
  tag_id?: string[];
}

function legacyStreamTags(app: FastifyInstance, ctx: AppContext): void {
  registerOperation<StreamTagsQuery>(app, ctx, {
    path: STREAM_TAGS.path,
    access: { token: 'any' },
    schema: {
      querystring: {
        type: 'object',
        properties: {
          tag_id: stringList(MAX_TAG_IDS),
          first: firstSchema,
          after: cursorParamSchema,
          before: cursorParamSchema,
        },
      },
      response: listResponseSchema(streamTagSchema),
    },
    async handler(ctx, { query, reply }) {
      setNotice(reply, STREAM_TAGS);
      refuseBefore(query);
      if (query.tag_id !== undefined) {
        const bad = query.tag_id.find((id) => !UUID.test(id));
        if (bad !== undefined)
          throw badRequest(`The parameter "tag_id" was malformed: ${JSON.stringify(bad)} is not a UUID`);
        // A lookup by id is one page of at most 100 tags: `first` does not cut it (there is no
        // cursor to reach the rest) and a cursor does not apply.
        if (query.after !== undefined && query.after !== '')
          throw badRequest('The parameter "after" cannot be used with "tag_id"');
        // UUIDs are case-insensitive (RFC 4122 section 3); tag ids are stored in lower case.
        const rows = await tagsByIds(
          ctx.store.db,
          query.tag_id.map((id) => id.toLowerCase()),
        );
        return { data: rows.map(tagRowToStreamTag), pagination: {} };
      }
      const paging = readPaging(ctx, STREAM_TAGS.path, query, {});
      const page = await allTags(ctx.store.db, paging);
      return {
        data: page.rows.map(tagRowToStreamTag),
        pagination: paginationOf(ctx, paging, page),
      };
    },
  });
}
