// GET /channels and PATCH /channels (docs/api.md, "Channels"): a channel's information, kept when
// the stream goes offline, and the broadcaster's own change of it. A live stream holds its
// channel's title, game, language and tags: the write path keeps them alike (src/records/channels.ts).
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { type Principal, tokenUser } from '../http/access.ts';
import { badRequest, forbidden, unauthorized } from '../http/errors.ts';
import { readNumericIds, readRequiredId } from '../http/ids.ts';
import { operation, registerOperations } from '../http/operation.ts';
import { dataResponse, singleString, stringList } from '../http/params.ts';
import { NEW_CHANNEL } from '../records/channels.ts';
import {
  CONTENT_LABELS,
  type ContentLabel,
  MAX_DELAY,
  MAX_STREAM_TITLE,
  MAX_TAG,
  MAX_TAGS,
  orderedLabels,
  recordKind,
} from '../records/kinds.ts';
import { patchRecord, RecordError } from '../records/write.ts';
import { type ChannelInfoRow, channelsOf } from '../store/channels.ts';
import { unstorableText } from '../store/text.ts';

/** Production: up to 100 channels per request. */
const MAX_CHANNELS = 100;

/** The wire shape of a channel (Get Channel Information), in production's order. */
const channelSchema = Type.Object({
  broadcaster_id: Type.String(),
  broadcaster_login: Type.String(),
  broadcaster_name: Type.String(),
  broadcaster_language: Type.String(),
  game_id: Type.String(),
  game_name: Type.String(),
  title: Type.String(),
  delay: Type.Integer({
    description: "Seconds the broadcast is held back: 0 unless the token is the broadcaster's own",
  }),
  tags: Type.Array(Type.String()),
  content_classification_labels: Type.Array(Type.String()),
  is_branded_content: Type.Boolean(),
});
type Channel = Static<typeof channelSchema>;

function toChannel(row: ChannelInfoRow, principal: Principal): Channel {
  const own = principal.kind === 'user' && principal.userId === row.broadcaster_id;
  return {
    broadcaster_id: String(row.broadcaster_id),
    broadcaster_login: row.login,
    broadcaster_name: row.display_name,
    broadcaster_language: row.language ?? NEW_CHANNEL.language,
    game_id: row.game_id === null ? '' : String(row.game_id),
    game_name: row.game_name ?? '',
    title: row.title ?? NEW_CHANNEL.title,
    // Production shows the delay to the broadcaster's own user token only; anyone else reads 0.
    delay: own ? (row.delay ?? NEW_CHANNEL.delay) : 0,
    tags: JSON.parse(row.tags ?? NEW_CHANNEL.tags) as string[],
    content_classification_labels: JSON.parse(row.labels ?? NEW_CHANNEL.labels) as string[],
    is_branded_content: row.is_branded_content === 1,
  };
}

/** The labels a broadcaster may set: all but the one the platform sets from the game. */
const SETTABLE_LABELS = CONTENT_LABELS.filter((l) => l !== 'MatureGame');

const modifyBody = Type.Object({
  game_id: Type.Optional(
    Type.String({ description: 'The game (category); "" or "0" removes it (not while live, in helixd)' }),
  ),
  broadcaster_language: Type.Optional(
    Type.String({ description: 'An ISO 639-1 two-letter code in lower case, or "other"' }),
  ),
  title: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_STREAM_TITLE,
      description: `1 to ${MAX_STREAM_TITLE} characters`,
    }),
  ),
  delay: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_DELAY,
      description: `Seconds, 0 to ${MAX_DELAY}: partners only (a string of digits is read too)`,
    }),
  ),
  tags: Type.Optional(
    Type.Array(Type.String(), {
      maxItems: MAX_TAGS,
      description: `At most ${MAX_TAGS}, each 1 to ${MAX_TAG} letters or digits, each once; [] removes them all`,
    }),
  ),
  content_classification_labels: Type.Optional(
    Type.Array(
      Type.Object({
        id: Type.Unsafe<string>({ type: 'string', enum: SETTABLE_LABELS }),
        is_enabled: Type.Boolean(),
      }),
      { description: 'Labels to turn on or off; the others stay as they are' },
    ),
  ),
  is_branded_content: Type.Optional(Type.Boolean()),
});

// Production's messages (Modify Channel Information's reference), where it documents one.
const NOT_THE_BROADCASTER =
  "The ID in broadcaster_id must match the user ID found in the request's OAuth token.";
const NOTHING_TO_UPDATE = 'The request must update at least one property.';
const EMPTY_TITLE = 'The title field may not contain an empty string.';
const BAD_GAME = 'The ID in game_id is not valid.';
const DELAY_PARTNERS_ONLY = 'To update the delay field, the broadcaster must have partner status.';
const BAD_LABELS = "The list in the content_classification_labels field contains a value that's not valid.";
const MATURE_GAME =
  'The content classification label "MatureGame" is set from the game: a broadcaster may not set it.';

const FIELDS = Object.keys(modifyBody.properties);
const TAG = new RegExp(`^[\\p{L}\\p{N}]{1,${MAX_TAG}}$`, 'u');
const LANGUAGE = /^([a-z]{2}|other)$/;

const fieldError = (field: string, rule: string) => badRequest(`The field "${field}" was malformed: ${rule}`);

/** A text field's value, or a 400 naming it. */
function textField(body: Record<string, unknown>, field: string): string | undefined {
  const v = body[field];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw fieldError(field, 'the value must be a string');
  const rule = unstorableText(v);
  if (rule !== undefined) throw fieldError(field, `the value ${rule}`);
  return v;
}

/**
 * What a modify request changes, checked field by field (a 400 naming the field): the channel
 * record's fields, and the labels it turns on (true) or off (false), to lay over the channel's
 * labels as read in the write's transaction (withLabels).
 */
function readModify(body: unknown): { fields: Record<string, unknown>; labels?: Map<string, boolean> } {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest(
      'The body must be a JSON object with at least one of "game_id", "broadcaster_language", "title", "delay", "tags", "content_classification_labels", "is_branded_content" (Content-Type: application/json)',
    );
  const b = body as Record<string, unknown>;
  if (!FIELDS.some((f) => b[f] !== undefined)) throw badRequest(NOTHING_TO_UPDATE);
  const out: Record<string, unknown> = {};
  let labels: Map<string, boolean> | undefined;

  const title = textField(b, 'title');
  if (title !== undefined) {
    if (title.trim() === '') throw badRequest(EMPTY_TITLE);
    if ([...title].length > MAX_STREAM_TITLE)
      throw fieldError('title', `the value must be at most ${MAX_STREAM_TITLE} characters`);
    out.title = title;
  }

  // Client libraries send the game as a string; a JSON number is read too.
  const game = typeof b.game_id === 'number' ? String(b.game_id) : textField(b, 'game_id');
  if (game !== undefined) {
    if (game === '' || game === '0') out.game_id = '';
    else if (/^[1-9]\d{0,15}$/.test(game)) out.game_id = game;
    else throw badRequest(BAD_GAME);
  }

  const language = textField(b, 'broadcaster_language');
  if (language !== undefined) {
    if (!LANGUAGE.test(language))
      throw fieldError(
        'broadcaster_language',
        'the value must be an ISO 639-1 two-letter code in lower case, or "other"',
      );
    out.broadcaster_language = language;
  }

  if (b.delay !== undefined) {
    // Twurple sends the delay as a string of digits; the reference, as a number.
    const delay = typeof b.delay === 'string' && /^\d{1,3}$/.test(b.delay) ? Number(b.delay) : b.delay;
    if (typeof delay !== 'number' || !Number.isInteger(delay) || delay < 0 || delay > MAX_DELAY)
      throw fieldError('delay', `the value must be a whole number of seconds from 0 to ${MAX_DELAY}`);
    out.delay = delay;
  }

  if (b.tags !== undefined) {
    if (!Array.isArray(b.tags)) throw fieldError('tags', 'the value must be an array of strings');
    if (b.tags.length > MAX_TAGS) throw fieldError('tags', `the list may hold at most ${MAX_TAGS} tags`);
    const seen = new Set<string>();
    for (const tag of b.tags) {
      if (typeof tag !== 'string' || !TAG.test(tag))
        throw fieldError(
          'tags',
          `each tag must be 1 to ${MAX_TAG} letters or digits, with no spaces or special characters: ${JSON.stringify(tag)} is not`,
        );
      const folded = tag.toLowerCase();
      if (seen.has(folded)) throw fieldError('tags', `the tag ${JSON.stringify(tag)} is given twice`);
      seen.add(folded);
    }
    out.tags = b.tags;
  }

  if (b.content_classification_labels !== undefined) {
    const given = b.content_classification_labels;
    if (!Array.isArray(given)) throw badRequest(BAD_LABELS);
    const switches = new Map<string, boolean>();
    for (const item of given) {
      const { id, is_enabled: on } = (typeof item === 'object' && item !== null ? item : {}) as Record<
        string,
        unknown
      >;
      if (id === 'MatureGame') throw forbidden(MATURE_GAME);
      if (
        typeof id !== 'string' ||
        !(SETTABLE_LABELS as readonly string[]).includes(id) ||
        typeof on !== 'boolean' ||
        switches.has(id)
      )
        throw badRequest(BAD_LABELS);
      switches.set(id, on);
    }
    labels = switches;
  }

  if (b.is_branded_content !== undefined) {
    if (typeof b.is_branded_content !== 'boolean')
      throw fieldError('is_branded_content', 'the value must be true or false');
    out.is_branded_content = b.is_branded_content;
  }
  return { fields: out, ...(labels ? { labels } : {}) };
}

/** `labels` (a channel's) with `switches` turned on or off, in the wire's order. */
const withLabels = (labels: readonly string[], switches: ReadonlyMap<string, boolean>): ContentLabel[] => {
  const set = new Set(labels);
  for (const [id, on] of switches)
    if (on) set.add(id);
    else set.delete(id);
  return orderedLabels(set);
};

const getParams = { broadcaster_id: stringList(MAX_CHANNELS) };
const modifyParams = { broadcaster_id: singleString };

export function channelInformationRoutes(app: FastifyInstance, ctx: AppContext): void {
  const channel = recordKind('channel');
  if (!channel) throw new Error('no channel record kind');
  registerOperations(app, ctx, [
    operation({
      path: '/channels',
      summary: 'Get Channel Information',
      description:
        "Channels by broadcaster id, at most 100: their title, game, language, tags, content classification labels and branded-content flag, kept when the stream goes offline. A user who never set them has a new account's channel (no title, no game, English); ids of no user are left out. `delay` is 0 unless the token is the broadcaster's own.",
      access: { token: 'any' },
      query: getParams,
      response: dataResponse(channelSchema),
      async handler(ctx, { query, principal }) {
        const ids = readNumericIds('broadcaster_id', query.broadcaster_id ?? []);
        if (ids.length === 0) throw badRequest('Missing required parameter "broadcaster_id"');
        const rows = await channelsOf(ctx.store.db, ids);
        return { data: rows.map((r) => toChannel(r, principal)) };
      },
    }),
    operation({
      method: 'PATCH',
      path: '/channels',
      summary: 'Modify Channel Information',
      description:
        "The token user's channel: the fields given change, the others stay. While live, the stream's title, game, language and tags change with it. Causes `channel.update` for EventSub subscribers when the title, language, game or labels change. Answers 204.",
      access: { token: 'user', anyScope: ['channel:manage:broadcast'] },
      query: modifyParams,
      body: modifyBody,
      status: 204,
      response: Type.Null(),
      errors: {
        403: 'The body sets the label MatureGame, which the platform sets from the game',
      },
      async handler(ctx, { query, principal, body }) {
        const me = tokenUser(principal);
        const broadcaster = readRequiredId('broadcaster_id', query.broadcaster_id);
        if (broadcaster !== me) throw unauthorized(NOT_THE_BROADCASTER);
        const [current] = await channelsOf(ctx.store.db, [me]);
        // A user token names a user that exists: a deleted user's tokens go with it.
        if (!current) throw new Error(`PATCH /channels: no user ${me} behind a live token`);
        // Checked before the transaction (a refusal changes nothing); the labels are laid over the
        // channel's as read inside it, so that no change made in between is lost.
        const { fields, labels } = readModify(body);
        if (fields.delay !== undefined && current.broadcaster_type !== 'partner')
          throw badRequest(DELAY_PARTNERS_ONLY);
        const patch = (record: Record<string, unknown>) =>
          labels
            ? {
                ...fields,
                content_classification_labels: withLabels(
                  record.content_classification_labels as string[],
                  labels,
                ),
              }
            : fields;
        const fresh = {
          broadcaster_id: String(me),
          title: '',
          game_id: '',
          broadcaster_language: NEW_CHANNEL.language,
        };
        try {
          // Through the one write path, in one transaction with the stream it changes and the
          // channel.update it causes.
          await patchRecord(ctx.store, channel, [me], patch, 'body', fresh);
        } catch (err) {
          if (err instanceof RecordError && err.field === 'game_id') {
            if (err.status === 404) throw badRequest(BAD_GAME);
            throw badRequest(
              'The field "game_id" may not remove the game while the channel is live: a live stream in helixd has a game',
            );
          }
          throw err;
        }
        return null;
      },
    }),
  ]);
}
