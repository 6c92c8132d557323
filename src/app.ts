import cors from '@fastify/cors';
import websocket from '@fastify/websocket';
import Fastify, { type FastifyInstance } from 'fastify';
import { TokenCache } from './auth/token-cache.ts';
import { type Clock, type ClockDriver, DrivenClock, localDriver } from './clock.ts';
import { type DrainState, REQUEST_TIMEOUT_SECONDS } from './cluster/shutdown.ts';
import type { SharedState } from './cluster/state.ts';
import type { Config } from './config.ts';
import type { AppContext } from './context.ts';
import { startHousekeeping } from './eventsub/housekeeping.ts';
import { EventSubService } from './eventsub/service.ts';
import { WebhookSender } from './eventsub/webhooks.ts';
import { type FaultInjector, type FaultSetting, installFaults } from './faults/injector.ts';
import { CORS_ANSWER_HEADERS, CORS_OPTIONS } from './http/cors.ts';
import { errorBody, handleClientError, handleError } from './http/errors.ts';
import { loggerOptions } from './http/logging.ts';
import { registerDocs } from './http/openapi.ts';
import { decorateOperations } from './http/operation.ts';
import { compileValidator, helixSchemaError } from './http/query-validator.ts';
import { lazySerializers } from './http/serializers.ts';
import { startLiveWorld } from './live/start.ts';
import { AppMetrics } from './metrics/registry.ts';
import { MemoryRateLimitStore, RateLimiter, type RateLimitStore } from './ratelimit/limiter.ts';
import { RedisRateLimitStore } from './ratelimit/redis.ts';
import { clockRoutes } from './routes/admin/clock.ts';
import { eventsubAdminRoutes } from './routes/admin/eventsub.ts';
import { faultRoutes } from './routes/admin/faults.ts';
import { liveRoutes } from './routes/admin/live.ts';
import { adminRoutes } from './routes/admin/records.ts';
import { analyticsRoutes } from './routes/analytics.ts';
import { channelInformationRoutes } from './routes/channel-information.ts';
import { channelsRoutes } from './routes/channels.ts';
import { clipsRoutes } from './routes/clips.ts';
import { eventsubSubscriptionsRoutes } from './routes/eventsub/subscriptions.ts';
import { websocketOptions, wsRoutes } from './routes/eventsub/ws.ts';
import { gamesRoutes } from './routes/games.ts';
import { healthRoutes } from './routes/health.ts';
import { legacyFollowsRoutes } from './routes/legacy-follows.ts';
import { legacyTagsRoutes } from './routes/legacy-tags.ts';
import { markersRoutes } from './routes/markers.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { moderationRoutes } from './routes/moderation.ts';
import { oauthRoutes } from './routes/oauth/index.ts';
import { reportsRoutes } from './routes/reports.ts';
import { searchRoutes } from './routes/search.ts';
import { streamsRoutes } from './routes/streams.ts';
import { subscriptionsRoutes } from './routes/subscriptions.ts';
import { unitsRoutes } from './routes/units.ts';
import { usersRoutes } from './routes/users.ts';
import { videosRoutes } from './routes/videos.ts';
import type { Store } from './store/db.ts';
import { UserNames } from './store/users.ts';
import { Links } from './wire/links.ts';

export interface AppDeps {
  config: Config;
  store: Store;
  clock: Clock;
  /**
   * moves `clock` (POST /admin/clock): under `--workers`, in every worker; default: `clock` alone,
   * when it is a DrivenClock (else the clock has no admin route)
   */
  clockDriver?: ClockDriver;
  /** the fault rules the admin API changes: under `--workers`, in every worker; default: this app's */
  faultSetting?: SharedState<FaultSetting, FaultSetting>;
  /** the rate limiter's clock; default `clock` (src/server.ts passes the system's, and says why) */
  rateClock?: Clock;
  /** signing secret (see resolveSecret in store/settings.ts) */
  secret: string;
  /** false in tests that don't want request logs */
  logger?: boolean;
  /** where the JSON log lines go; default stdout (tests read them) */
  logStream?: NodeJS.WritableStream;
  /** where rate-limit buckets live; default: Redis when config.redisUrl is set, else this process's memory */
  rateLimitStore?: RateLimitStore;
  /**
   * Called with the app before any route is added, so that hooks it adds see every route: the
   * test suite checks every answer of every request against /openapi.json this way.
   */
  beforeRoutes?: (app: FastifyInstance) => void;
  /** whether the server is draining before it stops (src/cluster/shutdown.ts); /readyz answers 503 then */
  drain?: DrainState;
  /** a worker of `--workers`: /metrics answers with the sum over every worker (src/metrics/registry.ts) */
  clusterWorker?: boolean;
}

/** Builds the ready application; never listens (server.ts does, tests use inject). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const metrics = new AppMetrics(
    deps.store,
    deps.clusterWorker ? { summed: { deadlineMs: deps.config.queryTimeout } } : {},
  );
  const ctx: AppContext = {
    config: deps.config,
    store: deps.store,
    clock: deps.clock,
    secret: deps.secret,
    links: new Links(deps.config.siteUrl),
    rateLimiter: new RateLimiter(
      deps.rateLimitStore ??
        (deps.config.redisUrl
          ? new RedisRateLimitStore(deps.config.redisUrl, { commandTimeout: deps.config.queryTimeout })
          : new MemoryRateLimitStore()),
      deps.config.rateLimit,
      deps.rateClock ?? deps.clock,
      metrics.rateLimitRefusal,
    ),
    tokens: new TokenCache(deps.store, metrics.tokenLookup),
    userNames: new UserNames(deps.store),
    metrics,
    drain: deps.drain ?? { draining: false },
  };
  const app = Fastify({
    ...(deps.logger === false ? { logger: false } : loggerOptions(deps.config.logLevel, deps.logStream)),
    // Behind a load balancer the request id comes from it when present.
    requestIdHeader: 'x-request-id',
    // Bodies are only small token-service forms.
    bodyLimit: 64 * 1024,
    // Time limits on receiving a request (src/cluster/shutdown.ts says why), which Node answers with a 408;
    // it checks them every connectionsCheckingInterval (default 30 s).
    requestTimeout: REQUEST_TIMEOUT_SECONDS * 1000,
    http: { headersTimeout: REQUEST_TIMEOUT_SECONDS * 1000, connectionsCheckingInterval: 1000 },
    routerOptions: { ignoreTrailingSlash: true },
    // Errors raised before a route runs (bad URL encoding; malformed HTTP) get the Helix body too,
    // and (no hook runs for them) the CORS headers every other answer gets from the plugin.
    frameworkErrors: (err, req, reply) => {
      reply.headers(CORS_ANSWER_HEADERS);
      handleError(err, req, reply);
    },
    clientErrorHandler: handleClientError,
    // A query string that breaks its operation's schema: the Helix message naming the parameter.
    schemaErrorFormatter: helixSchemaError,
    schemaController: { compilersFactory: { buildSerializer: lazySerializers } },
  });
  // Every request schema is compiled with helixd's strict reading of query-string text.
  app.setValidatorCompiler(compileValidator);
  decorateOperations(app);
  app.addHook('onClose', () => ctx.rateLimiter.close());
  ctx.rateLimiter.watch(app.log);
  app.addHook('onClose', async () => metrics.close());
  // Before any route, so that every answer is counted (unmatched ones included).
  app.addHook('onResponse', metrics.onResponse);
  // A client may send its request and then close its side of the connection (`printf ... | nc -N`,
  // a replay that half-closes): it must still get the answer. Node's HTTP server aborts the request
  // on that half-close unless told otherwise, so an answer that takes a query to the store was lost.
  (app.server as typeof app.server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;

  // First, so that its hook runs before any other: a preflight is answered before a route sees it.
  await app.register(cors, CORS_OPTIONS);
  // EventSub's WebSocket sessions (src/eventsub/): the plugin before any route, so that it sees them all.
  // The fault injector comes later (its hook after the plugin's); deliveries start after both.
  let faults: FaultInjector | undefined;
  const deliveryFault = (clientId: string) => faults?.drawDelivery(clientId);
  const eventsub = new EventSubService({ ...ctx, log: app.log, deliveryFault });
  await app.register(websocket, websocketOptions(eventsub));
  app.addHook('onClose', () => eventsub.stop());
  // A drain first asks every session to reconnect (another worker or instance takes it); what is
  // still here when the drain ends is closed.
  ctx.drain.onDrain?.(() => eventsub.reconnectSessions());
  ctx.drain.beforeClose?.(() => eventsub.closeSessions());
  app.setErrorHandler(handleError);
  faults = installFaults(app, deps.config, deps.rateClock ?? deps.clock, metrics, deps.faultSetting);
  app.setNotFoundHandler((_req, reply) => {
    reply.code(404).type('application/json; charset=utf-8').send(errorBody(404, 'Not Found'));
  });

  // Before the routes: the OpenAPI generator collects them as they are added.
  await registerDocs(app, deps.config);
  deps.beforeRoutes?.(app);

  healthRoutes(app, ctx);
  metricsRoutes(app, ctx);
  oauthRoutes(app, ctx);
  unitsRoutes(app, ctx);
  usersRoutes(app, ctx);
  gamesRoutes(app, ctx);
  streamsRoutes(app, ctx);
  clipsRoutes(app, ctx);
  videosRoutes(app, ctx);
  subscriptionsRoutes(app, ctx);
  eventsubSubscriptionsRoutes(app, ctx);
  markersRoutes(app, ctx);
  channelsRoutes(app, ctx);
  channelInformationRoutes(app, ctx);
  moderationRoutes(app, ctx);
  searchRoutes(app, ctx);
  analyticsRoutes(app, ctx);
  reportsRoutes(app, ctx);
  // The decommissioned operations: 410 Gone, or with --legacy served from the store.
  legacyFollowsRoutes(app, ctx);
  legacyTagsRoutes(app, ctx);
  adminRoutes(app, ctx);
  faultRoutes(app, ctx, faults);
  eventsubAdminRoutes(app, ctx);
  const clockDriver =
    deps.clockDriver ?? (deps.clock instanceof DrivenClock ? localDriver(deps.clock) : undefined);
  if (clockDriver) clockRoutes(app, ctx, clockDriver);
  liveRoutes(app, ctx, startLiveWorld(app, ctx));
  const webhooks = new WebhookSender(ctx.store, {
    owner: eventsub.processId,
    clock: ctx.clock,
    retries: deps.config.webhookRetries,
    backoffMs: deps.config.webhookBackoff,
    metrics,
    deliveryFault,
  });
  app.addHook('onClose', () => webhooks.stop());
  // In every serving process, whether or not it ever holds a WebSocket (src/eventsub/housekeeping.ts).
  const housekeeping = startHousekeeping(ctx.store, app.log);
  app.addHook('onClose', () => housekeeping.stop());
  wsRoutes(app, eventsub);

  await app.ready();
  return app;
}
