// The rules of the EventSub subscriptions API (docs/eventsub-design.md, section 2): what a request
// to create one must say, who may create it (the 403, judged from helixd's own tokens), what it
// costs and which limits hold, and which ones a token may list and delete. The checks read and
// write through src/store/eventsub-subscriptions.ts; the routes are src/routes/eventsub/.
import { randomUUID } from 'node:crypto';
import { nowSeconds } from '../clock.ts';
import type { AppContext } from '../context.ts';
import type { Principal } from '../http/access.ts';
import { badRequest, forbidden, HelixError, notFound } from '../http/errors.ts';
import { eventsCommitted, lastEventId, lockEvents, recordEvents } from '../store/events.ts';
import {
  bindSession,
  countSubscriptions,
  deleteSubscription,
  type EventsubSubscriptionRow,
  existingUsers,
  insertSubscription,
  liveCost,
  liveGrants,
  type SubscriptionFilter,
  type SubscriptionOwner,
  sessionById,
  sessionSubscriptionCount,
  sessionsOf,
  subscriptionById,
  subscriptionControl,
} from '../store/eventsub-subscriptions.ts';
import { isModerator } from '../store/moderators.ts';
import { isUniqueViolation } from '../store/records.ts';
import { unstorableText } from '../store/text.ts';
import { queueMessage } from '../store/webhook-deliveries.ts';
import { parseNumericId } from '../wire/ids.ts';
import { EVENT_TYPES, type EventType, eventType, matchKey, TRANSPORTS, type Transport } from './types.ts';
import { newChallenge } from './webhooks.ts';

/** Helix's limits (docs/eventsub-design.md, "Costs and limits"). */
export const LIMITS = {
  webhookMaxTotalCost: 10_000,
  websocketMaxTotalCost: 10,
  subscriptionsPerSession: 300,
  sessionsPerUser: 3,
} as const;

/** The statuses a subscription may have (Helix's). */
export const SUBSCRIPTION_STATUSES = [
  'enabled',
  'webhook_callback_verification_pending',
  'webhook_callback_verification_failed',
  'notification_failures_exceeded',
  'authorization_revoked',
  'moderator_removed',
  'user_removed',
  'version_removed',
  'websocket_disconnected',
  'websocket_failed_ping_pong',
  'websocket_received_inbound_traffic',
  'websocket_connection_unused',
  'websocket_internal_error',
  'websocket_network_timeout',
  'websocket_network_error',
  'websocket_failed_to_reconnect',
] as const;

const MISSING_AUTHORIZATION = 'subscription missing proper authorization';
const MAX_CALLBACK = 2048;
/** Helix: the secret is 10 to 100 ASCII characters. */
const SECRET = /^[\x21-\x7e]{10,100}$/;

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A field of the body that must be a string: its value, or a 400 naming it. */
function stringField(o: Json, name: string, where: string): string {
  const v = o[name];
  if (v === undefined) throw badRequest(`Missing required field "${where}${name}"`);
  if (typeof v !== 'string') throw badRequest(`The field "${where}${name}" must be a string`);
  const rule = unstorableText(v);
  if (rule !== undefined) throw badRequest(`The field "${where}${name}" was malformed: the value ${rule}`);
  return v;
}

/** No field but `allowed` in `o`, or a 400 naming the first other one. */
function onlyFields(o: Json, allowed: readonly string[], where: string): void {
  const found = Object.keys(o).find((k) => !allowed.includes(k));
  // A field's name is quoted back, cut short: it is the client's text, of any length.
  const extra = found !== undefined && found.length > 100 ? `${found.slice(0, 100)}...` : found;
  if (extra !== undefined)
    throw badRequest(
      `The field "${where}${extra}" is not accepted here (accepted: ${allowed.map((f) => `"${where}${f}"`).join(', ')})`,
    );
}

/** What a create request asks for, checked field by field. */
interface Request {
  type: EventType;
  /** canonical: the type's fields in the catalogue's order */
  condition: Record<string, string>;
  transport:
    | { method: 'webhook'; callback: string; secret: string }
    | { method: 'websocket'; session_id: string };
}

/** The body of POST /eventsub/subscriptions, or a 400 naming the field and the rule. */
export function readRequest(body: unknown, production: boolean): Request {
  if (!isObject(body))
    throw badRequest(
      'The body must be a JSON object {"type", "version", "condition", "transport"} (Content-Type: application/json)',
    );
  onlyFields(body, ['type', 'version', 'condition', 'transport'], '');
  const name = stringField(body, 'type', '');
  const type = eventType(name);
  if (!type)
    throw badRequest(
      `The field "type" names a subscription type that is not served: the served ones are ${EVENT_TYPES.map((t) => t.type).join(', ')}`,
    );
  const version = stringField(body, 'version', '');
  if (version !== type.version)
    throw badRequest(
      `The combination of values in the version and type fields is not valid: "${type.type}" is served in version "${type.version}"`,
    );
  const cond = body.condition;
  if (cond === undefined) throw badRequest('Missing required field "condition"');
  if (!isObject(cond)) throw badRequest('The field "condition" must be an object');
  onlyFields(cond, type.condition, 'condition.');
  const condition: Record<string, string> = {};
  for (const field of type.condition) {
    const v = stringField(cond, field, 'condition.');
    if (field !== 'client_id' && parseNumericId(v) === undefined)
      throw badRequest(`The field "condition.${field}" must be a user id: a string of digits`);
    if (field === 'client_id' && v === '')
      throw badRequest('The field "condition.client_id" must not be empty');
    condition[field] = v;
  }
  const t = body.transport;
  if (t === undefined) throw badRequest('Missing required field "transport"');
  if (!isObject(t)) throw badRequest('The field "transport" must be an object');
  const method = stringField(t, 'method', 'transport.');
  if (!(TRANSPORTS as readonly string[]).includes(method))
    throw badRequest(
      `The value specified in the field "transport.method" is not valid: it must be ${TRANSPORTS.join(' or ')}`,
    );
  if (!type.transports.includes(method as Transport))
    throw badRequest(
      `The field "transport.method": "${type.type}" is served over ${type.transports.join(' and ')} only`,
    );
  if (method === 'websocket') {
    onlyFields(t, ['method', 'session_id'], 'transport.');
    const sessionId = stringField(t, 'session_id', 'transport.');
    return { type, condition, transport: { method: 'websocket', session_id: sessionId } };
  }
  onlyFields(t, ['method', 'callback', 'secret'], 'transport.');
  const callback = stringField(t, 'callback', 'transport.');
  let url: URL | undefined;
  try {
    url = callback.length <= MAX_CALLBACK ? new URL(callback) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol))
    throw badRequest(
      `The field "transport.callback" must be an absolute http(s) URL of at most ${MAX_CALLBACK} characters`,
    );
  // A plain callback would carry the signatures and user data in clear (design, "Verification").
  if (production && url.protocol !== 'https:')
    throw badRequest('The field "transport.callback" must be an https URL (the production profile)');
  const secret = stringField(t, 'secret', 'transport.');
  if (!SECRET.test(secret))
    throw badRequest('The field "transport.secret" must be 10 to 100 printable ASCII characters');
  return { type, condition, transport: { method: 'webhook', callback, secret } };
}

/** The one of the type's scopes any grant carries. */
const grants = (scopeLists: readonly (readonly string[])[], scopes: readonly string[]) =>
  scopeLists.some((list) => scopes.some((s) => list.includes(s)));

/** What POST answers besides the subscription. */
export interface Totals {
  total: number;
  total_cost: number;
  max_total_cost: number;
}

export interface Created extends Totals {
  row: EventsubSubscriptionRow;
  /** the session's connected_at (Unix ms), for a WebSocket subscription */
  connectedAt?: number;
}

/** The owner a token lists and limits: an app token the client's webhooks, a user token its WebSockets. */
export const ownerOf = (p: Principal): SubscriptionOwner =>
  p.kind === 'app'
    ? { method: 'webhook', clientId: p.clientId }
    : { method: 'websocket', clientId: p.clientId, userId: p.userId };

const maxCostOf = (owner: SubscriptionOwner) =>
  owner.method === 'webhook' ? LIMITS.webhookMaxTotalCost : LIMITS.websocketMaxTotalCost;

export async function totalsOf(
  ctx: AppContext,
  owner: SubscriptionOwner,
  filter: SubscriptionFilter,
): Promise<Totals> {
  const db = ctx.store.db;
  const [total, live] = await Promise.all([countSubscriptions(db, owner, filter), liveCost(db, owner)]);
  return { total, total_cost: live.cost, max_total_cost: maxCostOf(owner) };
}

const tooMany = (message: string) => new HelixError(429, message);

/** POST /eventsub/subscriptions: the subscription created, or the refusal. */
export async function createSubscription(ctx: AppContext, p: Principal, body: unknown): Promise<Created> {
  const req = readRequest(body, ctx.config.profile === 'production');
  const { type, condition, transport } = req;
  const db = ctx.store.db;

  // The token kind per transport: a webhook is the client's (an app token), a WebSocket the user's.
  if (transport.method === 'webhook' && p.kind !== 'app')
    throw badRequest('The transport "webhook" requires an app access token; a user access token was given');
  if (transport.method === 'websocket' && p.kind !== 'user')
    throw badRequest('The transport "websocket" requires a user access token; an app access token was given');

  if (type.type === 'user.authorization.revoke' && condition.client_id !== p.clientId)
    throw badRequest(
      'The field "condition.client_id" must be the client of the access token (the Client-Id header)',
    );
  const userIds = type.condition
    .filter((f) => f !== 'client_id')
    .map((f) => [f, parseNumericId(condition[f] as string) as number] as const);
  const existing = await existingUsers(
    db,
    userIds.map(([, id]) => id),
  );
  for (const [f, id] of userIds)
    if (!existing.has(id)) throw badRequest(`The user in "condition.${f}" does not exist (${id})`);

  // The session: connected, and bound to this client and user (or to none yet).
  let connectedAt: number | undefined;
  if (transport.method === 'websocket') {
    const session = await sessionById(db, transport.session_id);
    if (session?.status !== 'connected')
      throw badRequest('The field "transport.session_id" names no connected WebSocket session');
    if (
      (session.client_id !== null && session.client_id !== p.clientId) ||
      (session.user_id !== null && Number(session.user_id) !== (p as Principal & { userId: number }).userId)
    )
      throw badRequest(
        'The field "transport.session_id" names a session bound to another client or user: a session carries the subscriptions of one client and user',
      );
    connectedAt = Number(session.connected_at);
  }

  // The authorization (the 403) and the cost: judged from the token rows of the client.
  const now = nowSeconds(ctx.clock);
  const authField = type.authField;
  const authUser = authField === undefined ? undefined : Number(condition[authField]);
  const scopeLists = authUser === undefined ? [] : await liveGrants(db, p.clientId, authUser, now);
  if (type.scopes.length > 0 && authUser !== undefined) {
    const ok =
      transport.method === 'websocket'
        ? p.kind === 'user' && p.userId === authUser && type.scopes.some((s) => p.scopes.has(s))
        : grants(scopeLists, type.scopes);
    if (!ok) throw forbidden(MISSING_AUTHORIZATION);
    if (type.type === 'channel.follow') {
      const broadcaster = Number(condition.broadcaster_user_id);
      if (authUser !== broadcaster && !(await isModerator(db, broadcaster, authUser)))
        throw forbidden(MISSING_AUTHORIZATION);
    }
  }
  // Free when the condition's user has authorized the client (any live grant); the revocation of
  // the client's own grants (user.authorization.revoke) names no user and is free.
  const authorized = authUser !== undefined && scopeLists.length > 0;
  const cost = authUser === undefined || authorized ? 0 : 1;
  const owner = ownerOf(p);
  const keyValue = condition[type.keyField] as string;
  const id = randomUUID();
  const row = {
    id,
    client_id: p.clientId,
    type: type.type,
    version: type.version,
    condition: JSON.stringify(condition),
    match_key: matchKey(type.type, keyValue),
    // A WebSocket subscription rests on its maker's token (store/eventsub-subscriptions.ts, SubscriptionOwner).
    auth_user_id: owner.method === 'websocket' ? owner.userId : authorized ? (authUser as number) : null,
    status: transport.method === 'webhook' ? 'webhook_callback_verification_pending' : 'enabled',
    method: transport.method,
    callback: transport.method === 'webhook' ? transport.callback : null,
    secret: transport.method === 'webhook' ? transport.secret : null,
    session_id: transport.method === 'websocket' ? transport.session_id : null,
    cost,
    created_at: Date.now(),
    disabled_at: null,
  };

  let created: EventsubSubscriptionRow;
  try {
    created = await db.transaction().execute(async (trx) => {
      // EVENTS_LOCK first: the limits are counted, and from_event read, with no creation racing.
      await lockEvents(trx, ctx.store.dialect);
      const live = await liveCost(trx, owner);
      const max = maxCostOf(owner);
      if (live.cost + cost > max)
        throw tooMany(
          `The subscription would exceed the maximum total cost (max_total_cost ${max}): total_cost is ${live.cost}, this subscription costs ${cost}`,
        );
      let fromEvent: number;
      if (transport.method === 'websocket' && p.kind === 'user') {
        if (await bindSession(trx, transport.session_id, p.clientId, p.userId)) {
          if ((await sessionsOf(trx, p.clientId, p.userId)) > LIMITS.sessionsPerUser)
            throw tooMany(
              `The user may hold at most ${LIMITS.sessionsPerUser} WebSocket sessions with subscriptions for this client`,
            );
        } else {
          // Bound meanwhile (or before): to this client and user, or the request is refused.
          const s = await sessionById(trx, transport.session_id);
          if (!s || s.client_id !== p.clientId || Number(s.user_id) !== p.userId)
            throw badRequest(
              'The field "transport.session_id" names a session bound to another client or user: a session carries the subscriptions of one client and user',
            );
        }
        if ((await sessionSubscriptionCount(trx, transport.session_id)) >= LIMITS.subscriptionsPerSession)
          throw tooMany(
            `The WebSocket session holds ${LIMITS.subscriptionsPerSession} enabled subscriptions, the most a session may`,
          );
        // The control row first: the session's process adds the subscription at its place in the log.
        const [controlId] = await recordEvents(
          trx,
          ctx.store.dialect,
          [subscriptionControl('subscription.enabled', transport.session_id, { subscription_id: id })],
          Date.now(),
        );
        fromEvent = controlId as number;
      } else {
        fromEvent = await lastEventId(trx);
      }
      const inserted = await insertSubscription(trx, { ...row, from_event: fromEvent });
      // A webhook is verified before it receives anything: the challenge goes out at once, from
      // whichever process claims it (src/eventsub/webhooks.ts).
      if (transport.method === 'webhook')
        await queueMessage(trx, id, 'verification', Date.now(), newChallenge());
      return inserted;
    });
  } catch (err) {
    // The unique index of live subscriptions refused a duplicate, however two requests raced.
    if (isUniqueViolation(err)) throw new HelixError(409, 'subscription already exists');
    throw err;
  }
  // Wakes this process's tail (a WebSocket's control row) and webhook sender (a verification).
  eventsCommitted(ctx.store);
  const totals = await totalsOf(ctx, owner, undefined);
  return { row: created, ...(connectedAt !== undefined ? { connectedAt } : {}), ...totals };
}

/** DELETE /eventsub/subscriptions: the client's subscription goes, or a 404. */
export async function removeSubscription(ctx: AppContext, p: Principal, id: string): Promise<void> {
  const db = ctx.store.db;
  const row = await subscriptionById(db, id);
  if (!row || row.client_id !== p.clientId) throw notFound('The subscription was not found.');
  const controlled = row.method === 'websocket' && row.session_id !== null;
  await db.transaction().execute(async (trx) => {
    if (controlled)
      await recordEvents(
        trx,
        ctx.store.dialect,
        [subscriptionControl('subscription.deleted', row.session_id as string, { subscription_id: id })],
        Date.now(),
      );
    // Deleted meanwhile by another request (which answered 204): this one finds nothing, and its
    // control row is rolled back.
    if (!(await deleteSubscription(trx, id))) throw notFound('The subscription was not found.');
  });
  if (controlled) eventsCommitted(ctx.store);
}

/** The filters of GET /eventsub/subscriptions, of which a request gives at most one. */
export const FILTERS = ['status', 'type', 'user_id', 'subscription_id'] as const;

/** The one filter a listing gives (none: every subscription), or a 400 naming them. */
export function readFilter(q: Partial<Record<(typeof FILTERS)[number], string>>): SubscriptionFilter {
  const given = FILTERS.filter((f) => q[f] !== undefined);
  if (given.length > 1)
    throw badRequest(
      `The request may specify only one filter query parameter: ${given.map((f) => `"${f}"`).join(' and ')} were given (one of ${FILTERS.map((f) => `"${f}"`).join(', ')})`,
    );
  const kind = given[0];
  if (kind === undefined) return undefined;
  const value = q[kind] as string;
  if (kind === 'user_id') {
    const id = parseNumericId(value);
    if (id === undefined)
      throw badRequest('The parameter "user_id" was malformed: the value must be a numeric ID');
    return { kind, value: id };
  }
  return { kind, value };
}
