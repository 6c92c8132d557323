// One EventSub WebSocket session: its socket and its timers, in the process that accepted it
// (docs/eventsub-design.md, section 4). It sends the welcome, a keepalive whenever nothing was sent
// for the keepalive timeout less a second, and a WebSocket ping every `--ws-ping` (30 s); it closes
// with the platform's codes. Nothing a client sends is read: any text or binary frame closes the session
// (4001), and the server's `maxPayload` (src/routes/eventsub/ws.ts) refuses a large one before it is
// buffered, so no input can cost more than a few KiB or crash the process.
import type { WebSocket } from 'ws';
import { keepaliveMessage, type WelcomeSession, welcomeMessage } from './messages.ts';

/** How a session ends: the close frame's code and reason, and its subscriptions' new status. */
export interface CloseReason {
  code: number;
  reason: string;
  status: string;
}

const reason = (code: number, text: string, status: string): CloseReason => ({ code, reason: text, status });

/** The platform's close codes (docs/eventsub-design.md, section 4). */
export const CLOSE = {
  internalError: reason(4000, 'internal server error', 'websocket_internal_error'),
  inboundTraffic: reason(4001, 'sent inbound traffic', 'websocket_received_inbound_traffic'),
  pingPong: reason(4002, 'failed ping pong', 'websocket_failed_ping_pong'),
  unused: reason(4003, 'connection unused', 'websocket_connection_unused'),
  /** the server stops, and the session was not taken by another connection in the drain */
  goingAway: reason(1001, 'server shutting down', 'websocket_disconnected'),
  /** `session_reconnect` was sent, and no connection claimed the session within the grace */
  reconnectExpired: reason(4004, 'reconnect grace time expired', 'websocket_failed_to_reconnect'),
  /** the client stopped reading: what waits to be sent stayed above SLOW_READER_BYTES for SLOW_READER_MS */
  networkTimeout: reason(4005, 'network timeout', 'websocket_network_timeout'),
  /** a reconnect URL whose token is unknown, used or expired (no session: no status to give) */
  invalidReconnect: reason(4007, 'invalid reconnect', 'websocket_disconnected'),
  /** the session was claimed by a connection to its reconnect URL: this socket's part is over */
  handedOver: reason(1000, 'session reconnected elsewhere', 'enabled'),
} as const;

/** Statuses of a close the server did not choose. */
const CLIENT_CLOSED = 'websocket_disconnected';
const NETWORK_ERROR = 'websocket_network_error';

/** A session with no subscription this long after its welcome is closed (4003). */
export const UNUSED_AFTER_MS = 10_000;
/**
 * A client that stops reading: the messages that wait for its socket (in the process, past what the
 * kernel's buffers took) above this many bytes for SLOW_READER_MS close the session (4005). A reader
 * that keeps up never comes near it: a notification is under 2 KiB; the bound keeps one stuck
 * client from holding the process's memory.
 */
export const SLOW_READER_BYTES = 1 << 20;
export const SLOW_READER_MS = 10_000;
/** How long a closing handshake may take before the socket is cut (a client that no longer reads). */
const CLOSE_WAIT_MS = 1000;

/** A session's timings: `--ws-ping` (src/config.ts). */
export interface SessionTimings {
  pingMs: number;
}

export interface SessionHooks {
  /** whether a subscription was ever made for the session (asked once, when it may be unused) */
  wasUsed(): Promise<boolean>;
  /** the socket closed; `status` is its subscriptions' new status */
  closed(status: string): void;
}

export class Session implements WelcomeSession {
  readonly id: string;
  readonly connectedAt: number;
  readonly keepaliveSeconds: number;
  /** a subscription of it reached this process's index */
  used = false;
  /** keepalives stopped by the admin API (to test a client's timeout) */
  silenced = false;
  /** `session_reconnect` was sent: the row is `reconnecting` until claimed or the grace ends */
  reconnecting = false;
  /** claimed by another connection: its close is not the session's end */
  handedOver = false;
  readonly #socket: WebSocket;
  readonly #hooks: SessionHooks;
  #closing: CloseReason | undefined;
  #keepalive: NodeJS.Timeout | undefined;
  #ping: NodeJS.Timeout | undefined;
  #unused: NodeJS.Timeout | undefined;
  #slowReader: NodeJS.Timeout | undefined;
  #cut: NodeJS.Timeout | undefined;
  #awaitingPong = false;
  readonly #timings: SessionTimings;

  constructor(socket: WebSocket, s: WelcomeSession, hooks: SessionHooks, timings: SessionTimings) {
    this.id = s.id;
    this.connectedAt = s.connectedAt;
    this.keepaliveSeconds = s.keepaliveSeconds;
    this.#socket = socket;
    this.#hooks = hooks;
    this.#timings = timings;
    socket.on('message', () => this.close(CLOSE.inboundTraffic));
    socket.on('pong', () => {
      this.#awaitingPong = false;
    });
    // Errors of the frames received (too large, malformed) are the client's traffic; others are
    // the network's. `ws` closes the socket itself after either.
    socket.on('error', (err: Error & { code?: string }) => {
      this.#closing ??= err.code?.startsWith('WS_ERR_')
        ? CLOSE.inboundTraffic
        : { code: 1006, reason: '', status: NETWORK_ERROR };
    });
    socket.once('close', () => {
      this.#clearTimers();
      clearTimeout(this.#cut);
      hooks.closed(this.#closing?.status ?? CLIENT_CLOSED);
    });
  }

  get open(): boolean {
    return this.#socket.readyState === this.#socket.OPEN && this.#closing === undefined;
  }

  /** Sends the welcome and starts the timers. */
  start(): void {
    if (!this.open) return;
    this.send(welcomeMessage(this));
    this.#ping = setInterval(() => {
      if (this.#awaitingPong) return this.close(CLOSE.pingPong);
      this.#awaitingPong = true;
      this.#socket.ping();
    }, this.#timings.pingMs);
    this.#unused = setTimeout(() => void this.#closeIfUnused(), UNUSED_AFTER_MS);
  }

  async #closeIfUnused(): Promise<void> {
    if (this.used || !this.open) return;
    let used = false;
    try {
      used = await this.#hooks.wasUsed();
    } catch {
      // The store unreachable: the session is given the benefit of the doubt.
      used = true;
    }
    if (!used) this.close(CLOSE.unused);
  }

  /** Sends one message (dropped once the session is closing); it restarts the keepalive timer. */
  send(text: string): void {
    if (!this.open) return;
    this.#socket.send(text);
    this.#armKeepalive();
    if (this.#slowReader === undefined && this.#socket.bufferedAmount > SLOW_READER_BYTES)
      this.#slowReader = setTimeout(() => {
        this.#slowReader = undefined;
        if (this.#socket.bufferedAmount > SLOW_READER_BYTES) this.close(CLOSE.networkTimeout);
      }, SLOW_READER_MS);
  }

  /** Stops or restarts the keepalives (the admin API). */
  silence(silenced: boolean): void {
    this.silenced = silenced;
    this.#armKeepalive();
  }

  #armKeepalive(): void {
    clearTimeout(this.#keepalive);
    if (this.silenced || !this.open) return;
    this.#keepalive = setTimeout(() => this.send(keepaliveMessage()), (this.keepaliveSeconds - 1) * 1000);
  }

  /**
   * Closes with `why` (the first reason given wins); `closed` is called once the socket is. A client
   * that does not answer the closing handshake within a second (one that stopped reading, or
   * answering pings) is cut, rather than held for the WebSocket layer's 30 s.
   */
  close(why: CloseReason): void {
    if (this.#closing) return;
    this.#closing = why;
    this.#clearTimers();
    this.#socket.close(why.code, why.reason);
    this.#cut = setTimeout(() => this.#socket.terminate(), CLOSE_WAIT_MS);
  }

  /** Cuts the connection without the closing handshake (a client that does not answer it). */
  terminate(): void {
    this.#socket.terminate();
  }

  #clearTimers(): void {
    clearTimeout(this.#keepalive);
    clearInterval(this.#ping);
    clearTimeout(this.#unused);
    clearTimeout(this.#slowReader);
  }
}
