// The EventSub subscription types helixd serves: the ones its data can make true, each caused by a
// write the read API shows (docs/eventsub-design.md, section 1). Per type: its version, its
// condition's fields (all required; ids are strings of digits, as on the wire), the field whose
// value matches events (the key field), the field naming the user whose authorization the
// subscription rests on, the scopes any one of which that user must have granted, and the
// transports that may carry it. The subscriptions API checks requests against this table only.

export const TRANSPORTS = ['webhook', 'websocket'] as const;
export type Transport = (typeof TRANSPORTS)[number];

export interface EventType {
  type: string;
  version: string;
  /** the condition's fields, key field first; every one is required and no other is accepted */
  condition: readonly string[];
  /** the condition field (and value) events are matched on */
  keyField: string;
  /** the condition field naming the user whose authorization is needed (or makes it free) */
  authField: string | undefined;
  /** the scopes, any one of which the authorizing user must have granted; empty: none needed */
  scopes: readonly string[];
  transports: readonly Transport[];
  /** which write makes it (docs/eventsub.md) */
  cause: string;
}

const type = (
  t: Omit<EventType, 'keyField' | 'transports' | 'authField'> &
    Partial<Pick<EventType, 'transports' | 'authField'>>,
): EventType => ({
  transports: TRANSPORTS,
  ...t,
  keyField: t.condition[0] as string,
  authField: 'authField' in t ? t.authField : t.condition[0],
});

const broadcaster = ['broadcaster_user_id'] as const;
const SUBSCRIPTION_SCOPES = ['channel:read:subscriptions'] as const;
const MODERATOR_SCOPES = ['moderation:read', 'channel:manage:moderators'] as const;

export const EVENT_TYPES: readonly EventType[] = [
  type({
    type: 'stream.online',
    version: '1',
    condition: broadcaster,
    scopes: [],
    cause: 'a stream created',
  }),
  type({
    type: 'stream.offline',
    version: '1',
    condition: broadcaster,
    scopes: [],
    cause: 'a stream deleted',
  }),
  type({
    type: 'channel.follow',
    version: '2',
    condition: ['broadcaster_user_id', 'moderator_user_id'],
    authField: 'moderator_user_id',
    scopes: ['moderator:read:followers'],
    cause: 'a follow created',
  }),
  type({
    type: 'channel.subscribe',
    version: '1',
    condition: broadcaster,
    scopes: SUBSCRIPTION_SCOPES,
    cause: 'a subscription created',
  }),
  type({
    type: 'channel.subscription.end',
    version: '1',
    condition: broadcaster,
    scopes: SUBSCRIPTION_SCOPES,
    cause: 'a subscription deleted',
  }),
  type({
    type: 'channel.subscription.gift',
    version: '1',
    condition: broadcaster,
    scopes: SUBSCRIPTION_SCOPES,
    cause: 'gifted subscriptions created in one write',
  }),
  type({
    type: 'channel.moderator.add',
    version: '1',
    condition: broadcaster,
    scopes: MODERATOR_SCOPES,
    cause: 'a moderator created',
  }),
  type({
    type: 'channel.moderator.remove',
    version: '1',
    condition: broadcaster,
    scopes: MODERATOR_SCOPES,
    cause: 'a moderator deleted',
  }),
  type({
    type: 'channel.update',
    version: '2',
    condition: broadcaster,
    scopes: [],
    cause: "a channel's title, language, game or content classification labels changed",
  }),
  type({
    type: 'user.update',
    version: '1',
    condition: ['user_id'],
    scopes: [],
    cause: "a user's login, display name, description or email changed",
  }),
  type({
    type: 'user.authorization.revoke',
    version: '1',
    condition: ['client_id'],
    authField: undefined,
    scopes: [],
    transports: ['webhook'],
    cause: "a user's last token of the client revoked",
  }),
];

const BY_TYPE = new Map(EVENT_TYPES.map((t) => [t.type, t]));

/** The served type of this name, or undefined. */
export const eventType = (name: string): EventType | undefined => BY_TYPE.get(name);

/** What an event of `type` whose key field holds `value` is matched on, and a subscription stores. */
export const matchKey = (type: string, value: string | number): string => `${type}:${value}`;
