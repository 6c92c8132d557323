// EventSub in one serving process (docs/eventsub-design.md, sections 3 and 4): its process id, the
// WebSocket sessions it holds, the outbox's tail and the delivery of what it reads. Per app; it
// starts with the first WebSocket (an app that never gets one reads no events and holds no
// listening connection) and stops when the app closes.
//
// The index maps an event's match key to the subscriptions of this process's sessions. It changes
// only as the tail reads the control rows the subscriptions API writes in the transaction of each
// change, so a subscription joins it exactly at its place in the events' order: it gets the events
// after its `from_event` (the id of the control row that created it), none missed and none early.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { WebSocket } from 'ws';
import type { Clock } from '../clock.ts';
import { nowSeconds } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DeliveryPlan } from '../faults/rules.ts';
import type { AppMetrics } from '../metrics/registry.ts';
import type { Store } from '../store/db.ts';
import { type EventRow, eventsAfter, lastEventId } from '../store/events.ts';
import {
  beatProcess,
  claimSession,
  deleteProcess,
  enabledSubscriptionsOf,
  endSession,
  insertSession,
  registerProcess,
  type SessionRow,
  sessionWasUsed,
  startReconnect,
  subscriptionById,
  subscriptionsByIds,
} from '../store/eventsub-sessions.ts';
import { grantingScope, grantKey, grantsScope } from '../store/eventsub-subscriptions.ts';
import { notificationMessage, reconnectMessage, revocationMessage } from './messages.ts';
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
  /** the admin API: the holder sends `session_reconnect` */
  reconnect: 'session.reconnect',
  /** the admin API: `{"silenced": boolean}`, the holder stops or restarts the keepalives */
  keepalives: 'session.keepalives',
  /** written by the claim of a reconnect token: the old holder closes its socket */
  claimed: 'session.claimed',
} as const;

/** How often a process's heartbeat row is written. */
const HEARTBEAT_MS = 5000;
/** The events one catch-up read takes (a claimed session resuming from its cursor). */
const CATCH_UP_BATCH = 500;

/** A reconnect token is stored as its SHA-256 only: a read of the table cannot take a session. */
export const reconnectHash = (token: string) => createHash('sha256').update(token).digest('hex');

/** `--public-url` with the WebSocket scheme, at /ws with the token. */
export function reconnectUrl(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/^http/, 'ws').replace(/\/+$/, '')}/ws?reconnect=${token}`;
}

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

/**
 * The subscriptions a batch's `subscription.enabled` rows name (#readEnabled), by id: its row and
 * whether it shows the email, or null when no row has that id any more.
 */
type EnabledReads = Map<string, { row: SubscriptionRow; withEmail: boolean } | null>;

/** What a control row's payload holds; empty for one that is not a JSON object. */
interface ControlArgs {
  subscription_id?: unknown;
  status?: unknown;
  silenced?: unknown;
}

/**
 * A control row's payload. Only helixd writes these rows, but one that did not parse must not stop
 * the tail (it would read the same batch again and again): it is taken as empty, and so ignored.
 */
function controlArgs(ev: EventRow): ControlArgs {
  try {
    const args: unknown = JSON.parse(ev.payload);
    return typeof args === 'object' && args !== null ? (args as ControlArgs) : {};
  } catch {
    return {};
  }
}

/** The `subscription_id` of a control row's payload, when it names one. */
function subscriptionIdOf(ev: EventRow): string | undefined {
  const id = controlArgs(ev).subscription_id;
  return typeof id === 'string' ? id : undefined;
}

export interface EventSubDeps {
  config: Config;
  store: Store;
  clock: Clock;
  log: Log;
  /** counts the sessions and the notifications sent, and measures how far the tail is behind */
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
  /** sessions sent `session_reconnect`, until claimed (closed 1000) or the grace ends (4004) */
  readonly #handingOver = new Map<string, { session: Session; timer: NodeJS.Timeout }>();
  /** sessions whose row is being marked `reconnecting` */
  readonly #marking = new Set<Session>();
  /** the id through which every event was delivered to every session here */
  #delivered = 0;
  /** delivery and a claimed session's catch-up take turns */
  #turn: Promise<unknown> = Promise.resolve();

  constructor(d: EventSubDeps) {
    this.#d = d;
    lastStart = Math.max(Date.now(), lastStart + 1);
    this.processId = `${hostname()}:${process.pid}:${lastStart}`;
    d.metrics?.countEventSubSessions(() => this.#sessions.size);
    // No tail until the first WebSocket starts one (or while a failed start waits for the next).
    d.metrics?.measureOutboxLag(async () => (await this.#started?.catch(() => undefined))?.cursor);
  }

  /** The sessions open here (for tests and metrics). */
  get sessionCount(): number {
    return this.#sessions.size;
  }

  /**
   * Takes a new connection: its row, then its welcome. The tail starts first (at the last event
   * recorded), so that every control row of the new session comes after its cursor.
   */
  async accept(socket: WebSocket, keepaliveSeconds: number, reconnectToken?: string): Promise<void> {
    if (reconnectToken !== undefined) return this.#acceptReconnect(socket, reconnectToken);
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
      { pingMs: this.#d.config.wsPing },
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
      this.#delivered = cursor;
      await registerProcess(store.db, this.processId, Date.now(), cursor);
      const tail = new Tail({
        store,
        url: this.#d.config.db,
        cursor,
        deliver: (events) => this.#deliver(events),
        log: this.#d.log,
      });
      this.#heartbeat = setInterval(() => {
        beatProcess(store.db, this.processId, Date.now(), tail.cursor)
          .then((alive) => (alive ? undefined : this.#swept(tail)))
          .catch((err) => this.#d.log.warn({ err }, 'eventsub: the heartbeat could not be written'));
      }, HEARTBEAT_MS);
      return tail;
    })();
    // A failed start (the store unreachable) is tried again by the next connection.
    this.#started.catch(() => {
      this.#started = undefined;
    });
    return this.#started;
  }

  /**
   * This process's heartbeat row is gone: another process swept it as lost (not seen for 30 s: the
   * process was paused, or the store unreachable; or its tail an hour behind), and ended its
   * sessions and their subscriptions. Its sockets close with 4000, as the platform's do on an
   * internal error, so that their clients connect again and subscribe anew; the tail skips to the
   * last event (no session is left to read the ones between) and the process registers again.
   */
  async #swept(tail: Tail): Promise<void> {
    if (this.#stopped) return;
    this.#d.log.warn(
      { process: this.processId, sessions: this.#sessions.size },
      'eventsub: this process was swept as lost by the housekeeping; closing its sessions (4000)',
    );
    for (const s of this.#sessions.values()) {
      // A session being handed over was left by the sweep to the connection that claims it: its
      // socket closes, its row stays for the claim.
      if (s.reconnecting) s.handedOver = true;
      s.close(CLOSE.internalError);
    }
    const last = await lastEventId(this.#d.store.db);
    tail.skipTo(last);
    this.#delivered = Math.max(this.#delivered, last);
    await registerProcess(this.#d.store.db, this.processId, Date.now(), last);
  }

  /** A session's socket closed: it leaves the index, its row goes and its subscriptions end. */
  #ended(session: Session, status: string, inserted: Promise<unknown>): void {
    // A session claimed by a connection to this same process has a new Session under its id.
    if (this.#sessions.get(session.id) === session) this.#sessions.delete(session.id);
    const handing = this.#handingOver.get(session.id);
    if (handing?.session === session) {
      clearTimeout(handing.timer);
      this.#handingOver.delete(session.id);
    }
    for (const [id, e] of this.#entries) if (e.session === session) this.#drop(id);
    // Its socket's part is over, not the session: the claimant holds the row and the subscriptions.
    if (session.handedOver) return;
    const work = (async () => {
      try {
        await inserted.catch(() => {});
        // Only while the row is this process's: a client that closes the old socket after its new
        // one was welcomed by another process ends nothing (nor a grace that ran out just then).
        await endSession(this.#d.store.db, session.id, status, Date.now(), {
          owner: this.processId,
          ...(session.reconnecting ? { status: 'reconnecting' } : {}),
        });
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

  /** Runs `fn` when no delivery or catch-up is in progress. */
  #inTurn<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#turn.then(fn);
    this.#turn = run.catch(() => {});
    return run;
  }

  #deliver(events: EventRow[]): Promise<void> {
    return this.#inTurn(async () => {
      const enabled = await this.#readEnabled(events);
      for (const ev of events) {
        if (ev.kind === 'control') await this.#control(ev, enabled);
        else this.#notify(ev);
      }
      this.#delivered = Math.max(this.#delivered, (events.at(-1) as EventRow).id);
    });
  }

  /** Sends event `ev` to the subscriptions it matches (of `only`, when given). */
  #notify(ev: EventRow, only?: Session): void {
    const targets = this.#index.get(ev.match_key);
    if (!targets) return;
    let event: Record<string, unknown> | undefined;
    for (const e of targets.values()) {
      if (ev.id <= e.row.from_event || (only && e.session !== only)) continue;
      try {
        event ??= JSON.parse(ev.payload) as Record<string, unknown>;
      } catch (err) {
        // Written by helixd, so never seen; but a row that does not parse must not stop the tail.
        this.#d.log.error(
          { err, event: ev.id },
          'eventsub: an event whose payload does not parse was skipped',
        );
        return;
      }
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

  async #control(ev: EventRow, enabled: EnabledReads): Promise<void> {
    const args = controlArgs(ev);
    if (ev.match_key.startsWith('session:')) {
      const sessionId = ev.match_key.slice('session:'.length);
      switch (ev.type) {
        case CONTROL.reconnect: {
          const session = this.#sessions.get(sessionId);
          // Every event up to this row was sent to the session: the claimant resumes after it.
          if (session) await this.#reconnect(session, ev.id);
          return;
        }
        case CONTROL.keepalives:
          this.#sessions.get(sessionId)?.silence(args.silenced === true);
          return;
        case CONTROL.claimed:
          this.#claimed(sessionId);
          return;
      }
    }
    const subscriptionId = typeof args.subscription_id === 'string' ? args.subscription_id : undefined;
    if (!subscriptionId) return;
    switch (ev.type) {
      case CONTROL.enabled: {
        const session = this.#sessions.get(ev.match_key.slice('session:'.length));
        if (!ev.match_key.startsWith('session:') || !session) return;
        await this.#add(session, subscriptionId, enabled);
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

  /**
   * Reads, before a batch is handled, the subscriptions its `subscription.enabled` rows name for
   * the sessions held here: one query for all of them, and one for the `user:read:email` grants of
   * the `user.update` ones, where reading each at its row cost a query or two per row, one row
   * after the other (10,000 subscriptions made left the tail that many queries behind the writes on
   * PostgreSQL: docs/perf/2026-11-27-eventsub-2.md). The order is kept: these reads come after the
   * batch's own, as each row's read did, so they see every change the batch records (and perhaps
   * later ones, whose control rows the tail reads next); the index still changes only as #control
   * reaches each control row, so an event between two control rows meets exactly the subscriptions
   * enabled before it, and a `from_event` keeps out the events before a subscription's own row.
   */
  async #readEnabled(events: EventRow[]): Promise<EnabledReads> {
    const reads: EnabledReads = new Map();
    const ids: string[] = [];
    for (const ev of events) {
      if (ev.kind !== 'control' || ev.type !== CONTROL.enabled || !ev.match_key.startsWith('session:'))
        continue;
      if (!this.#sessions.has(ev.match_key.slice('session:'.length))) continue;
      const id = subscriptionIdOf(ev);
      if (id !== undefined) ids.push(id);
    }
    if (ids.length === 0) return reads;
    const { store, clock } = this.#d;
    const rows = await subscriptionsByIds(store.db, ids);
    const showsEmail = (r: SubscriptionRow): r is SubscriptionRow & { auth_user_id: number } =>
      r.type === 'user.update' && r.auth_user_id !== null && r.status === 'enabled';
    const asking = [...rows.values()].filter(showsEmail);
    const granted = asking.length
      ? await grantingScope(
          store.db,
          asking.map((r) => ({ clientId: r.client_id, userId: r.auth_user_id })),
          'user:read:email',
          nowSeconds(clock),
        )
      : new Set<string>();
    for (const id of ids) {
      const row = rows.get(id);
      reads.set(
        id,
        row
          ? { row, withEmail: showsEmail(row) && granted.has(grantKey(row.client_id, row.auth_user_id)) }
          : null,
      );
    }
    return reads;
  }

  async #add(session: Session, subscriptionId: string, enabled: EnabledReads): Promise<void> {
    const read = enabled.get(subscriptionId);
    // Not read with its batch (its session came to this process meanwhile, by a claim): read now.
    const row = read === undefined ? await subscriptionById(this.#d.store.db, subscriptionId) : read?.row;
    // Deleted or revoked since (a later control row says so too), or not this session's.
    if (row?.status !== 'enabled' || row.session_id !== session.id) return;
    await this.#addRow(session, row, read?.withEmail);
  }

  /** `withEmail`: whether the row's grants show the email, when already read (else read here). */
  async #addRow(session: Session, row: SubscriptionRow, withEmail?: boolean): Promise<void> {
    const { store, clock } = this.#d;
    withEmail ??=
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

  // ---- Hand-over (docs/eventsub-design.md, section 4: Reconnect) ----

  /**
   * Sends `session_reconnect` to a session held here: its row becomes `reconnecting` with the hash
   * of a new token and `cursor` (every event through it was sent to the session). The socket keeps
   * delivering until a connection claims the session; unclaimed after the grace, it closes 4004 and
   * the session ends.
   */
  async #reconnect(session: Session, cursor: number): Promise<void> {
    if (!session.open || session.reconnecting || this.#marking.has(session)) return;
    const token = randomBytes(32).toString('base64url');
    const until = Date.now() + this.#d.config.wsReconnectGrace;
    this.#marking.add(session);
    let marked = false;
    try {
      marked = await startReconnect(
        this.#d.store.db,
        session.id,
        this.processId,
        reconnectHash(token),
        until,
        cursor,
      );
    } catch (err) {
      this.#d.log.warn({ err, session: session.id }, 'eventsub: a session could not be handed over');
    } finally {
      this.#marking.delete(session);
    }
    // Set only once the row says so: the close of a session not yet marked ends it by owner alone.
    if (!marked || !session.open) return;
    session.reconnecting = true;
    const timer = setTimeout(() => {
      if (this.#handingOver.get(session.id)?.session === session) session.close(CLOSE.reconnectExpired);
    }, this.#d.config.wsReconnectGrace);
    this.#handingOver.set(session.id, { session, timer });
    session.send(reconnectMessage(session, reconnectUrl(this.#d.config.publicUrl, token)));
  }

  /** A connection claimed the session: the socket handing it over here (if any) closes normally. */
  #claimed(sessionId: string): void {
    const handing = this.#handingOver.get(sessionId);
    if (!handing) return;
    clearTimeout(handing.timer);
    this.#handingOver.delete(sessionId);
    handing.session.handedOver = true;
    handing.session.close(CLOSE.handedOver);
  }

  /**
   * A connection to a reconnect URL. An unknown, used or expired token is accepted and closed with
   * 4007, as the platform does (4007 "Invalid reconnect" is one of its close codes, so it answers
   * on an open socket rather than refusing the upgrade). A valid one claims the session (one
   * conditional update, src/store/eventsub-sessions.ts), is welcomed with the same session id, and
   * gets the session's enabled subscriptions and the events after the stored cursor: those sent by
   * the old socket meanwhile come twice, with their message_id; none is lost.
   */
  async #acceptReconnect(socket: WebSocket, token: string): Promise<void> {
    const { store } = this.#d;
    let row: SessionRow | undefined;
    try {
      await this.#start();
      row = this.#stopped
        ? undefined
        : await claimSession(store, reconnectHash(token), Date.now(), this.processId);
    } catch (err) {
      this.#d.log.error({ err }, 'eventsub: a reconnect could not be claimed');
      socket.close(CLOSE.internalError.code, CLOSE.internalError.reason);
      return;
    }
    if (this.#stopped && !row) {
      socket.close(CLOSE.goingAway.code, CLOSE.goingAway.reason);
      return;
    }
    if (!row) {
      socket.close(CLOSE.invalidReconnect.code, CLOSE.invalidReconnect.reason);
      return;
    }
    const claimed = row;
    // The old socket may be this process's own.
    this.#claimed(claimed.id);
    const session = new Session(
      socket,
      { id: claimed.id, connectedAt: claimed.connected_at, keepaliveSeconds: claimed.keepalive_seconds },
      {
        wasUsed: () => sessionWasUsed(store.db, claimed.id),
        closed: (status) => this.#ended(session, status, Promise.resolve()),
      },
      { pingMs: this.#d.config.wsPing },
    );
    this.#sessions.set(claimed.id, session);
    try {
      await this.#inTurn(async () => {
        session.start();
        for (const sub of await enabledSubscriptionsOf(store.db, claimed.id))
          await this.#addRow(session, sub);
        // The events between the stored cursor and what this process has delivered; the tail
        // delivers the rest to it as to every session here.
        for (let cursor = claimed.cursor; cursor < this.#delivered; ) {
          const events = await eventsAfter(store.db, cursor, CATCH_UP_BATCH);
          if (events.length === 0) break;
          for (const ev of events)
            if (ev.kind === 'event' && ev.id <= this.#delivered) this.#notify(ev, session);
          cursor = (events.at(-1) as EventRow).id;
        }
      });
    } catch (err) {
      this.#d.log.error({ err, session: claimed.id }, 'eventsub: a claimed session could not resume');
      session.close(CLOSE.internalError);
    }
  }

  /**
   * The drain began (the server stops): every session is sent `session_reconnect`, so that its
   * client moves to another worker or instance before the sessions still here are closed.
   */
  async reconnectSessions(): Promise<void> {
    const cursor = this.#delivered;
    await Promise.all([...this.#sessions.values()].map((s) => this.#reconnect(s, cursor)));
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
