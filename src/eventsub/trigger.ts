// Events on demand, for tests (`helixd event trigger`, POST /admin/eventsub/trigger): a trigger
// makes its event by WRITING THE CHANGE that causes it, through the records' write path, so the
// read API agrees with what subscribers receive (a channel.follow trigger writes a follow, which
// GET /channels/followers then lists). What the caller leaves out is drawn: the user of a follow,
// subscription or moderator (one not already so), the game and id of a stream.
import { randomInt, randomUUID } from 'node:crypto';
import { HelixError } from '../http/errors.ts';
import { NEW_CHANNEL } from '../records/channels.ts';
import { MAX_STREAM_TITLE, type RecordKind, recordKind } from '../records/kinds.ts';
import { deleteRecord, readRecord, writeRecords } from '../records/write.ts';
import type { Store } from '../store/db.ts';
import { TIERS } from '../store/schema.ts';
import { drawGame, drawRelatedUser, drawUnrelatedUsers, streamOf } from '../store/triggers.ts';
import { rfc3339 } from '../wire/datetime.ts';
import { EVENT_TYPES } from './types.ts';

/** The types a trigger makes: every served type but user.authorization.revoke (revoke a token). */
export const TRIGGER_TYPES = EVENT_TYPES.map((t) => t.type).filter((t) => t !== 'user.authorization.revoke');

export interface TriggerInput {
  type: string;
  /** the channel (every channel.* and stream.* type) */
  broadcaster_id?: string;
  /** the follower, subscriber, moderator, or the user updated; drawn when left out */
  user_id?: string;
  /** a subscription's or gift's tier; default 1000 */
  tier?: string;
  /** channel.subscription.gift: the giver (left out: an anonymous gift) and how many */
  gifter_id?: string;
  count?: number;
  /** user.update: the new description; default a new one each time (so the user does change) */
  description?: string;
  /** channel.update: the new title; default a new one each time (so the channel does change) */
  title?: string;
}

export interface TriggerResult {
  type: string;
  /** what was written (records, as the admin API echoes them) or deleted (kind and key) */
  written: { kind: string; data: object }[];
  deleted: { kind: string; key: string[] }[];
}

/** A trigger that cannot be made: a 400 (or 404: nothing to change) naming the field and the rule. */
const refuse = (field: string, rule: string, status: 400 | 404 = 400) =>
  new HelixError(status, `${field}: ${rule}`);

const kind = (name: string) => recordKind(name) as RecordKind;

function id(input: TriggerInput, field: 'broadcaster_id' | 'user_id' | 'gifter_id'): number | undefined {
  const v = input[field];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^[1-9]\d{0,15}$/.test(v))
    throw refuse(field, 'must be a numeric id (a string)');
  return Number(v);
}

const TRIGGER_FIELDS = [
  'type',
  'broadcaster_id',
  'user_id',
  'tier',
  'gifter_id',
  'count',
  'description',
  'title',
];

/** Checks a trigger's input (a parsed body or the command's options): a 400 naming the field, else the input. */
export function triggerInput(body: unknown): TriggerInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw refuse(
      'body',
      'must be a JSON object such as {"type": "channel.follow", "broadcaster_id": "1234"}',
    );
  const extra = Object.keys(body).find((k) => !TRIGGER_FIELDS.includes(k));
  if (extra !== undefined) throw refuse(extra, `is not a field of a trigger (${TRIGGER_FIELDS.join(', ')})`);
  const input = body as TriggerInput;
  if (typeof input.type !== 'string' || !TRIGGER_TYPES.includes(input.type))
    throw refuse('type', `must be one of ${TRIGGER_TYPES.join(', ')}`);
  if (input.tier !== undefined && !(TIERS as readonly unknown[]).includes(input.tier))
    throw refuse('tier', `must be one of ${TIERS.join(', ')}`);
  if (input.count !== undefined && !(Number.isInteger(input.count) && input.count >= 1 && input.count <= 100))
    throw refuse('count', 'must be a whole number from 1 to 100');
  if (
    input.description !== undefined &&
    (typeof input.description !== 'string' || input.description.length > 300)
  )
    throw refuse('description', 'must be a string of at most 300 characters');
  if (
    input.title !== undefined &&
    (typeof input.title !== 'string' || input.title === '' || [...input.title].length > MAX_STREAM_TITLE)
  )
    throw refuse('title', `must be a string of 1 to ${MAX_STREAM_TITLE} characters`);
  for (const f of ['broadcaster_id', 'user_id', 'gifter_id'] as const) id(input, f);
  return input;
}

/**
 * Makes the event `input.type` by writing its change at `now` (Unix seconds). Refused as the write
 * path refuses (a user that does not exist: 404; a follow that exists: 409), or when there is
 * nothing to change (no stream to end: 404).
 */
export async function trigger(store: Store, input: TriggerInput, now: number): Promise<TriggerResult> {
  const db = store.db;
  const at = rfc3339(now);
  const result: TriggerResult = { type: input.type, written: [], deleted: [] };
  const write = async (name: string, records: object[]) => {
    const data = await writeRecords(
      store,
      records.map((d, i) => ({ kind: name, data: d, where: `trigger[${i}]` })),
      { mode: 'create', echo: true },
    );
    for (const d of data) result.written.push({ kind: name, data: d });
  };
  const remove = async (name: string, key: number[]) => {
    await deleteRecord(store, kind(name), key, 'trigger');
    result.deleted.push({ kind: name, key: key.map(String) });
  };
  const needBroadcaster = (): number => {
    const b = id(input, 'broadcaster_id');
    if (b === undefined) throw refuse('broadcaster_id', `is required for ${input.type}`);
    return b;
  };
  const newUsers = async (table: 'follows' | 'subscriptions' | 'moderators', b: number, n: number) => {
    const given = id(input, 'user_id');
    if (given !== undefined) return [given];
    const drawn = await drawUnrelatedUsers(db, table, b, n);
    if (drawn.length < n)
      throw refuse('user_id', `no user is left to add to ${table} of ${b}: name one`, 404);
    return drawn;
  };
  const oldUser = async (table: 'subscriptions' | 'moderators', b: number) => {
    const given = id(input, 'user_id');
    const u = given ?? (await drawRelatedUser(db, table, b));
    if (u === undefined) throw refuse('user_id', `${b} has no ${table} to remove`, 404);
    return u;
  };
  const tier = input.tier ?? '1000';
  switch (input.type) {
    case 'stream.online': {
      const b = needBroadcaster();
      // The stream takes its channel's title, game, language and tags; a game only when the
      // channel has none to give.
      const channel = (await readRecord(store, kind('channel'), [b])) as { game_id: string } | undefined;
      const game = channel?.game_id ? undefined : await drawGame(db);
      if (!channel?.game_id && game === undefined)
        throw refuse('game', 'the store holds no game for the stream to play', 404);
      await write('stream', [
        {
          id: String(randomInt(100_000_000_000, 999_999_999_999)),
          user_id: String(b),
          ...(game === undefined ? {} : { game_id: String(game) }),
          viewer_count: 0,
          started_at: at,
          is_mature: false,
        },
      ]);
      break;
    }
    case 'channel.update': {
      const b = needBroadcaster();
      const channel = await readRecord(store, kind('channel'), [b]);
      const data = await writeRecords(
        store,
        [
          {
            kind: 'channel',
            data: {
              ...(channel ?? { game_id: '', broadcaster_language: NEW_CHANNEL.language }),
              broadcaster_id: String(b),
              title: input.title ?? `Triggered at ${at} (${randomUUID().slice(0, 8)})`,
            },
            where: 'trigger',
          },
        ],
        { mode: 'upsert', echo: true },
      );
      for (const d of data) result.written.push({ kind: 'channel', data: d });
      break;
    }
    case 'stream.offline': {
      const b = needBroadcaster();
      const stream = await streamOf(db, b);
      if (stream === undefined) throw refuse('broadcaster_id', `${b} is not live`, 404);
      await remove('stream', [stream]);
      break;
    }
    case 'channel.follow': {
      const b = needBroadcaster();
      const [u] = await newUsers('follows', b, 1);
      await write('follow', [{ broadcaster_id: String(b), user_id: String(u), followed_at: at }]);
      break;
    }
    case 'channel.subscribe':
    case 'channel.subscription.gift': {
      const b = needBroadcaster();
      const gift = input.type === 'channel.subscription.gift';
      const gifter = gift ? id(input, 'gifter_id') : undefined;
      const users = await newUsers('subscriptions', b, gift ? (input.count ?? 1) : 1);
      await write(
        'subscription',
        users.map((u) => ({
          broadcaster_id: String(b),
          user_id: String(u),
          tier,
          plan_name: `Tier ${tier[0]}`,
          is_gift: gift,
          gifter_id: gifter === undefined ? '' : String(gifter),
          created_at: at,
        })),
      );
      break;
    }
    case 'channel.subscription.end': {
      const b = needBroadcaster();
      await remove('subscription', [b, await oldUser('subscriptions', b)]);
      break;
    }
    case 'channel.moderator.add': {
      const b = needBroadcaster();
      const [u] = await newUsers('moderators', b, 1);
      await write('moderator', [{ broadcaster_id: String(b), user_id: String(u), created_at: at }]);
      break;
    }
    case 'channel.moderator.remove': {
      const b = needBroadcaster();
      await remove('moderator', [b, await oldUser('moderators', b)]);
      break;
    }
    case 'user.update': {
      const u = id(input, 'user_id');
      if (u === undefined) throw refuse('user_id', 'is required for user.update');
      const user = await readRecord(store, kind('user'), [u]);
      if (!user) throw refuse('user_id', `no user has this id (${u})`, 404);
      const data = await writeRecords(
        store,
        [
          {
            kind: 'user',
            data: {
              ...user,
              description: input.description ?? `Triggered at ${at} (${randomUUID().slice(0, 8)})`,
            },
            where: 'trigger',
          },
        ],
        { mode: 'replace', echo: true },
      );
      for (const d of data) result.written.push({ kind: 'user', data: d });
      break;
    }
  }
  return result;
}
