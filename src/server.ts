import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import { OPERATION_SCOPES } from './auth/scopes.ts';
import { type MintedToken, mintToken } from './auth/tokens.ts';
import { type Clock, clockFor, nowSeconds } from './clock.ts';
import type { Config } from './config.ts';
import { startFromFixture } from './io/fixtures.ts';
import type { Summary } from './io/progress.ts';
import { dayStart } from './seed/generate.ts';
import { readSeedInfo, type SeedInfo, seedStore } from './seed/index.ts';
import { isEmpty } from './store/bulk.ts';
import { findClient } from './store/clients.ts';
import { deleteExpiredCodes } from './store/codes.ts';
import { openStore, type Store } from './store/db.ts';
import { migrateOrThrow } from './store/migrate.ts';
import { resolveSecret } from './store/settings.ts';
import { deleteDeadTokens } from './store/tokens.ts';
import { findUserById } from './store/users.ts';

export interface Running {
  app: FastifyInstance;
  store: Store;
  url: string;
  stop(): Promise<void>;
}

type Print = (line: string) => void;

/**
 * Opens and migrates the store, seeds it on the first start (or loads the `--fixtures` world),
 * listens, and prints how to call it: on stderr, as stdout carries the JSON log lines alone.
 */
export async function startServer(
  requested: Config,
  print: Print = (l) => process.stderr.write(`${l}\n`),
): Promise<Running> {
  const config = await withConcretePort(requested);
  let store = openStore({ url: config.db });
  try {
    const clock = clockFor(config);
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
    const secret = await resolveSecret(store, config.secret);
    // Requests get a deadline on every query; the start-up work above has none (a large seed or
    // fixture writes for as long as it takes), so the store is opened again with it.
    await store.close();
    store = openStore({ url: config.db, queryTimeout: config.queryTimeout });
    const app = await buildApp({ config, store, clock, secret });
    await app.listen({ port: config.port, host: config.host });
    const url = config.publicUrl;
    const info = await readSeedInfo(store);
    if (config.fixtures) {
      const loaded = fixture ? `loaded ${fixture.rows} records` : 'already loaded';
      print(`helixd: serving ${url} (store ${store.location}, fixture ${config.fixtures}: ${loaded})`);
    } else if (info && config.devShortcuts) await printBanner(store, config, clock, info, url, print);
    else
      print(
        `helixd: serving ${url} (${config.profile} profile, store ${store.location}, ${info ? 'demo data' : 'no demo data'})`,
      );

    let stopping: Promise<void> | undefined;
    const stop = () => {
      stopping ??= (async () => {
        await app.close(); // stops accepting, lets requests in flight finish
        await store.close();
      })();
      return stopping;
    };
    return { app, store, url, stop };
  } catch (err) {
    await store.close().catch(() => {});
    throw err;
  }
}

/**
 * `--port 0` asks for any free port. The port is chosen before the app is built, so that the
 * derived public URL (report links) names the port actually served.
 */
async function withConcretePort(config: Config): Promise<Config> {
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
