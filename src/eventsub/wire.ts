// The wire forms EventSub messages and the subscriptions API share: a subscription object, and
// timestamps written with nanoseconds as the platform writes them (`2026-11-27T06:00:00.123456789Z`).
import type { Selectable } from 'kysely';
import type { EventsubSubscriptionsTable } from '../store/schema.ts';

export type SubscriptionRow = Selectable<EventsubSubscriptionsTable>;

/**
 * An instant (Unix ms, with a fraction for the sub-millisecond part) as RFC 3339 UTC with nine
 * digits of fraction. JavaScript's clock has no nanoseconds: the digits past the microsecond are 0.
 */
export function nanoTime(ms: number): string {
  const whole = Math.floor(ms);
  const micros = Math.floor((ms - whole) * 1000);
  return `${new Date(whole).toISOString().slice(0, -1)}${String(micros).padStart(3, '0')}000Z`;
}

/** Now, as Unix ms with the sub-millisecond part (`performance` is monotonic from timeOrigin). */
export const preciseNow = (): number => performance.timeOrigin + performance.now();

export interface WireSubscription {
  id: string;
  status: string;
  type: string;
  version: string;
  condition: Record<string, string>;
  transport:
    | { method: 'webhook'; callback: string }
    | { method: 'websocket'; session_id: string; connected_at?: string; disconnected_at?: string };
  created_at: string;
  cost: number;
}

/**
 * A subscription as the platform shows it (in the API's answers and in every message's
 * `payload.subscription`). A WebSocket transport carries its session's `connected_at` while the
 * session is known, and `disconnected_at` once the subscription was disabled.
 */
export function wireSubscription(row: SubscriptionRow, sessionConnectedAt?: number): WireSubscription {
  const transport: WireSubscription['transport'] =
    row.method === 'webhook'
      ? { method: 'webhook', callback: row.callback ?? '' }
      : {
          method: 'websocket',
          session_id: row.session_id ?? '',
          ...(sessionConnectedAt !== undefined ? { connected_at: nanoTime(sessionConnectedAt) } : {}),
          ...(row.disabled_at !== null ? { disconnected_at: nanoTime(Number(row.disabled_at)) } : {}),
        };
  return {
    id: row.id,
    status: row.status,
    type: row.type,
    version: row.version,
    condition: JSON.parse(row.condition) as Record<string, string>,
    transport,
    created_at: nanoTime(Number(row.created_at)),
    cost: row.cost,
  };
}
