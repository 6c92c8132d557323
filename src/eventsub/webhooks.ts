// The webhook transport (docs/eventsub.md, "Webhooks"): every process runs one sender, which claims
// due messages from the store (src/store/webhook-deliveries.ts: each message is claimed by one
// process, under a lease) and POSTs them to their subscription's callback, signed as the platform
// signs them. A verification must be answered with its challenge, once; a notification is retried
// with a doubling wait while the callback fails, and after the last attempt the subscription is
// revoked with `notification_failures_exceeded`; a revocation is sent once.
import { createHmac, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Clock, nowSeconds } from '../clock.ts';
import type { DeliveryPlan } from '../faults/rules.ts';
import type { AppMetrics } from '../metrics/registry.ts';
import type { Store } from '../store/db.ts';
import { onEventsCommitted } from '../store/events.ts';
import { grantsScope } from '../store/eventsub-subscriptions.ts';
import {
  type ClaimedDelivery,
  claimDeliveries,
  deleteDelivery,
  disableWebhook,
  enableWebhook,
  nextDue,
  retryDelivery,
} from '../store/webhook-deliveries.ts';
import { messageId } from './messages.ts';
import { nanoTime, preciseNow, wireSubscription } from './wire.ts';

export interface WebhookSenderOptions {
  /** the server clock: a grant's token is live or expired by it */
  clock: Clock;
  /** this process, as claims name it */
  owner: string;
  /** failed attempts of a notification before its subscription is revoked */
  retries: number;
  /** the wait after the first failed attempt, ms; each next one doubles */
  backoffMs: number;
  /** how long a callback has to answer, ms */
  timeoutMs?: number;
  /** counts the notifications sent and the attempts failed */
  metrics?: AppMetrics | undefined;
  /** the delivery fault of `--faults` for the next notification attempt to a client's subscription */
  deliveryFault?: ((clientId: string) => DeliveryPlan | undefined) | undefined;
}

/** How long a claim lasts: past it, another process may send the message (at least once). */
const LEASE_MS = 30_000;
/** The longest wait between two looks at the store: messages queued by other processes. */
const POLL_MS = 1000;
/** Messages claimed at a time. */
const BATCH = 50;

const MESSAGE_TYPES = {
  verification: 'webhook_callback_verification',
  notification: 'notification',
  revocation: 'revocation',
} as const;

/** `sha256=` and the hex HMAC-SHA256, keyed by the secret, of message id, timestamp and body. */
export function signature(secret: string, id: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret)
    .update(id + timestamp + body)
    .digest('hex')}`;
}

/** A new verification challenge: random, URL-safe. */
export const newChallenge = (): string => randomBytes(24).toString('base64url');

/** The request body of a claimed message (`payload`: its event's JSON text), as it is signed and sent. */
function bodyOf(d: ClaimedDelivery, payload: string | null): string {
  const subscription = JSON.stringify(wireSubscription(d.subscription));
  switch (d.kind) {
    case 'verification':
      return `{"challenge":${JSON.stringify(d.challenge ?? '')},"subscription":${subscription}}`;
    case 'notification':
      // The event's bytes as recorded: the same on every attempt and every process.
      return `{"subscription":${subscription},"event":${payload ?? 'null'}}`;
    default:
      return `{"subscription":${subscription}}`;
  }
}

export class WebhookSender {
  readonly #store: Store;
  readonly #o: WebhookSenderOptions & { timeoutMs: number };
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = false;
  /** aborts the requests in flight when the sender stops */
  readonly #abort = new AbortController();
  readonly #unwatch: () => void;

  constructor(store: Store, o: WebhookSenderOptions) {
    this.#store = store;
    this.#o = { timeoutMs: 10_000, ...o };
    this.#unwatch = onEventsCommitted(store, () => this.wake());
    this.wake();
  }

  /** Looks for due messages now (an event or a subscription was just committed). */
  wake(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#running = this.#round()
      .catch(() => {
        // The store was unreachable: the next round tries again.
      })
      .finally(() => {
        this.#running = undefined;
        if (this.#again) {
          this.#again = false;
          this.wake();
        }
      });
  }

  async #round(): Promise<void> {
    for (;;) {
      const now = Date.now();
      const batch = await claimDeliveries(
        this.#store.db,
        this.#store.dialect,
        this.#o.owner,
        now,
        now + LEASE_MS,
        BATCH,
      );
      if (batch.length === 0) break;
      await Promise.all(batch.map((d) => this.#send(d)));
      if (this.#stopped) return;
    }
    const due = await nextDue(this.#store.db);
    const wait = due === undefined ? POLL_MS : Math.min(POLL_MS, Math.max(0, due - Date.now()));
    if (!this.#stopped) this.#timer = setTimeout(() => this.wake(), wait).unref();
  }

  /**
   * The event as this subscription is shown it: a `user.update` keeps its email only when the user
   * granted the client `user:read:email` (the platform's rule), else ''.
   */
  async #payloadFor(d: ClaimedDelivery): Promise<string | null> {
    const sub = d.subscription;
    if (sub.type !== 'user.update' || d.payload === null) return d.payload;
    const userId = Number((JSON.parse(sub.condition) as { user_id: string }).user_id);
    const granted = await grantsScope(
      this.#store.db,
      sub.client_id,
      userId,
      'user:read:email',
      nowSeconds(this.#o.clock),
    );
    return granted ? d.payload : JSON.stringify({ ...JSON.parse(d.payload), email: '' });
  }

  /** POSTs one message; whether the callback answered 2xx, and (a verification's) its answer. */
  async #post(d: ClaimedDelivery, id: string, timestamp: string, body: string) {
    const sub = d.subscription;
    try {
      const res = await fetch(sub.callback ?? '', {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.any([AbortSignal.timeout(this.#o.timeoutMs), this.#abort.signal]),
        headers: {
          'content-type': 'application/json',
          'twitch-eventsub-message-id': id,
          'twitch-eventsub-message-retry': String(d.attempts),
          'twitch-eventsub-message-type': MESSAGE_TYPES[d.kind],
          'twitch-eventsub-message-signature': signature(sub.secret ?? '', id, timestamp, body),
          'twitch-eventsub-message-timestamp': timestamp,
          'twitch-eventsub-subscription-type': sub.type,
          'twitch-eventsub-subscription-version': sub.version,
        },
        body,
      });
      const ok = res.status >= 200 && res.status < 300;
      // Only a verification's answer is read (and only its beginning: a challenge is short).
      if (d.kind === 'verification') return { ok, answer: (await res.text()).slice(0, 1024) };
      await res.body?.cancel();
      return { ok, answer: '' };
    } catch {
      return { ok: false, answer: '' }; // refused, reset, timed out, or not a URL fetch can reach
    }
  }

  /**
   * A notification's attempt, as the delivery faults of `--faults` draw: not sent (a failed
   * attempt), sent late, or sent twice (the same message); each send counted in /metrics.
   */
  async #notify(d: ClaimedDelivery, id: string, timestamp: string, body: string): Promise<boolean> {
    const { metrics, deliveryFault } = this.#o;
    const type = d.subscription.type;
    const fault = deliveryFault?.(d.subscription.client_id);
    if (fault && 'drop' in fault) {
      metrics?.eventsubDeliveryFailed('webhook', type);
      return false;
    }
    if (fault && 'delayMs' in fault)
      await sleep(fault.delayMs, undefined, { signal: this.#abort.signal }).catch(() => {});
    let ok = false;
    const sends = fault && 'duplicate' in fault ? 2 : 1;
    for (let n = 0; n < sends && !this.#stopped; n++) {
      const sent = (await this.#post(d, id, timestamp, body)).ok;
      if (this.#stopped) break; // no outcome (#send says why)
      if (sent) metrics?.eventsubDelivered('webhook', type, d.event_at ?? Date.now());
      else metrics?.eventsubDeliveryFailed('webhook', type);
      ok ||= sent;
    }
    return ok;
  }

  async #send(d: ClaimedDelivery): Promise<void> {
    const sub = d.subscription;
    const body = bodyOf(d, await this.#payloadFor(d));
    const id = messageId(sub.id, d.kind === 'notification' ? (d.event_id as number) : d.kind);
    const timestamp = nanoTime(preciseNow());
    let ok = false;
    let answer = '';
    if (d.kind === 'notification') ok = await this.#notify(d, id, timestamp, body);
    else ({ ok, answer } = await this.#post(d, id, timestamp, body));
    // Stopped mid-request: no outcome is recorded; the claim lapses and the message is sent again.
    if (this.#stopped) return;
    const db = this.#store.db;
    const now = Date.now();
    switch (d.kind) {
      case 'verification':
        if (ok && answer === d.challenge) {
          await enableWebhook(db, sub.id);
          await deleteDelivery(db, d.id);
        } else await disableWebhook(db, sub.id, 'webhook_callback_verification_failed', now, false);
        return;
      case 'notification':
        if (ok) await deleteDelivery(db, d.id);
        else if (d.attempts + 1 >= this.#o.retries)
          await disableWebhook(db, sub.id, 'notification_failures_exceeded', now, true);
        else await retryDelivery(db, d.id, now + this.#o.backoffMs * 2 ** d.attempts);
        return;
      default:
        await deleteDelivery(db, d.id);
    }
  }

  /** Stops looking; a message being sent finishes (or its claim lapses to another process). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unwatch();
    clearTimeout(this.#timer);
    this.#abort.abort();
    await this.#running;
  }
}
