// EventSub in one serving process (docs/eventsub-design.md, sections 3 and 4): its process id, the
// WebSocket sessions it holds, the outbox's tail and the delivery of what it reads. Per app; it
// starts with the first WebSocket (an app that never gets one reads no events and holds no
// listening connection) and stops when the app closes.
//
// The index maps an event's match key to the subscriptions of this process's sessions. It changes
// only as the tail reads the control rows the subscriptions API writes in the transaction of each
// change, so a subscription joins it exactly at its place in the events' order: it gets the events
// after its `from_event` (the id of the control row that created it), none missed and none early.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { WebSocket } from 'ws';
import type { Clock } from '../clock.ts';
import { nowSeconds } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DeliveryPlan } from '../faults/rules.ts';
import type { AppMetrics } from '../metrics/registry.ts';
import type { Store } from '../store/db.ts';
import { type EventRow, lastEventId } from '../store/events.ts';
import {
  beatProcess,
  deleteProcess,
  endSession,
  insertSession,
  sessionWasUsed,
  subscriptionById,
} from '../store/eventsub-sessions.ts';
import { grantsScope } from '../store/eventsub-subscriptions.ts';
import { notificationMessage, revocationMessage } from './messages.ts';
import { CLOSE, Session } from './sessions.ts';
import { Tail } from './tail.ts';
import type { SubscriptionRow } from './wire.ts';

/**
 * The commands of `control` rows. The subscriptions API writes each in the transaction of the
 * change, its payload `{"subscription_id": ...}` (and `status` for a revocation); an enabled one's
 * match key is `session:<session id>`.
 */
export const CONTROL = {
  enabled: 'subscription.enabled',
  deleted: 'subscription.deleted',
  revoked: 'subscription.revoked',
} as const;

/** The match key of a session's commands. */
export const sessionKey = (sessionId: string) => `session:${sessionId}`;

/** How often a process's heartbeat row is written. */
const HEARTBEAT_MS = 5000;
/** How long a closing handshake may take when the app closes, before the socket is cut. */
const CLOSE_WAIT_MS = 1000;

interface Log {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

interface Entry {
  row: SubscriptionRow;
  session: Session;
  /** a `user.update` subscriber granted `user:read:email`: the event keeps the email */
  withEmail: boolean;
}

export interface EventSubDeps {
  config: Config;
  store: Store;
  clock: Clock;
  log: Log;
  /** counts the sessions and the notifications sent */
  metrics?: AppMetrics;
  /** the delivery fault of `--faults` for the next notification to a subscription of a client */
  deliveryFault?: (clientId: string) => DeliveryPlan | undefined;
}

// Two apps of one process (tests) started in the same millisecond still get distinct ids.
let lastStart = 0;

export class EventSubService {
  /** `host:pid:start`: the owner written in this process's session rows */
  readonly processId: string;
  readonly #d: EventSubDeps;
  #started: Promise<Tail> | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #stopped = false;
  readonly #sessions = new Map<string, Session>();
  /** match key → subscription id → entry */
  readonly #index = new Map<string, Map<string, Entry>>();
  readonly #entries = new Map<string, Entry>();
  /** the store work of sessions closing (deleting their rows) */
  readonly #ending = new Set<Promise<void>>();

  constructor(d: EventSubDeps) {
    this.#d = d;
    lastStart = Math.max(Date.now(), lastStart + 1);
    this.processId = `${hostname()}:${process.pid}:${lastStart}`;
    d.metrics?.countEventSubSessions(() => this.#sessions.size);
  }

  /** The sessions open here (for tests and metrics). */
  get sessionCount(): number {
    return this.#sessions.size;
  }

  /**
   * Takes a new connection: its row, then its welcome. The tail starts first (at the last event
   * recorded), so that every control row of the new session comes after its cursor.
   */
  async accept(socket: WebSocket, keepaliveSeconds: number): Promise<void> {
    const connectedAt = Date.now();
    const id = randomUUID();
    let inserted: Promise<unknown> = Promise.resolve();
    const session = new Session(
      socket,
      { id, connectedAt, keepaliveSeconds },
      {
        wasUsed: () => sessionWasUsed(this.#d.store.db, id),
        closed: (status) => this.#ended(session, status, inserted),
      },
    );
    this.#sessions.set(id, session);
    // A connection accepted while the sessions are being closed (the server stops) goes too.
    if (this.#stopped) return session.close(CLOSE.goingAway);
    try {
      await this.#start();
      inserted = insertSession(this.#d.store.db, {
        id,
        owner: this.processId,
        status: 'connected',
        client_id: null,
        user_id: null,
        keepalive_seconds: keepaliveSeconds,
        connected_at: connectedAt,
        cursor: 0,
        reconnect_hash: null,
        reconnect_until: null,
      });
      await inserted;
    } catch (err) {
      this.#d.log.error({ err }, 'eventsub: a WebSocket session could not start');
      inserted = Promise.resolve();
      session.close(CLOSE.internalError);
      return;
    }
    session.start();
  }

  /** Starts the tail and the heartbeat, once. */
  #start(): Promise<Tail> {
    this.#started ??= (async () => {
      const { store } = this.#d;
      const cursor = await lastEventId(store.db);
      await beatProcess(store.db, this.processId, Date.now(), cursor);
      const tail = new Tail({
        store,
        url: this.#d.config.db,
        cursor,
        deliver: (events) => this.#deliver(events),
        log: this.#d.log,
      });
      this.#heartbeat = setInterval(() => {
        beatProcess(store.db, this.processId, Date.now(), tail.cursor).catch((err) =>
          this.#d.log.warn({ err }, 'eventsub: the heartbeat could not be written'),
        );
      }, HEARTBEAT_MS);
      return tail;
    })();
    // A failed start (the store unreachable) is tried again by the next connection.
    this.#started.catch(() => {
      this.#started = undefined;
    });
    return this.#started;
  }

  /** A session's socket closed: it leaves the index, its row goes and its subscriptions end. */
  #ended(session: Session, status: string, inserted: Promise<unknown>): void {
    this.#sessions.delete(session.id);
    for (const [id, e] of this.#entries) if (e.session === session) this.#drop(id);
    const work = (async () => {
      try {
        await inserted.catch(() => {});
        await endSession(this.#d.store.db, session.id, status, Date.now());
      } catch (err) {
        this.#d.log.error(
          { err, session: session.id },
          'eventsub: a closed session could not be ended in the store',
        );
      }
    })();
    this.#ending.add(work);
    void work.finally(() => this.#ending.delete(work));
  }

  async #deliver(events: EventRow[]): Promise<void> {
    for (const ev of events) {
      if (ev.kind === 'control') await this.#control(ev);
      else this.#notify(ev);
    }
  }

  #notify(ev: EventRow): void {
    const targets = this.#index.get(ev.match_key);
    if (!targets) return;
    let event: Record<string, unknown> | undefined;
    for (const e of targets.values()) {
      if (ev.id <= e.row.from_event) continue;
      event ??= JSON.parse(ev.payload) as Record<string, unknown>;
      // The email only for a subscriber granted user:read:email (the platform's rule): else ''.
      const shown = ev.type === 'user.update' && !e.withEmail ? { ...event, email: '' } : event;
      this.#send(e, ev, notificationMessage(e.row, ev.id, shown));
    }
  }

  /** Sends a notification to its session, as the delivery faults of `--faults` draw. */
  #send(e: Entry, ev: EventRow, text: string): void {
    const metrics = this.#d.metrics;
    const send = () => {
      if (!e.session.open) {
        metrics?.eventsubDeliveryFailed('websocket', e.row.type);
        return;
      }
      e.session.send(text);
      metrics?.eventsubDelivered('websocket', e.row.type, ev.at);
    };
    const fault = this.#d.deliveryFault?.(e.row.client_id);
    if (!fault) send();
    else if ('drop' in fault) metrics?.eventsubDeliveryFailed('websocket', e.row.type);
    else if ('duplicate' in fault) {
      send();
      send();
    }
    // Late, unless the subscription went meanwhile (a later control row said so).
    else
      setTimeout(() => {
        if (this.#entries.get(e.row.id) === e) send();
      }, fault.delayMs);
  }

  async #control(ev: EventRow): Promise<void> {
    const args = JSON.parse(ev.payload) as { subscription_id?: unknown; status?: unknown };
    const subscriptionId = typeof args.subscription_id === 'string' ? args.subscription_id : undefined;
    if (!subscriptionId) return;
    switch (ev.type) {
      case CONTROL.enabled: {
        const session = this.#sessions.get(ev.match_key.slice('session:'.length));
        if (!ev.match_key.startsWith('session:') || !session) return;
        await this.#add(session, subscriptionId);
        return;
      }
      case CONTROL.deleted:
        this.#drop(subscriptionId);
        return;
      case CONTROL.revoked: {
        const e = this.#entries.get(subscriptionId);
        if (!e) return;
        this.#drop(subscriptionId);
        const status = typeof args.status === 'string' ? args.status : 'authorization_revoked';
        e.session.send(revocationMessage(e.row, status));
        return;
      }
    }
  }

  async #add(session: Session, subscriptionId: string): Promise<void> {
    const { store, clock } = this.#d;
    const row = await subscriptionById(store.db, subscriptionId);
    // Deleted or revoked since (a later control row says so too), or not this session's.
    if (row?.status !== 'enabled' || row.session_id !== session.id) return;
    const withEmail =
      row.type === 'user.update' &&
      row.auth_user_id !== null &&
      (await grantsScope(store.db, row.client_id, row.auth_user_id, 'user:read:email', nowSeconds(clock)));
    session.used = true;
    const entry: Entry = { row, session, withEmail };
    this.#entries.set(row.id, entry);
    let targets = this.#index.get(row.match_key);
    if (!targets) {
      targets = new Map();
      this.#index.set(row.match_key, targets);
    }
    targets.set(row.id, entry);
  }

  #drop(subscriptionId: string): void {
    const e = this.#entries.get(subscriptionId);
    if (!e) return;
    this.#entries.delete(subscriptionId);
    const targets = this.#index.get(e.row.match_key);
    targets?.delete(subscriptionId);
    if (targets?.size === 0) this.#index.delete(e.row.match_key);
  }

  /**
   * Closes every session (the app closes), waiting for their closing handshakes (a client that
   * does not answer is cut after a second) and for their rows to be ended.
   */
  async closeSessions(): Promise<void> {
    this.#stopped = true;
    const sessions = [...this.#sessions.values()];
    for (const s of sessions) s.close(CLOSE.goingAway);
    const cut = setTimeout(() => {
      for (const s of this.#sessions.values()) s.terminate();
    }, CLOSE_WAIT_MS);
    // A terminated socket emits its close at once; the bound only guards against one that never does.
    for (let waited = 0; this.#sessions.size > 0 && waited < 3 * CLOSE_WAIT_MS; waited += 10)
      await new Promise((r) => setTimeout(r, 10));
    clearTimeout(cut);
    await Promise.all(this.#ending);
  }

  /** Stops the tail and the heartbeat, and deletes the heartbeat row. */
  async stop(): Promise<void> {
    await this.closeSessions();
    const started = this.#started;
    if (!started) return;
    const tail = await started.catch(() => undefined);
    clearInterval(this.#heartbeat);
    await tail?.stop();
    await deleteProcess(this.#d.store.db, this.processId).catch((err) =>
      this.#d.log.warn({ err }, 'eventsub: the heartbeat row could not be deleted'),
    );
  }
}
