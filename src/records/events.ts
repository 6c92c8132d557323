// Which write of records makes which EventSub event (docs/eventsub.md, "What causes each event"):
// the write path (write.ts) hands each run it wrote, and each record it deleted, here, and records
// what comes back in the same transaction (src/store/events.ts). Only new keys make events: a
// stream created is `stream.online`, an upsert of a live stream's viewer count is nothing. Names in
// payloads (`*_user_login`, `*_user_name`) are the users' as of the write, read in its transaction,
// and times are the rows' own, so a notification agrees with what the read API shows.
import type { Transaction } from 'kysely';
import { matchKey } from '../eventsub/types.ts';
import type { Dialect } from '../store/db.ts';
import type { NewEvent } from '../store/events.ts';
import { type AnyRow, rowsWhereIn } from '../store/records.ts';
import type { Database } from '../store/schema.ts';
import { giftedCount } from '../store/subscriptions.ts';
import { rfc3339 } from '../wire/datetime.ts';
import { NEW_CHANNEL } from './channels.ts';

/** The record kinds whose writes make events. */
export const EVENT_KINDS: ReadonlySet<string> = new Set([
  'stream',
  'follow',
  'subscription',
  'moderator',
  'user',
  'channel',
]);

/** The channel fields whose change is a `channel.update` (the ones its payload shows). */
export const CHANNEL_UPDATE_COLUMNS = ['title', 'language', 'game_id', 'labels'] as const;

/** The user fields whose change is a `user.update`. */
export const USER_UPDATE_COLUMNS = ['login', 'display_name', 'description', 'email'] as const;

type Names = ReadonlyMap<number, { login: string; display_name: string }>;

async function namesOf(
  trx: Transaction<Database>,
  dialect: Dialect,
  ids: Iterable<number | null>,
): Promise<Names> {
  const wanted = [...new Set([...ids].filter((id): id is number => id !== null))];
  const rows = await rowsWhereIn(trx, dialect, 'users', 'id', wanted, ['id', 'login', 'display_name']);
  return new Map(rows.map((r) => [Number(r.id), { login: r.login, display_name: r.display_name }]));
}

/** `<prefix>user_id`, `<prefix>user_login`, `<prefix>user_name` of user `id` (nulls for none). */
function userFields(prefix: string, id: number | null, names: Names): Record<string, string | null> {
  const n = id === null ? undefined : names.get(id);
  return {
    [`${prefix}user_id`]: id === null ? null : String(id),
    [`${prefix}user_login`]: n?.login ?? null,
    [`${prefix}user_name`]: n?.display_name ?? null,
  };
}

const event = (type: string, key: number | string, payload: object): NewEvent => ({
  kind: 'event',
  type,
  match_key: matchKey(type, key),
  payload: JSON.stringify(payload),
});

function subscribeEvent(type: string, row: AnyRow, names: Names): NewEvent {
  return event(type, row.broadcaster_id, {
    ...userFields('', row.user_id, names),
    ...userFields('broadcaster_', row.broadcaster_id, names),
    tier: row.tier,
    is_gift: row.is_gift === 1,
  });
}

/**
 * The events of rows of `kind` just written, in the rows' order: `created[i]` says whether row i's
 * key is new. For users, `before` holds the earlier values of the rows that existed.
 */
export async function eventsOfWrite(
  trx: Transaction<Database>,
  dialect: Dialect,
  kind: string,
  rows: readonly AnyRow[],
  created: readonly boolean[],
  before?: ReadonlyMap<number, AnyRow>,
): Promise<NewEvent[]> {
  if (kind === 'user') return userUpdates(rows, before);
  if (kind === 'channel') return channelUpdates(trx, dialect, rows, before);
  const fresh = rows.filter((_, i) => created[i]);
  if (fresh.length === 0) return [];
  switch (kind) {
    case 'stream': {
      const names = await namesOf(
        trx,
        dialect,
        fresh.map((r) => r.user_id),
      );
      return fresh.map((r) =>
        event('stream.online', r.user_id, {
          id: String(r.id),
          ...userFields('broadcaster_', r.user_id, names),
          type: 'live',
          started_at: rfc3339(r.started_at),
        }),
      );
    }
    case 'follow': {
      const names = await namesOf(
        trx,
        dialect,
        fresh.flatMap((r) => [r.from_id, r.to_id]),
      );
      return fresh.map((r) =>
        event('channel.follow', r.to_id, {
          ...userFields('', r.from_id, names),
          ...userFields('broadcaster_', r.to_id, names),
          followed_at: rfc3339(r.followed_at),
        }),
      );
    }
    case 'moderator': {
      const names = await namesOf(
        trx,
        dialect,
        fresh.flatMap((r) => [r.broadcaster_id, r.user_id]),
      );
      return fresh.map((r) => moderatorEvent('channel.moderator.add', r, names));
    }
    case 'subscription':
      return subscriptionEvents(trx, dialect, fresh);
    default:
      return [];
  }
}

function moderatorEvent(type: string, row: AnyRow, names: Names): NewEvent {
  return event(type, row.broadcaster_id, {
    ...userFields('broadcaster_', row.broadcaster_id, names),
    ...userFields('', row.user_id, names),
  });
}

/**
 * New subscriptions: per (broadcaster, gifter, tier) of the gifted ones, a `channel.subscription.gift`
 * first (`total` the write's count, `cumulative_total` counted in the store; an anonymous gift,
 * with no gifter, has neither user nor cumulative total), then a `channel.subscribe` per row.
 */
async function subscriptionEvents(
  trx: Transaction<Database>,
  dialect: Dialect,
  rows: readonly AnyRow[],
): Promise<NewEvent[]> {
  const names = await namesOf(
    trx,
    dialect,
    rows.flatMap((r) => [r.broadcaster_id, r.user_id, r.gifter_id]),
  );
  const gifts = new Map<string, { row: AnyRow; total: number }>();
  for (const r of rows) {
    if (r.is_gift !== 1) continue;
    const k = `${r.broadcaster_id}/${r.gifter_id}/${r.tier}`;
    const g = gifts.get(k);
    if (g) g.total++;
    else gifts.set(k, { row: r, total: 1 });
  }
  const out: NewEvent[] = [];
  for (const { row, total } of gifts.values()) {
    const anonymous = row.gifter_id === null;
    out.push(
      event('channel.subscription.gift', row.broadcaster_id, {
        ...userFields('', anonymous ? null : row.gifter_id, names),
        ...userFields('broadcaster_', row.broadcaster_id, names),
        total,
        tier: row.tier,
        cumulative_total: anonymous ? null : await giftedCount(trx, row.broadcaster_id, row.gifter_id),
        is_anonymous: anonymous,
      }),
    );
  }
  for (const r of rows) out.push(subscribeEvent('channel.subscribe', r, names));
  return out;
}

/**
 * `user.update` for each user whose login, display name, description or email changed. The email is
 * kept in the payload; delivery blanks it for a subscriber not granted `user:read:email`.
 */
function userUpdates(rows: readonly AnyRow[], before: ReadonlyMap<number, AnyRow> | undefined): NewEvent[] {
  const out: NewEvent[] = [];
  for (const r of rows) {
    const old = before?.get(Number(r.id));
    if (!old || USER_UPDATE_COLUMNS.every((c) => old[c] === r[c])) continue;
    out.push(
      event('user.update', r.id, {
        user_id: String(r.id),
        user_login: r.login,
        user_name: r.display_name,
        email: r.email,
        email_verified: r.email !== '',
        description: r.description,
      }),
    );
  }
  return out;
}

/**
 * `channel.update` (version 2) for each channel whose title, language, game or labels changed; a
 * channel written for the first time changed from a new account's (NEW_CHANNEL). The game's name
 * is read in the write's transaction, as the users' are.
 */
async function channelUpdates(
  trx: Transaction<Database>,
  dialect: Dialect,
  rows: readonly AnyRow[],
  before: ReadonlyMap<number, AnyRow> | undefined,
): Promise<NewEvent[]> {
  const changed = rows.filter((r) => {
    const old = before?.get(Number(r.broadcaster_id)) ?? NEW_CHANNEL;
    return CHANNEL_UPDATE_COLUMNS.some((c) => String(old[c as keyof typeof old]) !== String(r[c]));
  });
  if (changed.length === 0) return [];
  const names = await namesOf(
    trx,
    dialect,
    changed.map((r) => r.broadcaster_id),
  );
  const gameIds = [...new Set(changed.map((r) => r.game_id).filter((g) => g !== null))];
  const games = new Map(
    (await rowsWhereIn(trx, dialect, 'games', 'id', gameIds, ['id', 'name'])).map((g) => [
      Number(g.id),
      g.name,
    ]),
  );
  return changed.map((r) =>
    event('channel.update', r.broadcaster_id, {
      ...userFields('broadcaster_', r.broadcaster_id, names),
      title: r.title,
      language: r.language,
      category_id: r.game_id === null ? '' : String(r.game_id),
      category_name: r.game_id === null ? '' : (games.get(Number(r.game_id)) ?? ''),
      content_classification_labels: JSON.parse(r.labels) as string[],
    }),
  );
}

/** The event of deleting `row` of `kind` (read before the delete), if any. */
export async function eventsOfDelete(
  trx: Transaction<Database>,
  dialect: Dialect,
  kind: string,
  row: AnyRow,
): Promise<NewEvent[]> {
  switch (kind) {
    case 'stream': {
      const names = await namesOf(trx, dialect, [row.user_id]);
      return [event('stream.offline', row.user_id, userFields('broadcaster_', row.user_id, names))];
    }
    case 'subscription': {
      const names = await namesOf(trx, dialect, [row.broadcaster_id, row.user_id]);
      return [subscribeEvent('channel.subscription.end', row, names)];
    }
    case 'moderator': {
      const names = await namesOf(trx, dialect, [row.broadcaster_id, row.user_id]);
      return [moderatorEvent('channel.moderator.remove', row, names)];
    }
    default:
      return [];
  }
}
