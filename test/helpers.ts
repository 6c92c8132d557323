// Test harness: the real app on a real store. Every store test runs once per dialect: on a fresh
// SQLite file, and on a fresh schema of a real PostgreSQL (HELIXD_TEST_PG_URL, default
// postgres://postgres@127.0.0.1:5432/test). Without a reachable PostgreSQL those runs are skipped
// with a line that says so; under CI=true an unreachable PostgreSQL fails the run.
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe } from 'node:test';
import { promisify } from 'node:util';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { mintToken } from '../src/auth/tokens.ts';
import { ManualClock } from '../src/clock.ts';
import { type Config, ConfigError, ENV_NAMES, loadConfig } from '../src/config.ts';
import { dayStart } from '../src/seed/generate.ts';
import { readSeedInfo, type SeedInfo, seedStore } from '../src/seed/index.ts';
import { openStore, type Store, type StoreOptions } from '../src/store/db.ts';
import { migrateOrThrow } from '../src/store/migrate.ts';
import { type OpenApiChecker, openApiChecker } from './openapi-check.ts';

export type StoreKind = 'sqlite' | 'postgres';

export const PG_URL = process.env.HELIXD_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function postgresReachable(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (err) {
    return (err as Error).message || String(err);
  } finally {
    await client.end().catch(() => {});
  }
}

const pgProblem = await postgresReachable();
if (pgProblem) {
  if (process.env.CI === 'true') {
    throw new Error(`PostgreSQL at ${PG_URL} is required under CI=true but unreachable: ${pgProblem}`);
  }
  process.stdout.write(`# PostgreSQL at ${PG_URL} unreachable (${pgProblem}): PostgreSQL runs skipped\n`);
}

export const STORE_KINDS: { kind: StoreKind; skip: string | false }[] = [
  { kind: 'sqlite', skip: false },
  { kind: 'postgres', skip: pgProblem ? `PostgreSQL unreachable: ${pgProblem}` : false },
];

/** Runs `fn` inside one describe block per store kind. */
export function forEachStore(title: string, fn: (kind: StoreKind) => void): void {
  for (const { kind, skip } of STORE_KINDS) {
    describe(`${title} [${kind}]`, { skip }, () => fn(kind));
  }
}

export interface TempStore {
  store: Store;
  /** the SQLite path or the PostgreSQL URL; the schema for PostgreSQL */
  url: string;
  schema?: string;
  drop(): Promise<void>;
}

/** A fresh, migrated, empty store of the given kind. */
export async function tempStore(kind: StoreKind): Promise<TempStore> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'helixd-test-'));
    const url = join(dir, 'helixd.db');
    const store = openStore({ url });
    await migrateOrThrow(store);
    return {
      store,
      url,
      async drop() {
        await store.close().catch(() => {});
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const schema = `helixd_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const store = openStore({ url: PG_URL, schema, poolSize: 4 });
  await migrateOrThrow(store);
  return {
    store,
    url: PG_URL,
    schema,
    async drop() {
      await store.close().catch(() => {});
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
    },
  };
}

/** The instant tests pin the clock to, unless they choose another: 2026-06-15T12:00:00Z. */
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
  // checked against /openapi.json (test/openapi-check.ts) in an onSend hook. A mismatch is thrown
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

/**
 * Golden answers: `test/golden/<file>` holds the expected body, indented for review; the wire body
 * must equal its compact form byte for byte, on every store. UPDATE_GOLDEN=1 rewrites the file from
 * the SQLite run (so the PostgreSQL run is still compared against it).
 */
export function assertGolden(kind: StoreKind, file: string, body: string): void {
  const path = new URL(`./golden/${file}`, import.meta.url);
  if (process.env.UPDATE_GOLDEN === '1' && kind === 'sqlite')
    writeFileSync(path, `${JSON.stringify(JSON.parse(body), null, 2)}\n`);
  assert.equal(body, JSON.stringify(JSON.parse(readFileSync(path, 'utf8'))), `golden ${file}`);
}

export interface RawResponse {
  status: number;
  /** header names in lower case; a repeated header's values joined with ", " */
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends `bytes` exactly as given (request line, headers, body) to a listening server over one TCP
 * connection and parses the one response. For replaying, byte for byte, what a client library
 * puts on the wire, including shapes that `inject` or `fetch` would normalise (an empty body with a
 * content type, headers in the library's order and case). The connection stays open for writing
 * until the response is complete (by Content-Length, chunked encoding, or the server closing), as
 * a client's does: a client that half-closed at once would have Node abort a request still in
 * progress.
 */
export function rawRequest(port: number, bytes: string | Buffer): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let buffered = Buffer.alloc(0);
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      const split = buffered.indexOf('\r\n\r\n');
      if (split < 0) {
        if (closed) reject(new Error(`no complete response: ${JSON.stringify(buffered.toString('utf8'))}`));
        return;
      }
      const [statusLine = '', ...lines] = buffered.subarray(0, split).toString('utf8').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
      }
      const rest = buffered.subarray(split + 4);
      let body: Buffer | undefined;
      if (headers['transfer-encoding']?.toLowerCase() === 'chunked') body = dechunk(rest);
      else if (headers['content-length'] !== undefined) {
        const n = Number(headers['content-length']);
        if (rest.length >= n) body = rest.subarray(0, n);
      } else if (closed) body = rest;
      if (body === undefined) {
        if (closed) reject(new Error(`incomplete response body: ${JSON.stringify(rest.toString('utf8'))}`));
        return;
      }
      done = true;
      socket.destroy();
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: body.toString('utf8') });
    };
    socket.on('data', (c) => {
      buffered = Buffer.concat([buffered, c]);
      finish(false);
    });
    socket.on('error', (err) => {
      if (!done) reject(err);
    });
    socket.on('end', () => finish(true));
    socket.write(bytes);
  });
}

/** The body of a chunked message, or undefined while its last chunk has not arrived. */
function dechunk(data: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = data.indexOf('\r\n', at);
    if (eol < 0) return undefined;
    const size = Number.parseInt(data.subarray(at, eol).toString('latin1'), 16);
    if (Number.isNaN(size)) throw new Error('malformed chunked body');
    if (size === 0) return Buffer.concat(parts);
    if (data.length < eol + 2 + size + 2) return undefined;
    parts.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

/** The port a listening Fastify app serves on. */
export function portOf(app: FastifyInstance): number {
  const addr = app.server.address();
  if (typeof addr !== 'object' || addr === null) throw new Error('the app is not listening');
  return addr.port;
}

/** The `--db` value that opens the same store from the command line (PostgreSQL: its schema too). */
export function cliDb(options: StoreOptions): string {
  if (!options.schema) return options.url;
  return `${options.url}?options=${encodeURIComponent(`-c search_path=${options.schema}`)}`;
}

/**
 * `helixd <args>` through the real command line (src/cli/), run in this process: a process start
 * per command would cost seconds. `stdin` feeds a `-` input.
 */
export async function helixd(args: readonly string[], stdin = '') {
  const { runCaptured } = await import('../src/cli/index.ts');
  return runCaptured(args, stdin);
}

/**
 * The command as a process, run from the sources through tsx (bin/helixd-dev.js): the tests that
 * start helixd never run a dist/ older than the sources. Only test/cli/compiled.test.ts runs the
 * compiled bin/helixd.js, after building dist/ itself.
 */
export const HELIXD_DEV_BIN = join(import.meta.dirname, '..', 'bin', 'helixd-dev.js');

/**
 * One of helixd's own bearer tokens shorter than 32 characters is a configuration error, given as a
 * flag or in the environment, and `helixd serve` stops with a line that says so.
 */
export async function assertTokenTooShort(option: 'adminToken' | 'metricsToken'): Promise<void> {
  const env = ENV_NAMES[option];
  const flag = `--${option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  assert.throws(() => loadConfig({ [option]: 'short' }, {}), ConfigError);
  assert.throws(
    () => loadConfig({}, { [env]: 'x'.repeat(31) }),
    new RegExp(`${env} / ${flag}: must be at least 32 characters`),
  );
  assert.equal(loadConfig({}, { [env]: 'x'.repeat(32) })[option], 'x'.repeat(32));
  await assert.rejects(
    promisify(execFile)(process.execPath, [
      HELIXD_DEV_BIN,
      'serve',
      flag,
      'short',
      '--db',
      '/nonexistent/x.db',
    ]),
    (err: { code: number; stderr: string }) => {
      assert.notEqual(err.code, 0);
      assert.match(err.stderr, new RegExp(`${flag}: must be at least 32 characters`));
      return true;
    },
  );
}

export interface ServeProcess {
  child: ChildProcess;
  /** everything it printed so far */
  out: () => string;
  /** the curl command of its banner, as printed */
  curl: string;
  url: string;
}

/** `node <bin> serve --db <db> --port 0 --log-level warn <more>`, once its banner is out. */
export function startServeProcess(
  bin: string,
  db: string,
  more: readonly string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): Promise<ServeProcess> {
  // No drain: a test stops its server at once (test/reliability/shutdown.test.ts tests the drain).
  const args = [bin, 'serve', '--db', db, '--port', '0', '--log-level', 'warn', '--drain', '0', ...more];
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner within 20 s:\n${out}`)), 20_000);
    // The banner comes on stderr (stdout carries the JSON log lines alone); both are kept.
    const read = (d: Buffer) => {
      out += d;
      const curl = /^\s*(curl .*)$/m.exec(out)?.[1];
      const url = /serving (http:\/\/\S+)/.exec(out)?.[1];
      if (curl && url) {
        clearTimeout(timer);
        resolve({ child, out: () => out, curl, url });
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.on('exit', (code) => reject(new Error(`exited ${code} before serving:\n${out}`)));
  });
}

/** Stops a process as Ctrl-C does; its exit code. */
export function stopProcess(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.kill('SIGINT');
  });
}
