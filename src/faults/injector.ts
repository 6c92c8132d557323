// Faults on demand, so that a client's tests meet Helix's failures before Helix serves
// them: a 429 in the middle of a paging loop, a 503, a slow answer, a connection dropped. Two ways
// to ask (their syntax: fault-rules.ts):
// - the `Helixd-Fault` request header, for one request (`status=503`, `latency=800ms`, `reset`,
//   `status=429, ratelimit-reset=1s`);
// - `--faults` at start (or PUT /admin/faults while running), rules drawn for each request from a
//   PRNG seeded with `--fault-seed`, so that the same seed and the same sequence of requests inject
//   the same faults (a failing test can be replayed). A request with the header gets the header's
//   faults (its draws are still made, so that the requests after it draw as they would have).
// The delivery rules (`drop-delivery`, `delay-delivery`, `dup-delivery`) are drawn instead for each
// EventSub notification sent (src/eventsub/service.ts, webhooks.ts), from a stream of their own.
// Under `--workers N` the rules and their seed are one across the workers (src/cluster/state.ts):
// a PUT through any worker holds in all of them when it answers. Each worker draws from its own
// generator, started from that seed when the rules were set (or when the worker started): the n-th
// request a worker takes draws the same in every run, and which worker takes a request is the
// primary's round robin of connections (one keep-alive connection stays on one worker).
// Only in the development profile: the production profile refuses --faults at start (config.ts) and
// ignores the header, as Helix ignores any header it does not know. Only the operations and the token
// service fail: the probes, /metrics and the admin API must keep telling the truth about the server.
// An injected answer is Helix's own: the rate limiter's 429 with its Ratelimit-* headers (the
// bucket full again a minute later, as Helix's emptied one, or as soon as the fault says), the
// Helix body of a dependency that cannot serve; every fault is counted in /metrics and named in the
// request's log line.
import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.ts';
import { localState, type SharedState } from '../cluster/state.ts';
import type { Config } from '../config.ts';
import { badRequest, HelixError, UNAVAILABLE_MESSAGE } from '../http/errors.ts';
import { OPERATION_PREFIXES } from '../http/operation.ts';
import type { AppMetrics } from '../metrics/registry.ts';
import { RATE_LIMIT_WINDOW_MS, rateLimitHeaders, rateLimitRefusal } from '../ratelimit/limiter.ts';
import { Random } from '../seed/random.ts';
import {
  type DeliveryPlan,
  describePlan,
  describeRule,
  FAULT_HEADER,
  FAULT_STATUSES,
  type FaultPlan,
  type FaultRule,
  type FaultStatus,
  FaultSyntaxError,
  parseFaultHeader,
} from './rules.ts';

/** The routes faults apply to: the operations and the token service (src/routes/oauth/index.ts). */
const FAULTABLE_PREFIXES = [...OPERATION_PREFIXES, '/oauth2', '/auth'].map((p) => `${p}/`);

/** Production's bucket size: what an injected 429 names when helixd's own limits are off. */
const PRODUCTION_POINTS = 800;

type Source = 'header' | 'rules';
const SOURCES: readonly Source[] = ['header', 'rules'];
const KINDS = [...FAULT_STATUSES.map(String), 'latency', 'reset'];

/** What was injected into a request, for its log line (src/http/logging.ts). */
export interface InjectedFault {
  injectedFault: string;
  faultSource: Source;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The fault injected into the request, if any: the fields its log line gets (null: none). */
    injectedFault: InjectedFault | null;
  }
}

const HEADER_NAME = FAULT_HEADER.toLowerCase();

/** The rules drawn for every request and the seed of their draws (undefined: no rules). */
export interface FaultSetting {
  rules: readonly FaultRule[];
  seed: number | undefined;
}

/** The name of the fault setting among the state the workers of `--workers` share. */
export const FAULT_STATE = 'faults';

/** `rules` drawn from `seed`: a new seed when unset and there are rules. */
export const faultSetting = (rules: readonly FaultRule[], seed?: number): FaultSetting => ({
  rules,
  seed: rules.length ? (seed ?? randomInt(2 ** 31 - 1)) : undefined,
});

/** The setting of `--faults` and `--fault-seed` (chosen once: under --workers, by the primary). */
export const faultSettingOf = (config: Config): FaultSetting => faultSetting(config.faults, config.faultSeed);

/** A change of the setting replaces it (the admin API has checked it). */
const replace = (_: FaultSetting, next: FaultSetting) => next;

/**
 * The client a request names before any body is read: its Client-Id header (the operations), else
 * `client_id` in the query string (the token service, as client libraries call it).
 */
function clientOf(req: FastifyRequest): string | undefined {
  const header = req.headers['client-id'];
  if (typeof header === 'string') return header;
  const query = (req.query as Record<string, unknown> | undefined)?.client_id;
  return typeof query === 'string' ? query : undefined;
}

export class FaultInjector {
  #rules: readonly FaultRule[] = [];
  #random: Random | undefined;
  /** the draws of the delivery rules: a stream of their own, so requests draw as without them */
  #deliveries: Random | undefined;
  /** the seed of the draws (logged at start when there are rules), else undefined */
  #seed: number | undefined;

  constructor(
    private readonly config: Config,
    /** the rate limiter's clock: an injected 429 names the reset the limiter's own would */
    private readonly clock: Clock,
    private readonly metrics: AppMetrics,
    /** the setting, changed by the admin API: in every worker under --workers */
    readonly setting: SharedState<FaultSetting, FaultSetting> = localState(faultSettingOf(config), replace),
  ) {
    setting.listen((s) => this.#adopt(s));
    if (this.enabled)
      for (const kind of KINDS) for (const source of SOURCES) metrics.faultInjected(kind, source, 0);
  }

  /**
   * Takes the rules (none: `[]`) and starts their draws again from their seed: from here on, the
   * same seed and requests inject the same faults.
   */
  #adopt({ rules, seed }: FaultSetting): void {
    this.#rules = rules;
    this.#seed = seed;
    this.#random = seed === undefined ? undefined : new Random(seed, 'faults');
    this.#deliveries = seed === undefined ? undefined : new Random(seed, 'deliveries');
  }

  /** the rules drawn for every request, and the seed of their draws */
  get rules(): { rules: readonly FaultRule[]; seed: number | undefined } {
    return { rules: this.#rules, seed: this.#seed };
  }

  /** faults exist only outside the production profile */
  get enabled(): boolean {
    return this.config.profile !== 'production';
  }

  /**
   * The faults of `--faults` for the next request, of client `clientId`: one draw per rule, whatever
   * the outcome and whichever client the rule is for, so that each request's draws depend only on
   * how many came before it.
   */
  #draw(clientId: string | undefined): FaultPlan | undefined {
    if (!this.#random) return undefined;
    const plan: FaultPlan = {};
    for (const rule of this.#rules) {
      if (!rule.fault) continue;
      const hit = this.#random.next() * 100 < rule.percent;
      if (!hit || (rule.clientId !== undefined && rule.clientId !== clientId)) continue;
      const { latencyMs, ...rest } = rule.fault;
      if (latencyMs !== undefined && plan.latencyMs === undefined) plan.latencyMs = latencyMs;
      if ((rest.status !== undefined || rest.reset) && plan.status === undefined && !plan.reset)
        Object.assign(plan, rest);
    }
    return Object.keys(plan).length ? plan : undefined;
  }

  /**
   * The fault of `--faults`' delivery rules for the next EventSub notification sent (the
   * WebSocket's or a webhook attempt), to a subscription of client `clientId`: one draw per
   * delivery rule, whatever the outcome; the first rule that hits wins. Counted in /metrics.
   */
  drawDelivery(clientId: string): DeliveryPlan | undefined {
    if (!this.#deliveries || !this.enabled) return undefined;
    let plan: DeliveryPlan | undefined;
    for (const rule of this.#rules) {
      if (!rule.delivery) continue;
      const hit = this.#deliveries.next() * 100 < rule.percent;
      if (!hit || plan || (rule.clientId !== undefined && rule.clientId !== clientId)) continue;
      plan = rule.delivery;
    }
    if (plan)
      this.metrics.faultInjected(
        'drop' in plan ? 'drop-delivery' : 'duplicate' in plan ? 'dup-delivery' : 'delay-delivery',
        'rules',
      );
    return plan;
  }

  /**
   * A Fastify onRequest hook: injects the request's faults, if any. A callback hook, not an async
   * one: most requests ask for none, and they pay no promise for it.
   */
  readonly onRequest = (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void => {
    let plan: FaultPlan | undefined;
    try {
      plan = this.#planOf(req);
    } catch (e) {
      done(e as Error);
      return;
    }
    if (!plan) done();
    else this.#inject(req, reply, plan).then(() => done(), done);
  };

  /** The faults `req` gets, from its header or the rules' draws; a 400 for a malformed header. */
  #planOf(req: FastifyRequest): FaultPlan | undefined {
    const route = req.routeOptions.url;
    if (!route || !FAULTABLE_PREFIXES.some((p) => route.startsWith(p))) return undefined;
    let plan = this.#draw(clientOf(req));
    let source: Source = 'rules';
    const header = req.headers[HEADER_NAME];
    if (header !== undefined) {
      try {
        // Repeated header lines count as one list, as HTTP reads them.
        plan = parseFaultHeader(Array.isArray(header) ? header.join(',') : header);
      } catch (e) {
        if (!(e instanceof FaultSyntaxError)) throw e;
        throw badRequest(`The header "${FAULT_HEADER}" was malformed: ${e.message}`);
      }
      source = 'header';
    }
    if (plan) this.#record(req, plan, source);
    return plan;
  }

  async #inject(req: FastifyRequest, reply: FastifyReply, plan: FaultPlan): Promise<void> {
    if (plan.latencyMs !== undefined) await sleep(plan.latencyMs);
    if (plan.reset) {
      reply.hijack();
      // No answer completes, so no request line is written: this one stands for it.
      const { method, url } = req;
      req.log.info(
        { method, route: req.routeOptions.url, url, ...req.injectedFault },
        'connection reset (injected fault)',
      );
      // A TCP reset (RST), as a proxy or a crashed server gives; a plain close where there is none.
      const socket = req.raw.socket as (typeof req.raw.socket & { resetAndDestroy?: () => void }) | null;
      if (socket?.resetAndDestroy) socket.resetAndDestroy();
      else socket?.destroy();
      return;
    }
    if (plan.status !== undefined) throw this.#answer(plan.status, plan.resetAfterMs);
  }

  #record(req: FastifyRequest, plan: FaultPlan, source: Source): void {
    req.injectedFault = { injectedFault: describePlan(plan), faultSource: source };
    if (plan.latencyMs !== undefined) this.metrics.faultInjected('latency', source);
    if (plan.status !== undefined) this.metrics.faultInjected(String(plan.status), source);
    if (plan.reset) this.metrics.faultInjected('reset', source);
  }

  /** Production's own answer with `status` (a 429's bucket full again `resetAfterMs` from now). */
  #answer(status: FaultStatus, resetAfterMs = RATE_LIMIT_WINDOW_MS): HelixError {
    if (status === 429) {
      // An empty bucket: nothing left, full again a window from now (as RateLimiter.charge says),
      // unless the fault names a shorter wait.
      const points = this.config.rateLimit || PRODUCTION_POINTS;
      return rateLimitRefusal(rateLimitHeaders(points, 0, this.clock.now() + resetAfterMs));
    }
    if (status === 503) return new HelixError(503, UNAVAILABLE_MESSAGE);
    return new HelixError(500, 'Internal Server Error');
  }
}

/**
 * Adds the fault hook to `app` (after CORS: a preflight is never failed) and, with `--faults`,
 * logs the rules and the seed that replays them. Outside the production profile, returns the
 * injector, whose rules the admin API changes (src/routes/admin/faults.ts).
 */
export function installFaults(
  app: FastifyInstance,
  config: Config,
  clock: Clock,
  metrics: AppMetrics,
  setting?: SharedState<FaultSetting, FaultSetting>,
): FaultInjector | undefined {
  const faults = new FaultInjector(config, clock, metrics, setting);
  // Null on every request (the log line reads it) until a fault is injected into it.
  app.decorateRequest('injectedFault', null);
  if (!faults.enabled) return undefined;
  app.addHook('onRequest', faults.onRequest);
  const { rules, seed } = faults.rules;
  if (seed !== undefined)
    app.log.warn(
      { faults: rules.map(describeRule), faultSeed: seed },
      `injecting faults at random (--faults); --fault-seed ${seed} replays them`,
    );
  return faults;
}
