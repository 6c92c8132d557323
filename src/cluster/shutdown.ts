// Stopping without dropping a request the server accepted.
//
// 1. Drain: /readyz answers 503 at once, so that a load balancer stops sending here, while the
//    listener still accepts and every request is served for the drain period. Every response from
//    then on carries `Connection: close`: a client's next request opens a new connection, which the
//    load balancer sends to another instance, instead of reusing one this server is about to close.
// 2. Close: the listener stops accepting; the requests in progress finish, each connection closing
//    after its response. A connection with no request in progress is closed after a short pause:
//    a client that has just had its answer on it may have sent its next request already, which
//    the server has not read yet (closing then would reset it); in the pause it is read and served.
//    After a drain, such connections have been idle through all of it.
// 3. Deadline: what is still open after the grace period is cut, and logged. A slow client cannot
//    get there: request headers and bodies have time limits (app.ts), answered with a 408.
//
// A client that sends on a connection idle for longer than that pause, at the very moment it is
// closed, still sees it reset: no server can tell that a request is on its way. The drain is what
// empties that window: a client still reusing a connection during it got `close` on its last answer.
import type { Server, ServerResponse } from 'node:http';
import { Server as NetServer } from 'node:net';
import type { Config } from '../config.ts';

/**
 * How long a request's headers, and the whole request with its body, may take to arrive: then the
 * server answers 408 and closes the connection (app.ts). A client sending a byte now and then
 * cannot hold a connection, nor a shutdown, open.
 */
export const REQUEST_TIMEOUT_SECONDS = 10;

/**
 * Seconds the requests in progress have, after the listener closed, before they are cut: enough
 * for one that had just begun to arrive, or to be refused with its 408, and to be answered.
 */
export const SHUTDOWN_GRACE_SECONDS = REQUEST_TIMEOUT_SECONDS + 5;

/** How long after the listener closes the connections with no request in progress are closed. */
const IDLE_PAUSE_MS = 1000;

/** What /readyz consults. */
export interface DrainState {
  readonly draining: boolean;
  /**
   * Runs `fn` once the drain is over, before the listener closes: the connections that no request
   * ends (EventSub's WebSockets) are closed then, else the close would wait for them until the deadline.
   */
  beforeClose?(fn: () => Promise<void>): void;
  /**
   * Runs `fn` when a drain of more than 0 s begins: EventSub's sessions are told to reconnect then,
   * so that their clients move to another worker or instance while this one still serves them.
   */
  onDrain?(fn: () => Promise<void>): void;
}

interface Log {
  warn(obj: object, msg: string): void;
}

/** The log line of a stop: what happens next, for a drain of `drainSeconds` (0: none). */
export function stopMessage(drainSeconds: number): string {
  return drainSeconds > 0
    ? `shutting down: /readyz answers 503 for ${drainSeconds} s (the drain), then no new connections; requests in flight finish`
    : 'shutting down: no new connections; requests in flight finish';
}

export class Shutdown implements DrainState {
  readonly #inProgress = new Set<ServerResponse>();
  #draining = false;
  #closingIdle = false;
  #server: Server | undefined;
  #endDrain: (() => void) | undefined;
  #done: Promise<void> | undefined;
  readonly #beforeClose: (() => Promise<void>)[] = [];
  readonly #onDrain: (() => Promise<void>)[] = [];

  get draining(): boolean {
    return this.#draining;
  }

  beforeClose(fn: () => Promise<void>): void {
    this.#beforeClose.push(fn);
  }

  onDrain(fn: () => Promise<void>): void {
    this.#onDrain.push(fn);
  }

  /** Watches `server`'s requests; before it listens. */
  attach(server: Server): void {
    this.#server = server;
    // Before Fastify's own listener, so that the header is there whatever answers the request.
    server.prependListener('request', (_req, res: ServerResponse) => {
      if (this.#draining) res.setHeader('connection', 'close');
      this.#inProgress.add(res);
      res.once('close', () => {
        this.#inProgress.delete(res);
        // A response whose headers were sent before the drain began said keep-alive: once it is
        // done, its connection is idle and, after the pause, nothing else would close it.
        if (this.#closingIdle) setImmediate(() => server.closeIdleConnections());
      });
    });
  }

  /**
   * Drains for `drainSeconds` (or until `endDrain`), closes the listener and waits for the requests
   * in progress, cutting them after `graceSeconds`. Later calls return the same promise.
   */
  run(drainSeconds: number, graceSeconds: number, log: Log): Promise<void> {
    this.#done ??= this.#run(drainSeconds, graceSeconds, log);
    return this.#done;
  }

  /** Ends the drain period now (a second stop signal): the listener closes at once. */
  endDrain(): void {
    this.#endDrain?.();
  }

  async #run(drainSeconds: number, graceSeconds: number, log: Log): Promise<void> {
    const server = this.#server;
    if (!server) throw new Error('Shutdown.attach was not called');
    this.#draining = true;
    for (const res of this.#inProgress) if (!res.headersSent) res.setHeader('connection', 'close');
    if (drainSeconds > 0) {
      for (const fn of this.#onDrain)
        fn().catch((err) => log.warn({ err }, 'shutdown: handing the WebSocket sessions over failed'));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, drainSeconds * 1000);
        this.#endDrain = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    for (const fn of this.#beforeClose)
      await fn().catch((err) => log.warn({ err }, 'shutdown: closing the WebSocket sessions failed'));
    const deadline = setTimeout(() => {
      log.warn(
        { cut: this.#inProgress.size },
        `shutdown deadline: ${this.#inProgress.size} request(s) still in progress after ${graceSeconds} s were cut`,
      );
      server.closeAllConnections();
    }, graceSeconds * 1000);
    // Stops accepting; calls back once every connection has ended. net.Server's close, not
    // http.Server's: that one also stops the timer that enforces the request time limits, and a
    // slow request would then hold the stop until the deadline.
    const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
    const pause = setTimeout(() => {
      this.#closingIdle = true;
      server.closeIdleConnections();
    }, IDLE_PAUSE_MS);
    await closed;
    clearTimeout(pause);
    clearTimeout(deadline);
  }
}

type Stop = (o: { drain: boolean }) => Promise<void>;

/**
 * Seconds after the stop signal when a worker still running is killed, and then when a process
 * still running exits: each process cuts its requests at drain + grace itself, so only a bug or a
 * stuck close gets there.
 */
export const stopBackstop = (config: Config, extra: number) => config.drain + SHUTDOWN_GRACE_SECONDS + extra;

/**
 * Resolves once `stop` has finished after SIGINT or SIGTERM. The first signal drains
 * (`--drain`), a second one closes the listener at once; the requests accepted finish either way.
 * `told` hears of each signal, and whether it drains.
 */
export function untilStopSignal(
  config: Config,
  stop: Stop,
  told: (signal: NodeJS.Signals, drain: boolean) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let signals = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      signals++;
      told(signal, signals === 1);
      if (signals === 1)
        setTimeout(() => {
          process.stderr.write(
            `helixd: not stopped ${stopBackstop(config, 5)} s after the signal; exiting\n`,
          );
          process.exit(1);
        }, stopBackstop(config, 5) * 1000).unref();
      stop({ drain: signals === 1 }).then(() => {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        resolve();
      }, reject);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}
