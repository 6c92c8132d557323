// What /metrics reports (Prometheus text format), every metric defined here and nowhere else. Each
// app has its own registry, so that several apps in one process (tests) count apart; the process's
// own figures (CPU, memory, event loop, GC: prom-client's default metrics) live in one registry per
// process, since they describe the process whichever app serves them, and their collectors (a GC
// observer, an event-loop monitor) are never stopped once started.
//
// Several processes (`serve --workers N`, node:cluster) aggregate with prom-client's
// AggregatorRegistry: a worker hands its app's `registries` to AggregatorRegistry.setRegistries,
// and answers the primary's asks once it has constructed an AggregatorRegistry of its own (the
// constructor installs the listener). A worker answering /metrics asks its primary for the sum
// (clusterMetrics) over the IPC channel, within a deadline. Every metric here sums across workers
// (counters, histograms, the open sessions each holds) but the count of EventSub subscriptions,
// which every worker reads from the one store (the first worker's is taken), and the outbox lag of
// each worker's tail (the largest is taken); the default metrics carry prom-client's own rule for
// each.
import type { Worker } from 'node:cluster';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CompiledQuery, LogEvent } from 'kysely';
import { AggregatorRegistry, Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Principal } from '../http/access.ts';
import type { Store } from '../store/db.ts';
import { lastEventId } from '../store/events.ts';
import { subscriptionCounts } from '../store/eventsub-subscriptions.ts';
import { deadlineReason, UnavailableError } from '../store/unavailable.ts';

/** The `operation` of a request that matched no route: raw URLs would make label values unbounded. */
export const UNMATCHED_OPERATION = 'unmatched';

// Answers take from well under a millisecond (a page from SQLite) to seconds (a cold PostgreSQL);
// prom-client's default buckets start at 5 ms, where most of helixd's answers are already done.
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const QUERY_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
];

// An EventSub notification reaches its receiver within milliseconds of its commit (the tail's
// wake), a webhook one retried seconds or minutes later.
const DELIVERY_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300,
];

/** The most answers (and queries) held before they are handed to prom-client. */
const BATCH = 256;

interface Answer {
  method: string;
  operation: string;
  status: number;
  seconds: number;
}

interface QueryTime {
  labels: { statement: string; outcome: string };
  seconds: number;
}

let processRegistry: Registry | undefined;

/** The process's own figures (prom-client's default metrics), started once per process. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

const STATEMENTS = ['select', 'insert', 'update', 'delete', 'with', 'other'] as const;
type Statement = (typeof STATEMENTS)[number];

// Queries built with Kysely say what they are; only raw SQL (migrations, pragmas, ping) is read.
const STATEMENT_OF_NODE: Record<string, Statement> = {
  SelectQueryNode: 'select',
  InsertQueryNode: 'insert',
  UpdateQueryNode: 'update',
  DeleteQueryNode: 'delete',
};

/** A query's statement kind: a bounded label, whatever the SQL text. */
function statementOf(query: CompiledQuery): Statement {
  const known = STATEMENT_OF_NODE[query.query.kind];
  if (known) return known;
  const word = /^\s*(\w+)/.exec(query.sql)?.[1]?.toLowerCase();
  return STATEMENTS.find((s) => s === word) ?? 'other';
}

export class AppMetrics {
  readonly registry = new Registry();

  // What every request adds waits here and reaches prom-client in batches: when a batch is full,
  // and before every read of the registry (the metrics' `collect`, which /metrics and
  // AggregatorRegistry both go through). prom-client's work per observation (a label hash, a
  // lookup) costs less run back to back than spread between requests.
  readonly #answers: Answer[] = [];
  readonly #queries: QueryTime[] = [];
  #tokenHits = 0;
  #tokenMisses = 0;
  readonly #flush = () => {
    for (const a of this.#answers) {
      this.#requests.inc({ method: a.method, operation: a.operation, status: a.status });
      this.#requestSeconds.observe({ method: a.method, operation: a.operation }, a.seconds);
    }
    this.#answers.length = 0;
    for (const q of this.#queries) this.#querySeconds.observe(q.labels, q.seconds);
    this.#queries.length = 0;
    this.#tokenLookups.inc({ result: 'hit' }, this.#tokenHits);
    this.#tokenLookups.inc({ result: 'miss' }, this.#tokenMisses);
    this.#tokenHits = this.#tokenMisses = 0;
  };

  readonly #requests = new Counter({
    name: 'helixd_http_requests_total',
    help: 'Requests answered, by method, operation (the route pattern) and status',
    labelNames: ['method', 'operation', 'status'] as const,
    registers: [this.registry],
    collect: this.#flush,
  });

  readonly #requestSeconds = new Histogram({
    name: 'helixd_http_request_duration_seconds',
    help: 'Time from a request to the end of its answer, by method and operation (the route pattern)',
    labelNames: ['method', 'operation'] as const,
    buckets: REQUEST_BUCKETS,
    registers: [this.registry],
    collect: this.#flush,
  });

  readonly #querySeconds = new Histogram({
    name: 'helixd_store_query_duration_seconds',
    help: 'Time the store took to run a query, by statement (select, insert, update, delete, with, other) and outcome (ok, error)',
    labelNames: ['statement', 'outcome'] as const,
    buckets: QUERY_BUCKETS,
    registers: [this.registry],
    collect: this.#flush,
  });

  readonly #refusals = new Counter({
    name: 'helixd_rate_limit_refusals_total',
    help: 'Requests refused with 429 because their bucket was empty, by bucket kind (app, user)',
    labelNames: ['bucket'] as const,
    registers: [this.registry],
  });

  readonly #faults = new Counter({
    name: 'helixd_faults_injected_total',
    help: 'Faults injected into requests (development profile: Helixd-Fault header, --faults), by kind (429, 500, 503, latency, reset) and source (header, rules)',
    labelNames: ['kind', 'source'] as const,
    registers: [this.registry],
  });

  readonly #liveEvents = new Counter({
    name: 'helixd_live_events_total',
    help: 'Events of the live world (--live: viewers, live, offline, clip, video, subscription, follow, marker), by kind',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly #tokenLookups = new Counter({
    name: 'helixd_token_cache_lookups_total',
    help: 'Access-token lookups, by whether the token was kept in memory (hit) or read from the store (miss)',
    labelNames: ['result'] as const,
    registers: [this.registry],
    collect: this.#flush,
  });

  /** the EventSub sessions this process holds (src/eventsub/service.ts says how many) */
  #openSessions: () => number = () => 0;

  readonly #eventsubSessions: Gauge = new Gauge({
    name: 'helixd_eventsub_sessions',
    help: 'EventSub WebSocket sessions open in this process (under --workers, in all of them)',
    registers: [this.registry],
    collect: () => this.#eventsubSessions.set(this.#openSessions()),
  });

  readonly #eventsubSubscriptions: Gauge<'transport' | 'status'> = new Gauge({
    name: 'helixd_eventsub_subscriptions',
    help: 'EventSub subscriptions in the store, by transport (websocket, webhook) and status',
    labelNames: ['transport', 'status'] as const,
    registers: [this.registry],
    // Every worker reads the same store: one worker's count is the count.
    aggregator: 'first',
    collect: () => this.#countSubscriptions(),
  });

  /** the id this process's outbox tail has read through, undefined while it has none (src/eventsub/) */
  #outboxCursor: () => Promise<number | undefined> = async () => undefined;

  readonly #outboxLag: Gauge = new Gauge({
    name: 'helixd_eventsub_outbox_lag',
    help: "EventSub outbox events this process's tail has not yet read: the store's last event id minus the tail's cursor (under --workers, the most of any worker)",
    registers: [this.registry],
    // Each process has a tail of its own: the one furthest behind says how late a WebSocket
    // notification can be; a sum would grow with the number of workers, not with the delay.
    aggregator: 'max',
    collect: () => this.#measureOutboxLag(),
  });

  readonly #deliveries = new Counter({
    name: 'helixd_eventsub_deliveries_total',
    help: 'EventSub notifications sent (a duplicated one twice), by transport (websocket, webhook) and subscription type',
    labelNames: ['transport', 'type'] as const,
    registers: [this.registry],
  });

  readonly #deliveryFailures = new Counter({
    name: 'helixd_eventsub_delivery_failures_total',
    help: 'EventSub notifications not delivered (a webhook attempt that failed, a WebSocket message dropped), by transport and subscription type',
    labelNames: ['transport', 'type'] as const,
    registers: [this.registry],
  });

  readonly #deliverySeconds = new Histogram({
    name: 'helixd_eventsub_delivery_seconds',
    help: "Time from an EventSub event's commit to its notification's send, by transport (websocket, webhook)",
    labelNames: ['transport'] as const,
    buckets: DELIVERY_BUCKETS,
    registers: [this.registry],
  });

  readonly #store: Store;
  readonly #stopQueries: () => void;
  /** in a cluster worker: how long the primary has to answer with every worker's sum */
  readonly #summedWithin: number | undefined;

  /**
   * `summed`: this app is a cluster worker's (one per process), whose /metrics reports the sum over
   * every worker, which its primary (a ClusterMetrics) gathers within `deadlineMs`.
   */
  constructor(store: Store, o: { summed?: { deadlineMs: number } } = {}) {
    processMetrics();
    this.#store = store;
    // Known label values start at 0, so that a rate over them exists before the first event.
    for (const bucket of ['app', 'user']) this.#refusals.inc({ bucket }, 0);
    this.#stopQueries = store.onQuery((event) => this.#query(event));
    this.#summedWithin = o.summed?.deadlineMs;
    if (o.summed) {
      joinClusterMetrics();
      AggregatorRegistry.setRegistries(this.registries);
    }
  }

  /** Every registry whose metrics /metrics shows (what a cluster worker hands to AggregatorRegistry). */
  get registries(): Registry[] {
    return [this.registry, processMetrics()];
  }

  /** Counts an answered request (a Fastify onResponse hook). */
  readonly onResponse = (req: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const method = req.method;
    const operation = req.routeOptions.url ?? UNMATCHED_OPERATION;
    this.#answers.push({ method, operation, status: reply.statusCode, seconds: reply.elapsedTime / 1000 });
    if (this.#answers.length >= BATCH) this.#flush();
    done();
  };

  readonly tokenLookup = (hit: boolean): void => {
    if (hit) this.#tokenHits++;
    else this.#tokenMisses++;
  };

  readonly rateLimitRefusal = (principal: Principal): void => {
    this.#refusals.inc({ bucket: principal.kind });
  };

  /** Counts `n` injected faults of `kind` (n = 0: the series exists before the first). */
  readonly faultInjected = (kind: string, source: string, n = 1): void => {
    this.#faults.inc({ kind, source }, n);
  };

  /** Counts `n` events of the live world of `kind` (n = 0: the series exists before the first). */
  readonly liveEvent = (kind: string, n = 1): void => {
    this.#liveEvents.inc({ kind }, n);
  };

  /** How many EventSub sessions this process holds, asked at every scrape. */
  countEventSubSessions(open: () => number): void {
    this.#openSessions = open;
  }

  /** Where this process's outbox tail is (undefined while it has none), asked at every scrape. */
  measureOutboxLag(cursor: () => Promise<number | undefined>): void {
    this.#outboxCursor = cursor;
  }

  /** An EventSub notification of `type` sent by `transport`, its event committed at `committedAt` (Unix ms). */
  readonly eventsubDelivered = (transport: string, type: string, committedAt: number): void => {
    this.#deliveries.inc({ transport, type });
    this.#deliverySeconds.observe({ transport }, Math.max(0, Date.now() - committedAt) / 1000);
  };

  /** An EventSub notification of `type` that `transport` failed to deliver (or dropped on purpose). */
  readonly eventsubDeliveryFailed = (transport: string, type: string): void => {
    this.#deliveryFailures.inc({ transport, type });
  };

  async #countSubscriptions(): Promise<void> {
    let rows: Awaited<ReturnType<typeof subscriptionCounts>>;
    try {
      rows = await subscriptionCounts(this.#store.db);
    } catch {
      // The store cannot answer: /metrics still does (the request and query metrics say why).
      return;
    }
    this.#eventsubSubscriptions.reset();
    for (const r of rows) this.#eventsubSubscriptions.set({ transport: r.method, status: r.status }, r.n);
  }

  async #measureOutboxLag(): Promise<void> {
    // The cursor first: it only moves forward, so a cursor read before the last id can only make
    // the lag larger than it is by the end of the scrape, never hide events behind.
    const cursor = await this.#outboxCursor();
    // No tail: the process has accepted no WebSocket, so it sends no notification that could wait
    // on the outbox (webhook messages are queued in the write's own transaction, not read from the
    // tail). It reports 0 rather than no sample, so that the series exists from the start (an
    // alert needs no absent()) and, under --workers, a worker without sessions leaves the max alone.
    if (cursor === undefined) {
      this.#outboxLag.set(0);
      return;
    }
    let last: number;
    try {
      // max(id) on the primary key: one index lookup, however long the outbox.
      last = await lastEventId(this.#store.db);
    } catch {
      // The store cannot answer: /metrics still does, with the last figure read.
      return;
    }
    // Ids, not rows: on PostgreSQL a rolled-back write leaves a gap in the ids, so the figure is an
    // upper bound. A pruned outbox may hold no event at all (last 0): nothing is behind then.
    this.#outboxLag.set(Math.max(0, last - cursor));
  }

  // Every query passes here: the label sets are built once, not per query.
  readonly #queryLabels = Object.fromEntries(
    STATEMENTS.map((statement) => [
      statement,
      { ok: { statement, outcome: 'ok' }, error: { statement, outcome: 'error' } },
    ]),
  ) as Record<Statement, Record<'ok' | 'error', { statement: Statement; outcome: string }>>;

  #query(event: LogEvent): void {
    const labels = this.#queryLabels[statementOf(event.query)][event.level === 'query' ? 'ok' : 'error'];
    this.#queries.push({ labels, seconds: event.queryDurationMillis / 1000 });
    if (this.#queries.length >= BATCH) this.#flush();
  }

  /** whether /metrics reports the sum over every worker of `--workers` (and may then answer 503) */
  get summed(): boolean {
    return this.#summedWithin !== undefined;
  }

  /** The Prometheus text of every registry; in a cluster worker, the sum over every worker's. */
  async text(): Promise<string> {
    if (this.#summedWithin !== undefined) return askPrimary(this.#summedWithin);
    const texts = await Promise.all(this.registries.map((r) => r.metrics()));
    return texts.join('\n');
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** Stops hearing the store's queries (the store may outlive the app). */
  close(): void {
    this.#stopQueries();
  }
}

/** The type of a worker's ask for the sum over every worker, and of its primary's answer. */
const SUM = 'helixd:metrics';
interface SumAsk {
  type: typeof SUM;
  id: number;
}
type SumAnswer = SumAsk & ({ text: string } | { error: string });

const isSum = (m: unknown): m is SumAsk =>
  typeof m === 'object' && m !== null && (m as { type?: unknown }).type === SUM;

/**
 * The primary's side of `--workers`: constructed before any worker is forked (AggregatorRegistry
 * listens for the workers' registries), it answers a worker's ask with the sum over every worker.
 */
export class ClusterMetrics {
  readonly #aggregator = new AggregatorRegistry();

  /** Answers `message` from `worker` if it asks for the metrics (else leaves it alone). */
  answer(worker: Worker, message: unknown): void {
    if (!isSum(message)) return;
    // prom-client asks every connected worker, and rejects after its own 5 s if one stays silent
    // (a worker just forked, which does not listen yet); the asking worker's deadline comes first.
    this.#aggregator.clusterMetrics().then(
      (text) => this.#send(worker, { type: SUM, id: message.id, text }),
      (err: Error) => this.#send(worker, { type: SUM, id: message.id, error: err.message }),
    );
  }

  #send(worker: Worker, answer: SumAnswer): void {
    // A worker that has gone since it asked needs no answer.
    if (worker.isConnected()) worker.send(answer, undefined, () => {});
  }
}

let joined = false;
let asked = 0;
const waiting = new Map<number, (answer: SumAnswer) => void>();

/**
 * In a cluster worker: answers the primary's asks for this process's registries (prom-client's
 * listener, installed by constructing an AggregatorRegistry) and hears the primary's sums. Once per
 * process, as early as possible: an ask that arrives before the listener is lost.
 */
export function joinClusterMetrics(): void {
  if (joined) return;
  joined = true;
  new AggregatorRegistry();
  process.on('message', (m: unknown) => {
    if (isSum(m)) waiting.get(m.id)?.(m as SumAnswer);
  });
}

/** The sum over every worker, from the primary; an UnavailableError past `deadlineMs`. */
function askPrimary(deadlineMs: number): Promise<string> {
  const id = ++asked;
  return new Promise((resolve, reject) => {
    const fail = (reason: string) => {
      clearTimeout(timer);
      waiting.delete(id);
      reject(new UnavailableError('primary', reason));
    };
    const timer = setTimeout(() => fail(deadlineReason(deadlineMs)), deadlineMs);
    waiting.set(id, (answer) => {
      clearTimeout(timer);
      waiting.delete(id);
      if ('text' in answer) resolve(answer.text);
      else fail(`could not sum the workers' metrics (${answer.error})`);
    });
    const ask: SumAsk = { type: SUM, id };
    if (!process.send || !process.connected) fail(UNREACHABLE_PRIMARY);
    else process.send(ask, undefined, {}, (err) => err && fail(UNREACHABLE_PRIMARY));
  });
}

const UNREACHABLE_PRIMARY = 'cannot be reached (the IPC channel is closed)';
