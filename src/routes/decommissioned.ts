// The two decommissioned operations (spec 4.9, 4.10, 9). By default they answer 410 Gone as
// production does; with --legacy (HELIXD_LEGACY) they are served from the store under their
// former rules, for old clients and their tests.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { type Static, Type } from 'typebox';
import { rfc3339 } from '../clock.ts';
import type { AppContext } from '../context.ts';
import { badRequest, errorBody, helixErrorBody } from '../http/errors.ts';
import { DOCUMENTED_PREFIX, OPERATION_PREFIXES, registerOperation } from '../http/operation.ts';
import {
  dateTime,
  listResponse,
  paginationOf,
  paginationSchema,
  pagingParams,
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
  /** production's name of the operation */
  summary: string;
  /** the day production switched the operation off (spec 9) */
  sunset: string;
  successors: readonly Successor[];
}

export const FOLLOWS: Decommissioned = {
  path: '/users/follows',
  summary: 'Get Users Follows',
  sunset: '2023-09-12',
  successors: [
    { path: '/channels/followers', title: 'Get Channel Followers' },
    { path: '/channels/followed', title: 'Get Followed Channels' },
  ],
};

export const STREAM_TAGS: Decommissioned = {
  path: '/tags/streams',
  summary: 'Get All Stream Tags',
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
        // Described once: the GET under the documented prefix (the other methods answer the same).
        schema: {
          hide: prefix !== DOCUMENTED_PREFIX,
          summary: op.summary,
          description: `Decommissioned by production on ${op.sunset}: answers 410 to every request, with \`Sunset\` and a \`Link\` to ${op.successors.map((s) => s.path).join(' and ')}. Served from the store with --legacy.`,
          deprecated: true,
          response: { 410: { ...helixErrorBody, description: GONE_MESSAGE } },
        },
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

/** The wire shape of a follow (GET /users/follows, decommissioned). */
const followSchema = Type.Object({
  from_id: Type.String(),
  from_login: Type.String(),
  from_name: Type.String(),
  to_id: Type.String(),
  to_login: Type.String(),
  to_name: Type.String(),
  followed_at: dateTime,
});
export type Follow = Static<typeof followSchema>;

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

const followsParams = { from_id: singleString, to_id: singleString, ...pagingParams };

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
  registerOperation(app, ctx, {
    path: FOLLOWS.path,
    summary: FOLLOWS.summary,
    description: `Decommissioned by production on ${FOLLOWS.sunset} (served with --legacy only): the follows from a user and/or to a user, most recent first.`,
    deprecated: true,
    access: { token: 'any' },
    query: followsParams,
    response: Type.Object({
      total: Type.Integer(),
      data: Type.Array(followSchema),
      pagination: paginationSchema,
    }),
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

/** Tag names or descriptions by locale (`en-us`: text). */
const localizedSchema = Type.Unsafe<Record<string, string>>({
  type: 'object',
  additionalProperties: { type: 'string' },
});

/** The wire shape of a stream tag (GET /tags/streams, decommissioned). */
const streamTagSchema = Type.Object({
  tag_id: Type.String(),
  is_auto: Type.Boolean(),
  localization_names: localizedSchema,
  localization_descriptions: localizedSchema,
});
export type StreamTag = Static<typeof streamTagSchema>;

export function tagRowToStreamTag(r: TagRow): StreamTag {
  return {
    tag_id: r.id,
    is_auto: r.is_auto === 1,
    localization_names: JSON.parse(r.localization_names) as Record<string, string>,
    localization_descriptions: JSON.parse(r.localization_descriptions) as Record<string, string>,
  };
}

export const MAX_TAG_IDS = 100;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const streamTagsParams = { tag_id: stringList(MAX_TAG_IDS), ...pagingParams };

function legacyStreamTags(app: FastifyInstance, ctx: AppContext): void {
  registerOperation(app, ctx, {
    path: STREAM_TAGS.path,
    summary: STREAM_TAGS.summary,
    description: `Decommissioned by production on ${STREAM_TAGS.sunset} (served with --legacy only): the stream tags, or those given by tag_id.`,
    deprecated: true,
    access: { token: 'any' },
    query: streamTagsParams,
    response: listResponse(streamTagSchema),
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
