import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import { OPERATION_SCOPES } from './auth/scopes.ts';
import { type MintedToken, mintToken } from './auth/tokens.ts';
import { type Clock, type ClockDriver, clockFor, localDriver, nowSeconds, systemClock } from './clock.ts';
import { SHUTDOWN_GRACE_SECONDS, Shutdown } from './cluster/shutdown.ts';
import type { SharedState } from './cluster/state.ts';
import type { Config } from './config.ts';
import type { FaultSetting } from './faults/injector.ts';
import { startFromFixture } from './io/fixtures.ts';
import type { Summary } from './io/progress.ts';
import { dayStart } from './seed/generate.ts';
import { readSeedInfo, type SeedInfo, seedStore } from './seed/index.ts';
import { isEmpty } from './store/bulk.ts';
import { findClient } from './store/clients.ts';
import { deleteExpiredCodes } from './store/codes.ts';
import { openStore, type Store, urlStatementTimeout } from './store/db.ts';
import { migrateOrThrow } from './store/migrate.ts';
import { forgetMoves } from './store/moves.ts';
import { resolveSecret } from './store/settings.ts';
import { deleteDeadTokens } from './store/tokens.ts';
import { findUserById } from './store/users.ts';

export interface Running {
  app: FastifyInstance;
  store: Store;
  url: string;
  /**
   * Stops: the listener closes, the requests accepted finish (cut after SHUTDOWN_GRACE_SECONDS),
   * then the store closes. With `drain`, the listener stays open for `config.drain` seconds first
   * while /readyz answers 503 (src/cluster/shutdown.ts); a later call without it ends that drain at once.
   */
  stop(o?: { drain?: boolean }): Promise<void>;
}

type Print = (line: string) => void;

/** What the store gave at start-up, for the banner and the app. */
export interface Prepared {
  secret: string;
  /** the rows `--fixtures` loaded; undefined when the store already held them or no fixture */
  fixture: Summary | undefined;
}

/**
 * Migrates the store, seeds it on the first start (or loads the `--fixtures` world), deletes dead
 * tokens and codes, and resolves the signing secret. Once per start: under `--workers` the primary
 * does it before any worker exists. No deadline here: a large seed or fixture writes for as long as
 * it takes (the store requests use is opened with one). `beforeClose` runs once all that is done,
 * before this connection closes.
 */
export async function prepareStore(
  config: Config,
  clock: Clock,
  print: Print,
  beforeClose?: () => void,
): Promise<Prepared> {
  const store = openStore({ url: config.db });
  try {
    await migrateOrThrow(store);
    let fixture: Summary | undefined;
    if (config.fixtures) fixture = await startFromFixture(store, config.fixtures);
    else if (!config.skipSeed && (await isEmpty(store))) {
      const started = Date.now();
      print(`helixd: empty store, seeding demo data (seed ${config.seed}, ${config.users} users) ...`);
      await seedStore(store, { seed: config.seed, users: config.users, anchor: dayStart(clock.now()) });
      print(`helixd: seeded in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
    // Housekeeping: tokens and codes past their expiry can never be used again (a user token whose
    // access token expired stays while its refresh token can still be spent).
    const now = nowSeconds(clock);
    await deleteDeadTokens(store.db, now);
    await deleteExpiredCodes(store.db, now);
    // Moves older than a walk may live (src/store/moves.ts); the live world forgets them as it runs.
    await forgetMoves(store.db, store.dialect);
    const secret = await resolveSecret(store, config.secret);
    beforeClose?.();
    return { secret, fixture };
  } finally {
    await store.close();
  }
}

/** Prints how to call the server: the banner (demo data, development profile), or one line. */
export async function announce(
  config: Config,
  store: Store,
  clock: Clock,
  prepared: Prepared,
  print: Print,
): Promise<void> {
  const url = config.publicUrl;
  // The URL's own deadline does not apply while serving (src/store/db.ts): say so, not silently.
  const urlTimeout = urlStatementTimeout(config.db);
  if (urlTimeout !== undefined)
    print(
      `helixd: --db sets statement_timeout=${urlTimeout}; serving keeps the query deadline instead (--query-timeout, ${config.queryTimeout} ms)`,
    );
  const info = await readSeedInfo(store);
  if (config.fixtures) {
    const loaded = prepared.fixture ? `loaded ${prepared.fixture.rows} records` : 'already loaded';
    print(`helixd: serving ${url} (store ${store.location}, fixture ${config.fixtures}: ${loaded})`);
  } else if (info && config.devShortcuts) await printBanner(store, config, clock, info, url, print);
  else {
    // The public URL is how callers reach the server (a load balancer's, in production): the
    // address it listens on is said too when it is another, as an operator checks it first.
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    const listening = `http://${host}:${config.port}`;
    const where = listening === url ? url : `${url}, listening on ${listening}`;
    print(
      `helixd: serving ${where} (${config.profile} profile, store ${store.location}, ${info ? 'demo data' : 'no demo data'})`,
    );
  }
}

/**
 * Opens and migrates the store, seeds it on the first start (or loads the `--fixtures` world),
 * listens, and prints how to call it: on stderr, as stdout carries the JSON log lines alone. A
 * worker of `--workers` passes what its primary prepared instead: it neither writes the store at
 * start nor prints, and reads the clock and the fault rules its primary holds (src/cluster/state.ts).
 */
export async function startServer(
  requested: Config,
  print: Print = (l) => process.stderr.write(`${l}\n`),
  worker?: { prepared: Prepared; clock: ClockDriver; faults: SharedState<FaultSetting, FaultSetting> },
): Promise<Running> {
  const config = await withConcretePort(requested);
  const clockDriver = worker?.clock ?? localDriver(clockFor(config));
  const clock = clockDriver.clock;
  // Requests get a deadline on every query. The connection opens before the one that prepared the
  // store closes: the last connection to a SQLite file to close copies the WAL into the file and
  // syncs it (docs/perf/2026-11-22-startup.md, step 4), which the server's connection does later.
  let serving: Store | undefined;
  const open = () => {
    serving = openStore({ url: config.db, queryTimeout: config.queryTimeout });
  };
  const prepared = worker?.prepared ?? (await prepareStore(config, clock, print, open));
  if (!serving) open();
  const store = serving as Store;
  try {
    const shutdown = new Shutdown();
    const app = await buildApp({
      config,
      store,
      clock,
      clockDriver,
      faultSetting: worker?.faults,
      // The rate limiter counts requests in real time, whatever the server clock reads: a driven
      // clock (--clock-speed, POST /admin/clock) must not refill a client's bucket, nor give it N
      // times Helix's rate; and a client waits for Ratelimit-Reset by its own (real) clock.
      rateClock: systemClock,
      secret: prepared.secret,
      drain: shutdown,
      clusterWorker: worker !== undefined,
    });
    shutdown.attach(app.server);
    await app.listen({ port: config.port, host: config.host });
    if (!worker) await announce(config, store, clock, prepared, print);

    let stopping: Promise<void> | undefined;
    const stop = ({ drain = false } = {}) => {
      if (!drain) shutdown.endDrain();
      stopping ??= (async () => {
        await shutdown.run(drain ? config.drain : 0, SHUTDOWN_GRACE_SECONDS, app.log);
        await app.close();
        await store.close();
      })();
      return stopping;
    };
    return { app, store, url: config.publicUrl, stop };
  } catch (err) {
    await store.close().catch(() => {});
    throw err;
  }
}

/**
 * `--port 0` asks for any free port. The port is chosen before the app is built, so that the
 * derived public URL (report links) names the port actually served.
 */
export async function withConcretePort(config: Config): Promise<Config> {
  if (config.port !== 0) return config;
  const port = await new Promise<number>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, config.host, () => {
      const addr = probe.address();
      probe.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
  return Object.freeze({ ...config, port, publicUrl: config.publicUrl.replace(/:0$/, `:${port}`) });
}

async function printBanner(
  store: Store,
  config: Config,
  clock: Clock,
  info: SeedInfo,
  url: string,
  print: Print,
) {
  const client = await findClient(store.db, info.demoClientId);
  const user = await findUserById(store.db, info.demoUserId);
  if (!client || !user) {
    print(`helixd: serving ${url} (store ${store.location})`);
    return;
  }
  const now = nowSeconds(clock);
  const app: MintedToken = await mintToken(store.db, {
    kind: 'app',
    clientId: client.id,
    scopes: [],
    ttl: config.appTokenTtl,
    now,
  });
  const userToken = await mintToken(store.db, {
    kind: 'user',
    clientId: client.id,
    userId: user.id,
    scopes: OPERATION_SCOPES,
    ttl: config.userTokenTtl,
    now,
  });
  const lines = [
    '',
    `helixd is serving ${url}  (store: ${store.location})`,
    '',
    `  demo client id      ${client.id}`,
    `  demo client secret  ${client.demo_secret ?? '(not kept)'}`,
    `  app token           ${app.access_token}`,
    `  user token          ${userToken.access_token}  (${user.login}, id ${user.id}; ${OPERATION_SCOPES.join(' ')})`,
    '',
    'Try:',
    `  curl -H 'Authorization: Bearer ${userToken.access_token}' -H 'Client-Id: ${client.id}' '${url}/helix/games/top?first=5'`,
    '',
  ];
  for (const l of lines) print(l);
}
