import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { tokenUser } from '../http/access.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { readNumericId, readRequiredId } from '../http/ids.ts';
import { operation, registerOperations } from '../http/operation.ts';
import {
  booleanParam,
  dataResponse,
  dateTime,
  exactlyOneSelector,
  listResponse,
  nullable,
  pagingParams,
  type QueryOf,
  readDateTime,
  singleString,
  stringList,
} from '../http/params.ts';
import { refuseUnknownGame } from '../http/rules.ts';
import { CLIP_DELAY_MS, CLIP_SECONDS, ClipMaker, type ClipRecord, newClipId } from '../records/clip-jobs.ts';
import { addClipJob } from '../store/clip-jobs.ts';
import { CLIP_SELECTORS, type ClipFilters, clipsByIds, clipsPage } from '../store/clips.ts';
import { archiveOfStream, liveStreamOf } from '../store/markers.ts';
import type { ClipRow } from '../store/schema.ts';
import { MAX_INDEXED_TEXT } from '../store/text.ts';
import type { UserName } from '../store/users.ts';
import { rfc3339 } from '../wire/datetime.ts';
import type { Links } from '../wire/links.ts';

/** The wire shape of a clip. */
const clipSchema = Type.Object({
  id: Type.String(),
  url: Type.String(),
  embed_url: Type.String(),
  broadcaster_id: Type.String(),
  broadcaster_name: Type.String(),
  creator_id: Type.String(),
  creator_name: Type.String(),
  video_id: Type.String({ description: 'The video the clip was cut from; "" when there is none' }),
  game_id: Type.String(),
  language: Type.String(),
  title: Type.String(),
  view_count: Type.Integer(),
  created_at: dateTime,
  thumbnail_url: Type.String(),
  duration: Type.Number({ description: 'In seconds, to a tenth of a second' }),
  vod_offset: nullable(Type.Integer()),
  is_featured: Type.Boolean(),
});
export type Clip = Static<typeof clipSchema>;

/** `users` holds the broadcaster and the creator when they exist (names are "" otherwise). */
export function clipRowToClip(row: ClipRow, users: ReadonlyMap<number, UserName>, links: Links): Clip {
  return {
    id: row.id,
    url: links.clip(row.id),
    embed_url: links.clipEmbed(row.id),
    broadcaster_id: String(row.broadcaster_id),
    broadcaster_name: users.get(row.broadcaster_id)?.display_name ?? '',
    creator_id: String(row.creator_id),
    creator_name: users.get(row.creator_id)?.display_name ?? '',
    video_id: row.video_id === null ? '' : String(row.video_id),
    game_id: String(row.game_id),
    language: row.language,
    title: row.title,
    view_count: row.view_count,
    created_at: rfc3339(row.created_at),
    thumbnail_url: links.clipThumbnail(row.id),
    // stored in tenths of a second: exact on both stores, one decimal on the wire
    duration: row.duration_ds / 10,
    vod_offset: row.vod_offset,
    is_featured: row.is_featured === 1,
  };
}

/** Spec 8: at most 100 `id` values per request. */
const MAX_IDS = 100;
/** Spec 4.2: without `ended_at`, the period is one week from `started_at`. */
const DEFAULT_PERIOD = 7 * 86400;
/** The three selector kinds of GET /clips (docs/api.md): by ids, or those of a page. */
const SELECTOR_KINDS = ['id', ...CLIP_SELECTORS] as const;

const clipsParams = {
  ...pagingParams,
  id: stringList(MAX_IDS),
  broadcaster_id: singleString,
  game_id: singleString,
  started_at: singleString,
  ended_at: singleString,
  is_featured: booleanParam,
};
type ClipsQuery = QueryOf<typeof clipsParams>;

/** Spec 4.2: "The seconds value is ignored": the instant, truncated to its minute. */
const toMinute = (t: number) => Math.floor(t / 60) * 60;

/** `started_at` / `ended_at` / `is_featured` of GET /clips (docs/api.md), as store filters. */
function readFilters(q: ClipsQuery): ClipFilters {
  const f: ClipFilters = {};
  if (q.is_featured !== undefined) f.isFeatured = q.is_featured;
  // A malformed ended_at is a 400 even when it is ignored (no started_at): it is still a bad value.
  const ended = q.ended_at === undefined ? undefined : toMinute(readDateTime('ended_at', q.ended_at));
  if (q.started_at !== undefined) {
    const from = toMinute(readDateTime('started_at', q.started_at));
    const to = ended ?? from + DEFAULT_PERIOD;
    if (to < from) throw badRequest('The parameter "ended_at" must not be earlier than "started_at"');
    f.period = { from, to };
  }
  return f;
}

/** The wire shape of a clip just asked for (Create Clip). */
const createdClipSchema = Type.Object({
  id: Type.String({ description: "The new clip's id: GET /clips?id= lists it once it is made" }),
  edit_url: Type.String({ description: 'Where its creator edits it: its page, then /edit' }),
});

const createParams = {
  broadcaster_id: Type.String({
    maxLength: MAX_INDEXED_TEXT,
    description: 'The live channel to clip (required); any user may clip any live channel',
  }),
  has_delay: Type.Boolean({
    description:
      'Whether to clip as viewers see the stream, behind its delay (default false); helixd keeps no broadcaster delay, so both are the same clip (docs/api.md)',
  }),
};

// Production's 404 (Create Clip): the channel is not live. helixd answers it for an id of no user
// too, since no such channel is live (docs/api.md).
const OFFLINE = 'Clipping is not possible for an offline channel.';

/**
 * GET /clips (docs/api.md): clips by ids, by broadcaster or by game. POST /clips: a clip of a live
 * channel, made CLIP_DELAY_MS later on the server clock by a ClipMaker (src/records/clip-jobs.ts).
 */
export function clipsRoutes(app: FastifyInstance, ctx: AppContext): void {
  // In every serving process: it also makes the clips other processes asked for, or left behind.
  const maker = new ClipMaker(ctx.store, ctx.clock, app.log);
  app.addHook('onClose', () => maker.stop());
  registerOperations(app, ctx, [
    operation({
      path: '/clips',
      summary: 'Get Clips',
      description:
        'Clips by id, by broadcaster or by game (exactly one of the three), optionally within a period and featured or not.',
      access: { token: 'any' },
      query: clipsParams,
      response: listResponse(clipSchema),
      errors: { 404: 'The game in game_id does not exist' },
      async handler(ctx, { query, pages }) {
        const selected = exactlyOneSelector(query, SELECTOR_KINDS);
        const filters = readFilters(query);
        const db = ctx.store.db;

        if (selected.kind === 'id') {
          // Spec 4.2: the cursors apply only to broadcaster and game queries; an id query never
          // issues one, so a cursor here can only be a mistake.
          for (const p of ['after', 'before'] as const)
            if (query[p] !== undefined)
              throw badRequest(
                `The parameter "${p}" applies only to queries by "broadcaster_id" or "game_id"`,
              );
          const rows = await clipsByIds(db, selected.value, filters);
          const users = await ctx.userNames.byIds(rows.flatMap((r) => [r.broadcaster_id, r.creator_id]));
          return { data: rows.map((r) => clipRowToClip(r, users, ctx.links)), pagination: {} };
        }

        const selector = selected.kind;
        const value = readNumericId(selector, selected.value);
        // The cursor is bound to everything that decides the rows and their order.
        const paging = pages.read(query, {
          [selector]: value,
          started_at: filters.period?.from,
          ended_at: filters.period?.to,
          is_featured: filters.isFeatured,
        });
        const page = await clipsPage(db, { selector, value, ...filters }, paging);
        if (selector === 'game_id')
          await refuseUnknownGame(db, value, page.rows, 'The ID in game_id was not found');
        const users = await ctx.userNames.byIds(page.rows.flatMap((r) => [r.broadcaster_id, r.creator_id]));
        return {
          data: page.rows.map((r) => clipRowToClip(r, users, ctx.links)),
          pagination: pages.pagination(paging, page),
        };
      },
    }),
    operation({
      method: 'POST',
      path: '/clips',
      summary: 'Create Clip',
      description: `A clip of the broadcaster's live stream, the last ${CLIP_SECONDS} seconds of it, cut from the stream's archive video; the token user is its creator. Answered at once with the new clip's id; GET /clips lists the clip ${CLIP_DELAY_MS / 1000} seconds later on the server clock. Only while the channel is live (production's 404 otherwise).`,
      access: { token: 'user', anyScope: ['clips:edit'] },
      query: createParams,
      status: 202,
      response: dataResponse(createdClipSchema),
      errors: { 404: 'The channel in broadcaster_id is not live (or is no user)' },
      async handler(ctx, { query, principal }) {
        const me = tokenUser(principal);
        const broadcaster = readRequiredId('broadcaster_id', query.broadcaster_id);
        // has_delay is read (a value that is not a boolean is a 400) and changes nothing: a clip
        // behind the broadcaster's delay starts that delay earlier, and helixd keeps none.
        const record = await ctx.store.db.transaction().execute(async (trx) => {
          const stream = await liveStreamOf(trx, broadcaster);
          if (!stream) throw notFound(OFFLINE);
          const video = await archiveOfStream(trx, stream.id, broadcaster);
          const nowMs = ctx.clock.now();
          const now = Math.floor(nowMs / 1000);
          const clip: ClipRecord = {
            id: newClipId(),
            broadcaster_id: String(broadcaster),
            creator_id: String(me),
            // The stream's archive video, where the clip's last second is the stream's position
            // now; with none, a clip of no video, as production shows one whose VOD it has not.
            video_id: video ? String(video.id) : '',
            game_id: String(stream.game_id),
            language: stream.language,
            title: stream.title,
            view_count: 0,
            created_at: rfc3339(now),
            duration: CLIP_SECONDS,
            vod_offset: video ? Math.max(0, now - stream.started_at - CLIP_SECONDS) : null,
            is_featured: false,
          };
          await addClipJob(trx, {
            id: clip.id,
            due_at: nowMs + CLIP_DELAY_MS,
            record: JSON.stringify(clip),
          });
          return clip;
        });
        // The maker sleeps until this clip is due (another process's maker may make it first).
        maker.wake();
        return { data: [{ id: record.id, edit_url: ctx.links.clipEdit(record.id) }] };
      },
    }),
  ]);
}
