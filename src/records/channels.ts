// A live stream and its channel, kept alike by the write path (src/records/write.ts): a stream holds
// its channel's title, game, language and tags, as on the platform, where they are one setting. A
// stream written without them takes the channel's (a stream that goes live); a stream written with
// them gives them to the channel (a broadcaster who sets them while going live); a channel written
// while its user is live gives them to the stream (PATCH /channels, or an admin write). Each side
// writes the other only where they differ, so a write never loops, and the second write goes through
// the same path, with its checks and its events (`channel.update`).
import type { Transaction } from 'kysely';
import type { Dialect } from '../store/db.ts';
import { type AnyRow, rowsWhereIn } from '../store/records.ts';
import type { ChannelsTable, Database } from '../store/schema.ts';
import { type RecordKind, recordKind } from './kinds.ts';

const kindOf = (name: string) => recordKind(name) as RecordKind;

/** The columns a live stream holds of its channel: the same names in both tables. */
export const HELD_COLUMNS = ['title', 'game_id', 'language', 'tags'] as const;

/**
 * The channel of a user with no channel record: a new account's (no title, no game, no tags, no
 * labels, no delay), in English, the platform's language for an account that set none.
 */
export const NEW_CHANNEL: Omit<ChannelsTable, 'broadcaster_id'> = {
  title: '',
  game_id: null,
  language: 'en',
  delay: 0,
  tags: '[]',
  labels: '[]',
  is_branded_content: 0,
};

const CHANNEL_COLUMNS = ['broadcaster_id', ...Object.keys(NEW_CHANNEL)];

/** The rows of `table` whose `column` names one of these users, by user (one row per user at most). */
async function rowsByUser(
  trx: Transaction<Database>,
  dialect: Dialect,
  table: 'channels' | 'streams',
  column: string,
  userIds: readonly number[],
  select: readonly string[],
): Promise<Map<number, AnyRow>> {
  const rows = await rowsWhereIn(trx, dialect, table, column, [...new Set(userIds)], select);
  return new Map(rows.map((r) => [Number(r[column]), r]));
}

/** The channel rows of these users that exist, by user. */
export const channelRows = (trx: Transaction<Database>, dialect: Dialect, userIds: readonly number[]) =>
  rowsByUser(trx, dialect, 'channels', 'broadcaster_id', userIds, CHANNEL_COLUMNS);

/** A channel's values: its row, or a new account's. */
export const channelOf = (rows: ReadonlyMap<number, AnyRow>, userId: number): AnyRow =>
  rows.get(userId) ?? { broadcaster_id: userId, ...NEW_CHANNEL };

/**
 * Fills in the held columns a stream row left null (the record left them out) from its channel.
 * Returns the index of the first row whose channel has no game to give, or -1.
 */
export function fillFromChannels(streams: AnyRow[], channels: ReadonlyMap<number, AnyRow>): number {
  for (const [i, s] of streams.entries()) {
    const c = channelOf(channels, Number(s.user_id));
    for (const col of HELD_COLUMNS) if (s[col] === null) s[col] = c[col];
    if (s.game_id === null) return i;
  }
  return -1;
}

const differs = (a: AnyRow, b: AnyRow) => HELD_COLUMNS.some((c) => String(a[c]) !== String(b[c]));

/**
 * The channel records to write so that each channel holds its live stream's values: one per
 * stream row whose channel differs (or has no record yet), the channel's other fields kept.
 */
export function channelsToFollow(
  streams: readonly AnyRow[],
  channels: ReadonlyMap<number, AnyRow>,
): object[] {
  const out: object[] = [];
  for (const s of streams) {
    const c = channelOf(channels, Number(s.user_id));
    if (channels.has(Number(s.user_id)) && !differs(s, c)) continue;
    out.push(
      kindOf('channel').fromRow({
        ...c,
        broadcaster_id: s.user_id,
        ...Object.fromEntries(HELD_COLUMNS.map((k) => [k, s[k]])),
      }),
    );
  }
  return out;
}

/** The live streams of these channels' users, by user. */
export const liveStreamRows = (trx: Transaction<Database>, dialect: Dialect, userIds: readonly number[]) =>
  rowsByUser(trx, dialect, 'streams', 'user_id', userIds, [
    'id',
    'user_id',
    'game_id',
    'title',
    'tags',
    'viewer_count',
    'started_at',
    'language',
    'is_mature',
  ]);

/**
 * The stream records to write so that each live stream holds its channel's values: one per
 * channel row whose user is live and whose stream differs. A channel with no game whose user is
 * live is returned by index in `gameless` (a live stream has a game in helixd).
 */
export function streamsToFollow(
  channels: readonly AnyRow[],
  streams: ReadonlyMap<number, AnyRow>,
): { records: object[]; gameless: number } {
  const records: object[] = [];
  for (const [i, c] of channels.entries()) {
    const s = streams.get(Number(c.broadcaster_id));
    if (!s || !differs(s, c)) continue;
    if (c.game_id === null) return { records, gameless: i };
    records.push(
      kindOf('stream').fromRow({ ...s, ...Object.fromEntries(HELD_COLUMNS.map((k) => [k, c[k]])) }),
    );
  }
  return { records, gameless: -1 };
}
