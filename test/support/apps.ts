// The in-process test app: the real app (buildApp) on a fresh store, seeded with the demo data, its
// clock a ManualClock, every answer checked against /openapi.json; and forEachStore, which runs a
// block of tests once per store kind (test/support/stores.ts).
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { mintToken } from '../../src/auth/tokens.ts';
import { ManualClock } from '../../src/clock.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { dayStart } from '../../src/seed/generate.ts';
import { readSeedInfo, type SeedInfo, seedStore } from '../../src/seed/index.ts';
import type { Store, StoreOptions } from '../../src/store/db.ts';
import { type OpenApiChecker, openApiChecker } from './openapi-check.ts';
import { STORE_KINDS, type StoreKind, tempStore } from './stores.ts';

/** Runs `fn` inside one describe block per store kind. */
export function forEachStore(title: string, fn: (kind: StoreKind) => void): void {
  for (const { kind, skip } of STORE_KINDS) {
    describe(`${title} [${kind}]`, { skip }, () => fn(kind));
  }
}

/** The instant tests pin the clock to, unless they choose another: 2026-06-15T12:00:00Z. */
/** The admin token of test apps that serve the admin API (`config: { adminToken: ADMIN_TOKEN }`). */
export const ADMIN_TOKEN = 'admin-token-0123456789-0123456789-abcdef';

export const TEST_NOW = Date.UTC(2026, 5, 15, 12, 0, 0);

export interface TestAppOptions {
  seed?: number;
  users?: number;
  /** skip seeding: an empty store */
  empty?: boolean;
  /**
   * seed with the generator in a worker thread (2; into SQLite, the side tables written by another:
   * src/seed/side.ts) or in this one (1); default: as helixd chooses
   */
  seedThreads?: 1 | 2;
  now?: number;
  /** config overrides, as flags */
  config?: Record<string, string | number | boolean>;
  /** where the app's JSON log lines go; default: no logs */
  logs?: NodeJS.WritableStream;
}

export interface TestApp {
  app: FastifyInstance;
  store: Store;
  /** how to open the same store again (another instance of helixd): openStore(storeOptions) */
  storeOptions: StoreOptions;
  clock: ManualClock;
  config: Config;
  /** the demo data's facts (undefined for an empty store) */
  seed: SeedInfo | undefined;
  /**
   * GET `url`. Headers with `authorization` but no `client-id` key get the demo client's Client-Id,
   * as every client library sends it (a token of another client must name its own client).
   */
  get(url: string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  /** the request exactly as given: no header added */
  inject(opts: InjectOptions): Promise<LightMyRequestResponse>;
  /** a user token of `userId` (default: the demo broadcaster) with `scopes`, minted into the store */
  userToken(scopes?: readonly string[], userId?: number, ttl?: number): Promise<string>;
  appToken(ttl?: number): Promise<string>;
  close(): Promise<void>;
}

function withClientId(headers: Record<string, string>, seed: SeedInfo | undefined): Record<string, string> {
  const names = Object.keys(headers).map((k) => k.toLowerCase());
  if (!seed || !names.includes('authorization') || names.includes('client-id')) return headers;
  return { ...headers, 'client-id': seed.demoClientId };
}

/** The real app on a fresh store of `kind`, seeded with the demo data (200 users by default). */
export async function startTestApp(kind: StoreKind, o: TestAppOptions = {}): Promise<TestApp> {
  const temp = await tempStore(kind);
  const clock = new ManualClock(o.now ?? TEST_NOW);
  const config = loadConfig(
    { db: temp.url, secret: 'test-secret-0123456789', rateLimit: 0, ...o.config },
    {},
  );
  if (!o.empty) {
    await seedStore(
      temp.store,
      { seed: o.seed ?? 1, users: o.users ?? 200, anchor: dayStart(clock.now()) },
      o.seedThreads ? { threads: o.seedThreads } : {},
    );
  }
  const seed = await readSeedInfo(temp.store);
  // Every answer the app sends, whoever asked (inject, a socket, fetch, a client library), is
  // checked against /openapi.json (test/support/openapi-check.ts) in an onSend hook. A mismatch is thrown
  // by the `get`/`inject` that received it, and any other by `close`, which fails the test file.
  let openApi: OpenApiChecker | undefined;
  const mismatches: string[] = [];
  const app = await buildApp({
    config,
    store: temp.store,
    clock,
    secret: config.secret as string,
    ...(o.logs ? { logStream: o.logs } : { logger: false }),
    beforeRoutes: (a) =>
      a.addHook('onSend', async (req, reply, payload) => {
        const body =
          typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString() : '';
        const answer = { statusCode: reply.statusCode, headers: reply.getHeaders(), body };
        try {
          openApi?.check(req.method, req.url, answer);
        } catch (e) {
          mismatches.push((e as Error).message);
        }
        return payload;
      }),
  });
  const now = () => Math.floor(clock.now() / 1000);
  openApi = await openApiChecker(app);
  const checked = async (res: Promise<LightMyRequestResponse>) => {
    const r = await res;
    if (mismatches.length) assert.fail(mismatches.splice(0).join('\n'));
    return r;
  };
  return {
    app,
    store: temp.store,
    storeOptions: { url: temp.url, ...(temp.schema ? { schema: temp.schema } : {}) },
    clock,
    config,
    seed,
    get: (url, headers = {}) =>
      checked(app.inject({ method: 'GET', url, headers: withClientId(headers, seed) })),
    inject: (opts) => checked(app.inject(opts)),
    async userToken(scopes = [], userId, ttl = 3600) {
      if (!seed) throw new Error('no demo data');
      const t = await mintToken(temp.store.db, {
        kind: 'user',
        clientId: seed.demoClientId,
        userId: userId ?? seed.demoUserId,
        scopes,
        ttl,
        now: now(),
      });
      return t.access_token;
    },
    async appToken(ttl = 3600) {
      if (!seed) throw new Error('no demo data');
      const t = await mintToken(temp.store.db, {
        kind: 'app',
        clientId: seed.demoClientId,
        scopes: [],
        ttl,
        now: now(),
      });
      return t.access_token;
    },
    async close() {
      await app.close();
      await temp.drop();
      if (mismatches.length) assert.fail(`answers that break /openapi.json:\n${mismatches.join('\n')}`);
    },
  };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** POST `params` to `url` as a form, as clients call the token service. */
export const postForm = (t: TestApp, url: string, params: Record<string, string>) =>
  t.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(params).toString(),
  });

/** The port a listening Fastify app serves on. */
export function portOf(app: FastifyInstance): number {
  const addr = app.server.address();
  if (typeof addr !== 'object' || addr === null) throw new Error('the app is not listening');
  return addr.port;
}
