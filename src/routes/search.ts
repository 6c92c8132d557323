// GET /search/categories and GET /search/channels: games and channels whose name starts with the
// query, from the search keys of migration 018 (docs/api.md, "Search": what matches, in what
// order, and why).

import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { badRequest } from '../http/errors.ts';
import { registerOperation } from '../http/operation.ts';
import {
  booleanParam,
  cursorParam,
  firstParam,
  listResponse,
  refuseBefore,
  singleString,
  withDefault,
} from '../http/params.ts';
import { NEW_CHANNEL } from '../records/channels.ts';
import {
  type CategoryMatch,
  type ChannelMatch,
  categorySearchKey,
  channelSearchKey,
  searchCategories,
  searchChannels,
} from '../store/search.ts';
import { rfc3339 } from '../wire/datetime.ts';
import type { Links } from '../wire/links.ts';

/** Production answers a category's box art at this one size in a search, not as a template. */
const BOX_ART_WIDTH = 52;
const BOX_ART_HEIGHT = 72;

/** A category found, in production's field order (box art first). */
const categorySchema = Type.Object({
  box_art_url: Type.String({ description: 'The box art at 52x72 (no placeholders, as production answers)' }),
  name: Type.String(),
  id: Type.String(),
});
type Category = Static<typeof categorySchema>;

const toCategory = (r: CategoryMatch, links: Links): Category => ({
  box_art_url: links.boxArtAt(r.game_id, BOX_ART_WIDTH, BOX_ART_HEIGHT),
  name: r.name,
  id: String(r.game_id),
});

/** A channel found, in production's field order. */
const channelSchema = Type.Object({
  broadcaster_language: Type.String({ description: "The channel's language (en for a channel never set)" }),
  broadcaster_login: Type.String(),
  display_name: Type.String(),
  game_id: Type.String({ description: 'The channel\'s game, kept while offline; "" for none' }),
  game_name: Type.String({ description: 'Its name; "" for none' }),
  id: Type.String(),
  is_live: Type.Boolean(),
  tag_ids: Type.Array(Type.String(), {
    maxItems: 0,
    description: 'Always empty: Helix replaced the platform tag ids with `tags`',
  }),
  tags: Type.Array(Type.String(), { description: "The channel's tags, kept while offline" }),
  thumbnail_url: Type.String({ description: "The channel's profile picture (300x300)" }),
  title: Type.String({ description: 'The channel\'s title, kept while offline; "" for none' }),
  started_at: Type.String({ description: 'When the live stream started (RFC 3339); "" while offline' }),
});
type Channel = Static<typeof channelSchema>;

function toChannel(r: ChannelMatch, links: Links): Channel {
  const live = r.stream_id !== null;
  return {
    broadcaster_language: r.language ?? NEW_CHANNEL.language,
    broadcaster_login: r.login,
    display_name: r.display_name,
    game_id: r.game_id === null ? '' : String(r.game_id),
    game_name: r.game_name ?? '',
    id: String(r.user_id),
    is_live: live,
    // Helix deprecated the platform tag ids for `tags` and answers an empty list
    tag_ids: [],
    tags: JSON.parse(r.tags ?? NEW_CHANNEL.tags) as string[],
    thumbnail_url: links.profileImage(r.user_id),
    title: r.title ?? NEW_CHANNEL.title,
    started_at: r.started_at === null ? '' : rfc3339(r.started_at),
  };
}

const searchParams = {
  query: singleString,
  first: firstParam,
  after: cursorParam,
  before: cursorParam,
};

/** The query, required: missing or empty is a 400 naming it. */
function readQuery(value: string | undefined): string {
  if (value === undefined || value === '') throw badRequest('Missing required parameter "query"');
  return value;
}

export function searchRoutes(app: FastifyInstance, ctx: AppContext): void {
  registerOperation(app, ctx, {
    path: '/search/categories',
    summary: 'Search Categories',
    description:
      'Games whose name, or a word of it onwards, starts with the query (ASCII letters in any case), by the matched text, then id.',
    access: { token: 'any' },
    query: searchParams,
    response: listResponse(categorySchema),
    async handler(ctx, { query, pages }) {
      const prefix = categorySearchKey(readQuery(query.query));
      refuseBefore(query);
      const paging = pages.read(query, { query: prefix });
      const page = await searchCategories(ctx.store.db, prefix, paging);
      return {
        data: page.rows.map((r) => toCategory(r, ctx.links)),
        pagination: pages.pagination(paging, page),
      };
    },
  });

  registerOperation(app, ctx, {
    path: '/search/channels',
    summary: 'Search Channels',
    description:
      'Channels whose login or display name starts with the query (ASCII letters in any case, spaces and "_" ignored), by the matched name, then id; live or not, or live only.',
    access: { token: 'any' },
    query: { ...searchParams, live_only: withDefault(booleanParam, false) },
    response: listResponse(channelSchema),
    async handler(ctx, { query, pages }) {
      const prefix = channelSearchKey(readQuery(query.query));
      refuseBefore(query);
      const paging = pages.read(query, { query: prefix, live_only: query.live_only });
      const page = await searchChannels(ctx.store.db, prefix, query.live_only, paging);
      return {
        data: page.rows.map((r) => toChannel(r, ctx.links)),
        pagination: pages.pagination(paging, page),
      };
    },
  });
}
