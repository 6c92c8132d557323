import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { tokenUser } from '../http/access.ts';
import { badRequest, forbidden, notFound } from '../http/errors.ts';
import { readNumericId } from '../http/ids.ts';
import { registerOperation } from '../http/operation.ts';
import { dateTime, listResponse, pagingParams, singleString } from '../http/params.ts';
import {
  hasMarkedVideo,
  type MarkedVideo,
  markersPage,
  mostRecentVideo,
  userExists,
  videoById,
} from '../store/markers.ts';
import type { MarkerRow } from '../store/schema.ts';
import { rfc3339 } from '../wire/datetime.ts';
import type { Links } from '../wire/links.ts';

/** The wire shape of a marker inside a stream marker group (docs/api.md); `URL` is upper case on the wire. */
const markerSchema = Type.Object({
  id: Type.String(),
  created_at: dateTime,
  description: Type.String(),
  position_seconds: Type.Integer(),
  URL: Type.String(),
});
export type Marker = Static<typeof markerSchema>;

/** A stream marker group (docs/api.md): the video's owner, and the one video with its markers. */
const markerGroupSchema = Type.Object({
  user_id: Type.String(),
  user_name: Type.String(),
  user_login: Type.String(),
  videos: Type.Array(Type.Object({ video_id: Type.String(), markers: Type.Array(markerSchema) })),
});
export type MarkerGroup = Static<typeof markerGroupSchema>;

export function markerRowToMarker(row: MarkerRow, links: Links): Marker {
  return {
    id: row.id,
    created_at: rfc3339(row.created_at),
    description: row.description,
    position_seconds: row.position_seconds,
    URL: links.marker(row.video_id, row.position_seconds),
  };
}

const markersParams = { ...pagingParams, user_id: singleString, video_id: singleString };

const SELECTORS = ['user_id', 'video_id'] as const;

/**
 * Who may read a video's markers. Helix: a video the token user does not own is a 403; Helix
 * also lets the channel's editors read them. helixd keeps no list of editors; a user who created a
 * marker in the video marked it as an editor of the channel, so the owner and those users may read,
 * and (docs/api.md, GET /streams/markers) each of them gets only the markers they created.
 */
async function checkAccess(ctx: AppContext, video: MarkedVideo, userId: number): Promise<void> {
  if (video.user_id === userId) return;
  if (await hasMarkedVideo(ctx.store.db, video.id, userId)) return;
  throw forbidden(
    'The user in the OAuth token may read the markers of a video only if they own the video or ' +
      'created markers in it as an editor of the channel',
  );
}

/** GET /streams/markers (docs/api.md): the token user's markers in one video, newest first. */
export function markersRoutes(app: FastifyInstance, ctx: AppContext): void {
  registerOperation(app, ctx, {
    path: '/streams/markers',
    summary: 'Get Stream Markers',
    description:
      "The token user's markers in one video (given, or the user's most recent one), newest first.",
    // A user access token with either scope, as Helix accepts: reading markers is part of
    // user:read:broadcast, and channel:manage:broadcast (which lets the token create them) reads too.
    access: { token: 'user', anyScope: ['user:read:broadcast', 'channel:manage:broadcast'] },
    query: markersParams,
    response: listResponse(markerGroupSchema),
    errors: {
      403: 'The token user neither owns the video nor created markers in it',
      404: 'The video, or the user or any video of theirs, does not exist',
    },
    async handler(ctx, { query, principal, pages }) {
      const given = SELECTORS.filter((k) => query[k] !== undefined && query[k] !== '');
      if (given.length === 0) throw badRequest('Missing required parameter "user_id" or "video_id"');
      if (given.length > 1)
        throw badRequest('The parameters "user_id" and "video_id" cannot be used together: give exactly one');
      const me = tokenUser(principal);
      const db = ctx.store.db;
      const selector = given[0] as (typeof SELECTORS)[number];
      const id = readNumericId(selector, query[selector] as string);
      // Bound to the token user too: the rows are that user's markers.
      const paging = pages.read(query, { [selector]: id, creator_id: me });

      let video: MarkedVideo | undefined;
      if (selector === 'video_id') {
        video = await videoById(db, id);
        if (!video) throw notFound('The video in "video_id" was not found');
      } else {
        // A cursor names the video it walks (MARKERS_ORDER), so later pages stay on the video the
        // first page was "the most recent" one of. The cursor's signature covers user_id.
        const key = paging.after ?? paging.before;
        video = key ? await videoById(db, Number(key[0])) : await mostRecentVideo(db, id);
        if (!video || video.user_id !== id) {
          if (key) throw badRequest('Invalid cursor.');
          throw notFound(
            (await userExists(db, id))
              ? 'The user in "user_id" has no videos'
              : 'The user in "user_id" was not found',
          );
        }
      }
      await checkAccess(ctx, video, me);

      const page = await markersPage(db, video.id, me, paging);
      if (page.rows.length === 0) return { data: [], pagination: {} };
      const group: MarkerGroup = {
        user_id: String(video.user_id),
        user_name: video.user_name ?? '',
        user_login: video.user_login ?? '',
        videos: [
          { video_id: String(video.id), markers: page.rows.map((r) => markerRowToMarker(r, ctx.links)) },
        ],
      };
      return { data: [group], pagination: pages.pagination(paging, page) };
    },
  });
}
