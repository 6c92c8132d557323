import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { nowSeconds } from '../clock.ts';
import type { AppContext } from '../context.ts';
import { tokenUser } from '../http/access.ts';
import { badRequest, forbidden, notFound } from '../http/errors.ts';
import { readNumericId } from '../http/ids.ts';
import { operation, registerOperations } from '../http/operation.ts';
import { dataResponse, dateTime, listResponse, pagingParams, singleString } from '../http/params.ts';
import { MAX_MARKER_DESCRIPTION } from '../records/kinds.ts';
import { writeRecords } from '../records/write.ts';
import {
  archiveOfStream,
  hasMarkedVideo,
  liveStreamOf,
  type MarkedVideo,
  markersPage,
  mostRecentVideo,
  userExists,
  videoById,
} from '../store/markers.ts';
import type { MarkerRow } from '../store/schema.ts';
import { unstorableText } from '../store/text.ts';
import { rfc3339 } from '../wire/datetime.ts';
import { parseNumericId } from '../wire/ids.ts';
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

/** The wire shape of a marker just created (Create Stream Marker), in production's order. */
const createdMarkerSchema = Type.Object({
  id: Type.String(),
  created_at: dateTime,
  position_seconds: Type.Integer({
    description: "Seconds since the stream started: where it is in the stream's archive video",
  }),
  description: Type.String(),
});

const createBody = Type.Object({
  user_id: Type.String({
    description:
      'The broadcaster whose live stream is marked: the token user, or a channel of which the token user is an editor (docs/api.md); a JSON number is read too',
  }),
  description: Type.Optional(
    Type.String({
      maxLength: MAX_MARKER_DESCRIPTION,
      description: `At most ${MAX_MARKER_DESCRIPTION} characters; left out, ""`,
    }),
  ),
});

// Production's messages (Create Stream Marker's reference).
const NOT_LIVE = 'The user in the user_id field is not streaming live.';
const NOT_A_USER = 'The ID in the user_id field is not valid.';
const NO_VOD = "The user hasn't enabled video on demand (VOD).";
const NOT_AN_EDITOR =
  "The user in the access token is not authorized to create video markers for the user in the user_id field. The user in the access token must own the video or they must be one of the broadcaster's editors.";

/** What a create request asks for, checked field by field (a 400 naming the field otherwise). */
function readCreate(body: unknown): { userId: number; description: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest(
      'The body must be a JSON object {"user_id", "description"} (Content-Type: application/json)',
    );
  const { user_id: user, description = '' } = body as Record<string, unknown>;
  if (user === undefined || user === null || user === '')
    throw badRequest('Missing required field "user_id"');
  // Production's own guide sends the id as a JSON number; client libraries send a string.
  const userId =
    typeof user === 'string' || typeof user === 'number' ? parseNumericId(String(user)) : undefined;
  if (userId === undefined)
    throw badRequest('The field "user_id" was malformed: the value must be a numeric ID');
  if (description !== null && typeof description !== 'string')
    throw badRequest('The field "description" must be a string');
  const text = description ?? '';
  const rule = unstorableText(text);
  if (rule !== undefined) throw badRequest(`The field "description" was malformed: the value ${rule}`);
  // Characters, as the record's limit counts them (code points, not UTF-16 units).
  if ([...text].length > MAX_MARKER_DESCRIPTION)
    throw badRequest(
      `The length of the string in the "description" field is too long: at most ${MAX_MARKER_DESCRIPTION} characters`,
    );
  return { userId, description: text };
}

/**
 * GET /streams/markers (docs/api.md): the token user's markers in one video, newest first. POST
 * /streams/markers: a marker at the live stream's current position in its archive video.
 */
export function markersRoutes(app: FastifyInstance, ctx: AppContext): void {
  registerOperations(app, ctx, [
    operation({
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
          throw badRequest(
            'The parameters "user_id" and "video_id" cannot be used together: give exactly one',
          );
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
    }),
    operation({
      method: 'POST',
      path: '/streams/markers',
      summary: 'Create Stream Marker',
      description:
        "A marker at the current position of the broadcaster's live stream (seconds since it started) in the stream's archive video, listed at once by GET /streams/markers. Only while the channel is live and its stream has an archive video (production's 404s otherwise).",
      access: { token: 'user', anyScope: ['channel:manage:broadcast'] },
      query: {},
      body: createBody,
      response: dataResponse(createdMarkerSchema),
      errors: {
        403: "The token user is neither the broadcaster nor an editor of the channel (one who made markers in the stream's archive video)",
        404: 'The user in user_id does not exist, is not live, or the live stream has no archive video',
      },
      async handler(ctx, { principal, body }) {
        const me = tokenUser(principal);
        const { userId, description } = readCreate(body);
        // The stream, its video and the marker in one transaction: a stream that goes offline
        // meanwhile is not marked after it ended.
        const marker = await ctx.store.db.transaction().execute(async (trx) => {
          const stream = await liveStreamOf(trx, userId);
          if (!stream) throw notFound((await userExists(trx, userId)) ? NOT_LIVE : NOT_A_USER);
          const video = await archiveOfStream(trx, stream.id, userId);
          if (!video) throw notFound(NO_VOD);
          // Editors: as GET /streams/markers reads them (checkAccess), the users who made markers
          // in the video; helixd keeps no list of editors.
          if (userId !== me && !(await hasMarkedVideo(trx, video.id, me))) throw forbidden(NOT_AN_EDITOR);
          const now = nowSeconds(ctx.clock);
          const record = {
            id: randomBytes(16).toString('hex'),
            video_id: String(video.id),
            user_id: String(me),
            created_at: rfc3339(now),
            description,
            position_seconds: Math.max(0, now - stream.started_at),
          };
          // The one write path: its checks (the video and the creator exist), in this transaction.
          await writeRecords(ctx.store, [{ kind: 'marker', data: record, where: 'body' }], {
            mode: 'create',
            trx,
          });
          return record;
        });
        return {
          data: [
            {
              id: marker.id,
              created_at: marker.created_at,
              position_seconds: marker.position_seconds,
              description: marker.description,
            },
          ],
        };
      },
    }),
  ]);
}
