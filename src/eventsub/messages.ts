// The messages of an EventSub WebSocket, as the platform writes them (docs/eventsub-design.md,
// section 4): `{metadata, payload}`, the metadata naming the message and, for a notification or a
// revocation, its subscription's type and version. Timestamps are the real wall clock with
// nanoseconds: a receiver may drop a message older than 10 minutes by its own clock (Twurple does).
import { createHash, randomUUID } from 'node:crypto';
import { nanoTime, preciseNow, type SubscriptionRow, wireSubscription } from './wire.ts';

/**
 * The id of the message carrying event `eventId` (or a message of kind `what`, e.g. `revocation`)
 * to a subscription: a UUID of the SHA-256 of `<subscription id>/<what>`, so that every process,
 * every redelivery and both transports give the same one, and a receiver deduplicates on it. The
 * version nibble is 8, RFC 9562's for a UUID of a name hashed other than by MD5 (3) or SHA-1 (5),
 * and the variant bits are RFC 4122's.
 */
export function messageId(subscriptionId: string, what: string | number): string {
  const b = createHash('sha256').update(`${subscriptionId}/${what}`).digest().subarray(0, 16);
  b[6] = ((b[6] as number) & 0x0f) | 0x80;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** A session as its welcome shows it. */
export interface WelcomeSession {
  id: string;
  /** Unix ms */
  connectedAt: number;
  keepaliveSeconds: number;
}

const metadata = (id: string, type: string) => ({
  message_id: id,
  message_type: type,
  message_timestamp: nanoTime(preciseNow()),
});

const subscriptionMetadata = (id: string, type: string, row: SubscriptionRow) => ({
  ...metadata(id, type),
  subscription_type: row.type,
  subscription_version: row.version,
});

/** The first message of a session. */
export function welcomeMessage(s: WelcomeSession): string {
  return JSON.stringify({
    metadata: metadata(randomUUID(), 'session_welcome'),
    payload: {
      session: {
        id: s.id,
        status: 'connected',
        connected_at: nanoTime(s.connectedAt),
        keepalive_timeout_seconds: s.keepaliveSeconds,
        reconnect_url: null,
        recovery_url: null,
      },
    },
  });
}

/**
 * The session is to move to `reconnectUrl` (the platform's shape: status `reconnecting`, no
 * keepalive timeout); the client connects there and the old socket closes once the new one holds it.
 */
export function reconnectMessage(s: WelcomeSession, reconnectUrl: string): string {
  return JSON.stringify({
    metadata: metadata(randomUUID(), 'session_reconnect'),
    payload: {
      session: {
        id: s.id,
        status: 'reconnecting',
        keepalive_timeout_seconds: null,
        reconnect_url: reconnectUrl,
        connected_at: nanoTime(s.connectedAt),
        recovery_url: null,
      },
    },
  });
}

/** Sent when nothing else was for the keepalive timeout less a second. */
export function keepaliveMessage(): string {
  return JSON.stringify({ metadata: metadata(randomUUID(), 'session_keepalive'), payload: {} });
}

/**
 * Event `eventId` (`event`, the object as recorded) for subscription `row`. The subscription is
 * shown as in the platform's messages: its transport names the session only.
 */
export function notificationMessage(row: SubscriptionRow, eventId: number, event: unknown): string {
  return JSON.stringify({
    metadata: subscriptionMetadata(messageId(row.id, eventId), 'notification', row),
    payload: { subscription: wireSubscription(row), event },
  });
}

/** Subscription `row` was revoked: `status` says why. */
export function revocationMessage(row: SubscriptionRow, status: string): string {
  return JSON.stringify({
    metadata: subscriptionMetadata(messageId(row.id, 'revocation'), 'revocation', row),
    payload: { subscription: wireSubscription({ ...row, status, disabled_at: null }) },
  });
}
