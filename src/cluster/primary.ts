// `helixd serve --workers N`: N processes serving one port (node:cluster), which behave as N
// instances of helixd on one store: a machine's cores used as several instances would use them.
// What the primary and each worker do, what they share and why: docs/production.md, "Running N
// workers or N instances".
import cluster, { type Worker } from 'node:cluster';
import { type ClockMove, type ClockReading, clockFor } from '../clock.ts';
import type { Config } from '../config.ts';
import { FAULT_STATE, type FaultSetting, faultSettingOf } from '../faults/injector.ts';
import { ClusterMetrics } from '../metrics/registry.ts';
import { announce, type Prepared, prepareStore, withConcretePort } from '../server.ts';
import { openStore } from '../store/db.ts';
import { primaryClock } from './clock.ts';
import type { Message, WorkerMessage } from './messages.ts';
import { stopBackstop, untilStopSignal } from './shutdown.ts';
import { PrimaryState, STATE_MESSAGES } from './state.ts';

type Print = (line: string) => void;

/** A worker that died is started again after this, doubled for each death in the last minute. */
const RESTART_FIRST_MS = 100;
const RESTART_MAX_MS = 10_000;
const RESTART_WINDOW_MS = 60_000;

/** The primary of `--workers N`: returns once every worker has stopped after a stop signal. */
export async function servePrimary(requested: Config, print: Print): Promise<void> {
  const config = await withConcretePort(requested);
  const clock = clockFor(config);
  const workers = new Workers(config, primaryClock(clock, config.queryTimeout), print);
  try {
    const prepared = await prepareStore(config, clock, print);
    await workers.start(prepared);
    const store = openStore({ url: config.db });
    try {
      await announce(config, store, clock, prepared, print);
    } finally {
      await store.close();
    }
  } catch (err) {
    await workers.stop({ drain: false });
    throw err;
  }
  print(`helixd: ${config.workers} worker processes (pids ${workers.pids().join(', ')})`);
  if (config.rateLimit > 0 && !config.redisUrl)
    print(
      `helixd: each worker keeps its own rate-limit buckets: a client may make up to ${config.workers} x ${config.rateLimit} requests a minute; --redis-url shares them`,
    );
  await untilStopSignal(
    config,
    (o) => workers.stop(o),
    (signal, drain) =>
      print(`helixd: ${signal}: ${drain ? 'the workers drain, then stop' : 'the workers stop now'}`),
  );
}

class Workers {
  readonly #config: Config;
  readonly #clock: PrimaryState<ClockReading, ClockMove>;
  /** the rules and seed of --faults, one for every worker (chosen here: a seed left unset too) */
  readonly #faults: PrimaryState<FaultSetting, FaultSetting>;
  readonly #print: Print;
  /** workers that are serving */
  readonly #listening = new Set<Worker>();
  #prepared: Prepared | undefined;
  #stopping = false;
  // Before any worker is forked: it listens for the workers' figures.
  readonly #metrics = new ClusterMetrics();
  #deaths: number[] = [];
  /** the worker whose live world runs its timer (--live) */
  #liveWorker: Worker | undefined;

  constructor(config: Config, clock: PrimaryState<ClockReading, ClockMove>, print: Print) {
    this.#config = config;
    this.#clock = clock;
    this.#faults = new PrimaryState(
      FAULT_STATE,
      faultSettingOf(config),
      (_, next) => next,
      config.queryTimeout,
    );
    this.#print = print;
  }

  pids(): number[] {
    return [...this.#listening].map((w) => w.process.pid as number);
  }

  /** Starts every worker; rejects if one exits before it listens (the caller stops the others). */
  async start(prepared: Prepared): Promise<void> {
    this.#prepared = prepared;
    // The program this one runs (bin/helixd.js, or the sources in development), as `serve`: a
    // worker takes its configuration from the primary, not from its command line.
    cluster.setupPrimary({ args: ['serve'] });
    await Promise.all(
      Array.from({ length: this.#config.workers }, async () => {
        const worker = this.#fork();
        const code = await Promise.race([
          new Promise<undefined>((resolve) => worker.once('listening', () => resolve(undefined))),
          new Promise<number | string>((resolve) =>
            worker.once('exit', (c: number, signal: string) => resolve(signal ?? c)),
          ),
        ]);
        if (code !== undefined) throw new Error(`a worker exited (${code}) before it was serving`);
      }),
    );
    cluster.on('exit', (worker, code, signal) => this.#replace(worker, signal ?? `code ${code}`));
  }

  #fork(): Worker {
    const worker = cluster.fork();
    closeUntakenOnExit(worker);
    // Asked for by the worker once it listens for messages: one sent earlier would be lost.
    worker.on('message', (m: WorkerMessage) => {
      if (m.type === 'ready') {
        // It hears every move of the clock, and every change of the fault rules, from here on, and
        // starts from what they are now.
        this.#clock.join(worker);
        this.#faults.join(worker);
        worker.send({
          type: 'start',
          config: this.#liveTimerTo(worker),
          prepared: this.#prepared as Prepared,
          clock: this.#clock.shared,
          faults: this.#faults.shared,
        } satisfies Message);
      } else if (STATE_MESSAGES.includes(m.type)) {
        if (!this.#clock.answer(worker, m)) this.#faults.answer(worker, m);
      } else this.#metrics.answer(worker, m);
    });
    worker.once('listening', () => this.#listening.add(worker));
    worker.once('exit', () => this.#listening.delete(worker));
    return worker;
  }

  /**
   * The configuration `worker` serves with. The live world's timer (--live) runs in one worker
   * only, so that its events are not made once per worker: the first to ask, and after it dies,
   * its replacement; every other worker gets a rate of 0 (its POST /admin/live/step still works).
   */
  #liveTimerTo(worker: Worker): Config {
    if (!this.#config.live) return this.#config;
    if (this.#liveWorker === undefined || this.#liveWorker.isDead()) {
      this.#liveWorker = worker;
      return this.#config;
    }
    return { ...this.#config, liveRate: 0 };
  }

  #replace(dead: Worker, how: string): void {
    if (this.#stopping) return;
    const now = Date.now();
    this.#deaths = [...this.#deaths.filter((t) => now - t < RESTART_WINDOW_MS), now];
    const delay = Math.min(RESTART_MAX_MS, RESTART_FIRST_MS * 2 ** (this.#deaths.length - 1));
    this.#print(
      `helixd: worker ${dead.process.pid} exited (${how}); starting another in ${(delay / 1000).toFixed(1)} s`,
    );
    setTimeout(() => {
      if (this.#stopping) return;
      const worker = this.#fork();
      worker.once('listening', () =>
        this.#print(`helixd: worker ${worker.process.pid} serving, in place of ${dead.process.pid}`),
      );
    }, delay);
  }

  /** Passes a stop on to every worker; resolves once all have exited. */
  async stop({ drain }: { drain: boolean }): Promise<void> {
    this.#stopping = true;
    const all = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    const exited = all.map((w) =>
      w.isDead() ? Promise.resolve() : new Promise<void>((resolve) => w.once('exit', () => resolve())),
    );
    for (const w of all) {
      if (w.isDead()) continue;
      // A worker that is not serving yet has nothing to finish.
      if (!this.#listening.has(w)) w.process.kill('SIGKILL');
      else if (w.isConnected()) w.send({ type: 'stop', drain } satisfies Message);
    }
    // Each worker keeps its own deadline; this one is for a worker that does not.
    const backstop = setTimeout(() => {
      for (const w of all) if (!w.isDead()) w.process.kill('SIGKILL');
    }, stopBackstop(this.#config, 2) * 1000);
    await Promise.all(exited);
    clearTimeout(backstop);
  }
}

/** node:cluster's message handing a worker a new connection, and the worker's answer to it. */
interface ClusterMessage {
  cmd?: unknown;
  act?: unknown;
  seq?: unknown;
  ack?: unknown;
}
const asClusterMessage = (m: unknown): ClusterMessage | undefined =>
  typeof m === 'object' && m !== null && (m as ClusterMessage).cmd === 'NODE_CLUSTER'
    ? (m as ClusterMessage)
    : undefined;

/**
 * Closes, once `worker` has exited, each connection the primary handed it that it had not taken.
 *
 * The primary (node:cluster, round robin) accepts a connection and sends its handle to a worker
 * over the IPC channel, keeping its own copy open until the worker answers that it took it; only
 * then does it close that copy (the worker's copy is the connection from there on), and send that
 * worker its next one. A worker that dies before answering, such as one killed while busy, with
 * the message still unread, never answers: node:cluster forgets the worker but not that handle, so
 * the primary's copy stays open, no process reads the request or closes the connection, and the
 * client waits for its own timeout. There is at most one such connection per worker, and a worker
 * killed under load has one most of the time. Closed here, the connection is reset, as are the
 * requests in flight on the dead worker, and the client can retry. (Handed to another worker
 * instead, it might have been partly read by the dead one.)
 *
 * node:cluster keeps these handles to itself, so they are seen as they pass: its `newconn` message,
 * sent with the handle through `send`, and the worker's answer, an internal message whose `ack` is
 * that message's `seq`. A Node.js that named them otherwise would leave this closing nothing (and
 * test/cluster/workers.test.ts failing), never a connection closed that a worker serves.
 */
function closeUntakenOnExit(worker: Worker): void {
  const child = worker.process;
  const untaken = new Map<unknown, { close(): void }>();
  let exited = false;
  const send = child.send;
  child.send = function (this: typeof child, ...args: unknown[]) {
    const m = asClusterMessage(args[0]);
    const handle = args[1] as { close?: unknown } | undefined;
    if (m?.act === 'newconn' && typeof handle?.close === 'function') {
      const closable = handle as { close(): void };
      // Between the worker's exit and the primary's hearing that its channel closed.
      if (exited) {
        closable.close();
        return false;
      }
      untaken.set(m.seq, closable);
    }
    return (send as (...a: unknown[]) => boolean).apply(this, args);
  } as typeof child.send;
  child.on('internalMessage', (message: unknown) => {
    const m = asClusterMessage(message);
    if (m?.ack !== undefined) untaken.delete(m.ack);
  });
  worker.once('exit', () => {
    exited = true;
    for (const handle of untaken.values()) handle.close();
    untaken.clear();
  });
}
