// Configuration is read once, here: command-line flags, then HELIXD_* environment variables, then
// defaults. The result is validated and frozen and passed to whatever needs it; nothing else reads
// process.env.
import { availableParallelism } from 'node:os';
import { type FaultRule, FaultSyntaxError, parseFaultRules } from './faults/rules.ts';

/**
 * `development` (the default): demo data, the mock-server routes, tokens printed at start.
 * `production`: none of those; --secret and --public-url required (README "Production").
 */
export const PROFILES = ['development', 'production'] as const;
export type Profile = (typeof PROFILES)[number];

export interface Config {
  readonly profile: Profile;
  /**
   * Decided by the profile, here and nowhere else: development's shortcuts to credentials without
   * proof of who one is. /units/clients (the demo clients' secrets, no token), POST /auth/authorize
   * (any user's token), the consent page with the authorization_code grant it feeds (helixd has no
   * sign-in: whoever reaches the page acts as any user), and the demo secret and tokens printed at
   * start. Off in production.
   */
  readonly devShortcuts: boolean;
  readonly port: number;
  readonly host: string;
  /** a SQLite file path or a postgres:// URL */
  readonly db: string;
  /** signing secret for report URLs and cursors; when unset, one is generated and kept in the store */
  readonly secret: string | undefined;
  /** base URL of this server as callers reach it (report URLs); default http://host:port */
  readonly publicUrl: string;
  /** base URL of the platform's web site, used in clip, video and box-art links */
  readonly siteUrl: string;
  /** pin the server clock's start (ISO 8601); unset: the system clock */
  readonly now: string | undefined;
  /** how many times faster than real time the server clock runs (from `now`); 1: real speed */
  readonly clockSpeed: number;
  /** serve the decommissioned operations from the store instead of 410 */
  readonly legacy: boolean;
  /** rate-limit bucket size in points per minute; 0 switches rate limiting off */
  readonly rateLimit: number;
  /** Redis URL for rate-limit buckets shared by several instances; unset: in-process buckets */
  readonly redisUrl: string | undefined;
  /** lifetime of user access tokens, seconds */
  readonly userTokenTtl: number;
  /** lifetime of app access tokens, seconds */
  readonly appTokenTtl: number;
  /** seed and size of the demo data written on the first start with an empty store */
  readonly seed: number;
  readonly users: number;
  /** don't seed demo data on the first start (always so in production) */
  readonly skipSeed: boolean;
  /** start from the world in this file (a fixture document or NDJSON) instead of demo data */
  readonly fixtures: string | undefined;
  readonly logLevel: string;
  /** the bearer token of the admin API (/admin, docs/admin.md); unset: the admin API is off */
  readonly adminToken: string | undefined;
  /** deadline of every store query and Redis command while serving, milliseconds (src/store/unavailable.ts) */
  readonly queryTimeout: number;
  /** the bearer token /metrics asks for; unset: /metrics is open */
  readonly metricsToken: string | undefined;
  /** processes serving the port (node:cluster); 1: this process alone */
  readonly workers: number;
  /** seconds between the stop signal and closing the listener, while /readyz answers 503 */
  readonly drain: number;
  /** faults injected at random into requests (src/faults/injector.ts); empty: none. Never in production */
  readonly faults: readonly FaultRule[];
  /** seed of the draws of `faults`; unset: a new one each start (logged, to replay a run) */
  readonly faultSeed: number | undefined;
  /** the live world (src/live/world.ts): the store's content moves while serving. Never in production */
  readonly live: boolean;
  /** events of the live world per second; 0: only when stepped (POST /admin/live/step) */
  readonly liveRate: number;
  /** seed of the live world's draws; unset: a new one each start (logged, to replay a run) */
  readonly liveSeed: number | undefined;
}

/** What the profile decides: never an option of its own. */
type Derived = 'devShortcuts';
/** The options, each a flag and an environment variable. */
export type ConfigOption = Exclude<keyof Config, Derived>;

export type ConfigInput = Partial<Record<ConfigOption, string | number | boolean | undefined>>;

export const ENV_NAMES: Record<ConfigOption, string> = {
  profile: 'HELIXD_PROFILE',
  port: 'HELIXD_PORT',
  host: 'HELIXD_HOST',
  db: 'HELIXD_DB',
  secret: 'HELIXD_SECRET',
  publicUrl: 'HELIXD_PUBLIC_URL',
  siteUrl: 'HELIXD_SITE_URL',
  now: 'HELIXD_NOW',
  clockSpeed: 'HELIXD_CLOCK_SPEED',
  legacy: 'HELIXD_LEGACY',
  rateLimit: 'HELIXD_RATE_LIMIT',
  redisUrl: 'HELIXD_REDIS_URL',
  userTokenTtl: 'HELIXD_USER_TOKEN_TTL',
  appTokenTtl: 'HELIXD_APP_TOKEN_TTL',
  seed: 'HELIXD_SEED',
  users: 'HELIXD_USERS',
  skipSeed: 'HELIXD_SKIP_SEED',
  fixtures: 'HELIXD_FIXTURES',
  logLevel: 'HELIXD_LOG_LEVEL',
  adminToken: 'HELIXD_ADMIN_TOKEN',
  queryTimeout: 'HELIXD_QUERY_TIMEOUT',
  metricsToken: 'HELIXD_METRICS_TOKEN',
  workers: 'HELIXD_WORKERS',
  drain: 'HELIXD_DRAIN',
  faults: 'HELIXD_FAULTS',
  faultSeed: 'HELIXD_FAULT_SEED',
  live: 'HELIXD_LIVE',
  liveRate: 'HELIXD_LIVE_RATE',
  liveSeed: 'HELIXD_LIVE_SEED',
};

/** The most events per second `--live-rate` takes. */
export const MAX_LIVE_RATE = 10_000;

/** The shortest admin or metrics token accepted: long enough that guessing it is hopeless. */
export const MIN_ADMIN_TOKEN = 32;

/** The most processes `--workers` starts. */
export const MAX_WORKERS = 256;

export class ConfigError extends Error {}

/** Parses durations such as `90`, `90s`, `15m`, `4h`, `60d` into seconds (`0` only if `allowZero`). */
export function parseDuration(v: string | number, name = 'duration', allowZero = false): number {
  if (typeof v === 'number') return v;
  const m = /^(\d+)\s*(s|m|h|d)?$/.exec(v.trim());
  if (!m) throw new ConfigError(`${name}: "${v}" is not a duration (examples: 90s, 15m, 4h, 60d)`);
  const n = Number(m[1]);
  const unit = { s: 1, m: 60, h: 3600, d: 86400 }[(m[2] ?? 's') as 's' | 'm' | 'h' | 'd'];
  const seconds = n * unit;
  if (seconds <= 0 && !allowZero) throw new ConfigError(`${name}: must be longer than 0`);
  return seconds;
}

/** The longest --query-timeout: a day, far below what a timer can hold (2^31 ms). */
const MAX_QUERY_TIMEOUT_MS = 86_400_000;

/** Parses a duration as parseDuration does, or in milliseconds (`500ms`), into milliseconds. */
export function parseDurationMs(v: string | number, name = 'duration'): number {
  const m = typeof v === 'string' ? /^(\d+)\s*ms$/.exec(v.trim()) : null;
  const ms = m ? Number(m[1]) : parseDuration(v, name) * 1000;
  if (ms <= 0) throw new ConfigError(`${name}: must be longer than 0`);
  if (ms > MAX_QUERY_TIMEOUT_MS) throw new ConfigError(`${name}: must be at most 1d`);
  return ms;
}

function int(v: string | number | boolean, name: string, min: number, max: number): number {
  const n = typeof v === 'number' ? v : Number(String(v).trim());
  if (!Number.isInteger(n) || n < min || n > max)
    throw new ConfigError(`${name}: "${v}" must be a whole number from ${min} to ${max}`);
  return n;
}

/** The fastest `--clock-speed`: a year of server time in about half a minute. */
export const MAX_CLOCK_SPEED = 1_000_000;

function speed(v: string | number | boolean, name: string): number {
  const n = typeof v === 'number' ? v : /^\d+(\.\d+)?$/.test(String(v).trim()) ? Number(v) : Number.NaN;
  if (!(n > 0 && n <= MAX_CLOCK_SPEED))
    throw new ConfigError(
      `${name}: "${v}" must be a number greater than 0 and at most ${MAX_CLOCK_SPEED} (60: the clock runs 60 times faster than real time)`,
    );
  return n;
}

function bool(v: string | number | boolean, name: string): boolean {
  if (typeof v === 'boolean') return v;
  const s = String(v).toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(s)) return true;
  if (['0', 'false', 'no', 'off', ''].includes(s)) return false;
  throw new ConfigError(`${name}: "${v}" must be true or false`);
}

/** A bearer token of helixd's own (admin, metrics): unset, or at least MIN_ADMIN_TOKEN characters. */
function secretToken(v: string | number | boolean | undefined, name: string): string | undefined {
  if (v === undefined) return undefined;
  const token = String(v);
  if (token.length < MIN_ADMIN_TOKEN)
    throw new ConfigError(`${name}: must be at least ${MIN_ADMIN_TOKEN} characters`);
  return token;
}

function url(v: string, name: string): string {
  try {
    const u = new URL(v);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
    return v.replace(/\/+$/, '');
  } catch {
    throw new ConfigError(`${name}: "${v}" is not an http(s) URL`);
  }
}

/**
 * Builds the configuration from flags (already parsed; undefined when not given) and an
 * environment. `DATABASE_URL` is honoured after `HELIXD_DB`, as many hosts set it.
 *
 * `uses`: the options a command reads (every one when unset: `serve`). The others are neither read
 * from the environment nor checked, and keep their defaults: a host's HELIXD_* variables, set for
 * the server, must not stop `helixd export` on an option it never uses. So the production
 * profile's needs (--secret, --public-url) bind only a command that uses them.
 */
export function loadConfig(
  flags: ConfigInput,
  env: NodeJS.ProcessEnv,
  uses?: readonly ConfigOption[],
): Config {
  const pick = (k: ConfigOption) => {
    if (uses && !uses.includes(k)) return undefined;
    const f = flags[k];
    if (f !== undefined) return f;
    const e = env[ENV_NAMES[k]];
    return e !== undefined && e !== '' ? e : undefined;
  };
  const label = (k: ConfigOption) =>
    `${ENV_NAMES[k]} / --${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

  const profile = String(pick('profile') ?? 'development') as Profile;
  if (!PROFILES.includes(profile))
    throw new ConfigError(`${label('profile')}: "${profile}" is not a profile (${PROFILES.join(' or ')})`);
  const production = profile === 'production';
  if (production) {
    // Every instance must sign cursors and report URLs alike, and report URLs must name the address
    // callers use: a generated secret and a guessed URL are development's conveniences.
    const why = {
      secret: 'the signing secret every instance shares',
      publicUrl: "this server's base URL as callers reach it",
    } as const;
    const missing = (['secret', 'publicUrl'] as const).filter(
      (k) => (!uses || uses.includes(k)) && pick(k) === undefined,
    );
    if (missing.length)
      throw new ConfigError(
        `the production profile needs ${missing.map((k) => `${label(k)} (${why[k]})`).join(' and ')}`,
      );
  }

  if (production) {
    // A production server answers as production does: injected faults are for tests against a
    // development server, and a leftover HELIXD_FAULTS must stop the start, not fail real clients.
    const given = (['faults', 'faultSeed'] as const).filter((k) => pick(k) !== undefined);
    if (given.length)
      throw new ConfigError(
        `the production profile never injects faults: remove ${given.map(label).join(' and ')}`,
      );
  }
  // Production's clock runs at real speed (from --now, if given): a driven clock is for tests
  // (README "Driven clock").
  if (production && pick('clockSpeed') !== undefined)
    throw new ConfigError(
      `the production profile runs its clock at real speed: remove ${label('clockSpeed')}`,
    );
  if (production) {
    // A production store holds the platform's own world: nothing may write it on its own.
    const given = (['live', 'liveRate', 'liveSeed'] as const).filter((k) => pick(k) !== undefined);
    if (given.length)
      throw new ConfigError(
        `the production profile never moves the world on its own: remove ${given.map(label).join(' and ')}`,
      );
  }
  const live = bool(pick('live') ?? false, label('live'));
  const liveRateRaw = pick('liveRate');
  const liveRate = liveRateRaw === undefined ? 5 : Number(String(liveRateRaw).trim());
  if (
    liveRateRaw !== undefined &&
    (!/^\d+(\.\d+)?$/.test(String(liveRateRaw).trim()) || liveRate > MAX_LIVE_RATE)
  )
    throw new ConfigError(
      `${label('liveRate')}: "${liveRateRaw}" must be a number of events per second from 0 to ${MAX_LIVE_RATE}`,
    );
  const liveSeedRaw = pick('liveSeed');
  const liveSeed =
    liveSeedRaw === undefined ? undefined : int(liveSeedRaw, label('liveSeed'), 0, 2 ** 31 - 1);
  const faultsRaw = pick('faults');
  let faults: FaultRule[] = [];
  try {
    if (faultsRaw !== undefined) faults = parseFaultRules(String(faultsRaw));
  } catch (e) {
    if (e instanceof FaultSyntaxError) throw new ConfigError(`${label('faults')}: ${e.message}`);
    throw e;
  }
  const faultSeedRaw = pick('faultSeed');
  const faultSeed =
    faultSeedRaw === undefined ? undefined : int(faultSeedRaw, label('faultSeed'), 0, 2 ** 31 - 1);

  const port = int(pick('port') ?? 8080, label('port'), 0, 65535);
  const host = String(pick('host') ?? '127.0.0.1');
  const db = String(pick('db') ?? env.DATABASE_URL ?? './helixd.db');
  const secretRaw = pick('secret');
  const secret = secretRaw === undefined ? undefined : String(secretRaw);
  if (secret !== undefined && secret.length < 16)
    throw new ConfigError(`${label('secret')}: must be at least 16 characters`);
  const publicHost =
    host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  const publicUrl = url(String(pick('publicUrl') ?? `http://${publicHost}:${port}`), label('publicUrl'));
  const siteUrl = url(String(pick('siteUrl') ?? 'https://streams.example.com'), label('siteUrl'));
  const nowRaw = pick('now');
  const now = nowRaw === undefined ? undefined : String(nowRaw);
  if (now !== undefined && Number.isNaN(Date.parse(now)))
    throw new ConfigError(`${label('now')}: "${now}" is not an ISO 8601 date-time`);
  const clockSpeed = speed(pick('clockSpeed') ?? 1, label('clockSpeed'));
  const legacy = bool(pick('legacy') ?? false, label('legacy'));
  const rateLimit = int(pick('rateLimit') ?? 800, label('rateLimit'), 0, 1_000_000_000);
  const redisRaw = pick('redisUrl');
  const redisUrl = redisRaw === undefined ? undefined : String(redisRaw);
  const userTokenTtl = parseDuration(String(pick('userTokenTtl') ?? '4h'), label('userTokenTtl'));
  const appTokenTtl = parseDuration(String(pick('appTokenTtl') ?? '60d'), label('appTokenTtl'));
  const seed = int(pick('seed') ?? 1, label('seed'), 0, 2 ** 31 - 1);
  const users = int(pick('users') ?? 200, label('users'), 10, 10_000_000);
  const skipSeed = production || bool(pick('skipSeed') ?? false, label('skipSeed'));
  const fixturesRaw = pick('fixtures');
  const fixtures = fixturesRaw === undefined ? undefined : String(fixturesRaw);
  const logLevel = String(pick('logLevel') ?? 'info');
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel))
    throw new ConfigError(`${label('logLevel')}: "${logLevel}" is not a log level`);
  const adminToken = secretToken(pick('adminToken'), label('adminToken'));
  const metricsToken = secretToken(pick('metricsToken'), label('metricsToken'));
  const queryTimeout = parseDurationMs(String(pick('queryTimeout') ?? '2s'), label('queryTimeout'));
  // `auto`: one process per core this process may use.
  const workersRaw = String(pick('workers') ?? 1).trim();
  const workers = workersRaw === 'auto' ? Math.min(availableParallelism(), MAX_WORKERS) : Number(workersRaw);
  if (!/^(\d+|auto)$/.test(workersRaw) || workers < 1 || workers > MAX_WORKERS)
    throw new ConfigError(
      `${label('workers')}: "${workersRaw}" must be a whole number from 1 to ${MAX_WORKERS}, or auto`,
    );
  const drain = parseDuration(String(pick('drain') ?? '5s'), label('drain'), true);

  return Object.freeze({
    profile,
    devShortcuts: !production,
    port,
    host,
    db,
    secret,
    publicUrl,
    siteUrl,
    now,
    clockSpeed,
    legacy,
    rateLimit,
    redisUrl,
    userTokenTtl,
    appTokenTtl,
    seed,
    users,
    skipSeed,
    fixtures,
    logLevel,
    adminToken,
    queryTimeout,
    metricsToken,
    workers,
    drain,
    faults: Object.freeze(faults),
    faultSeed,
    live,
    liveRate,
    liveSeed,
  });
}
