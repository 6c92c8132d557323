// GET /tags/streams, decommissioned by Helix (docs/api.md, Decommissioned): served from the
// store under its former rules with --legacy only (otherwise it answers 410: src/http/sunset.ts).
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { badRequest } from '../http/errors.ts';
import { registerOperation } from '../http/operation.ts';
import { listResponse, pagingParams, refuseBefore, stringList } from '../http/params.ts';
import { type Decommissioned, serveGone, setNotice } from '../http/sunset.ts';
import type { TagRow } from '../store/schema.ts';
import { allTags, tagsByIds } from '../store/tags.ts';

const STREAM_TAGS: Decommissioned = {
  path: '/tags/streams',
  summary: 'Get All Stream Tags',
  sunset: '2023-07-13',
  successors: [{ path: '/channels', title: 'Get Channel Information (free-form tags)' }],
};

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

/** GET /tags/streams: 410 Gone as Helix answers, or with --legacy served from the store. */
export function legacyTagsRoutes(app: FastifyInstance, ctx: AppContext): void {
  if (!ctx.config.legacy) {
    serveGone(app, STREAM_TAGS);
    return;
  }
  registerOperation(app, ctx, {
    path: STREAM_TAGS.path,
    summary: STREAM_TAGS.summary,
    description: `Decommissioned by Helix on ${STREAM_TAGS.sunset} (served with --legacy only): the stream tags, or those given by tag_id.`,
    deprecated: true,
    access: { token: 'any' },
    query: streamTagsParams,
    response: listResponse(streamTagSchema),
    async handler(ctx, { query, reply, pages }) {
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
      const paging = pages.read(query, {});
      const page = await allTags(ctx.store.db, paging);
      return {
        data: page.rows.map(tagRowToStreamTag),
        pagination: pages.pagination(paging, page),
      };
    },
  });
}
