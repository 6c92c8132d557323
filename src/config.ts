// Configuration is read once, here: command-line flags, then HELIXD_* environment variables, then
// defaults. The result is validated and frozen and passed to whatever needs it; nothing else reads
// process.env. Each option is declared once, in OPTIONS (flag, environment variable, default,
// parsing, help) and IN_PRODUCTION (what the production profile does with it): the command line's
// options (src/cli/options.ts) and the help text's defaults come from there, and a test holds
// docs/configuration.md's table to `helixd serve --help`.
import { availableParallelism } from 'node:os';
import { type FaultRule, FaultSyntaxError, parseFaultRules } from './faults/rules.ts';

/**
 * `development` (the default): demo data, the mock-server routes, tokens printed at start.
 * `production`: none of those; --secret and --public-url required (docs/production.md).
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
   * start. Off in the production profile.
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
  /**
   * faults injected at random into requests (src/faults/injector.ts); empty: none. Never in the
   * production profile
   */
  readonly faults: readonly FaultRule[];
  /** seed of the draws of `faults`; unset: a new one each start (logged, to replay a run) */
  readonly faultSeed: number | undefined;
  /**
   * the live world (src/live/world.ts): the store's content moves while serving. Never in the
   * production profile
   */
  readonly live: boolean;
  /** events of the live world per second; 0: only when stepped (POST /admin/live/step) */
  readonly liveRate: number;
  /** seed of the live world's draws; unset: a new one each start (logged, to replay a run) */
  readonly liveSeed: number | undefined;
  /** failed attempts of a webhook notification before its subscription is revoked (src/eventsub/webhooks.ts) */
  readonly webhookRetries: number;
  /** the wait after a webhook's first failed attempt, milliseconds; each next wait doubles */
  readonly webhookBackoff: number;
  /** an EventSub WebSocket ping this often, milliseconds; no pong by the next closes the session (4002) */
  readonly wsPing: number;
  /** how long a `session_reconnect`'s URL may be taken up, milliseconds; then the old socket closes 4004 */
  readonly wsReconnectGrace: number;
}

/** What the profile decides: never an option of its own. */
type Derived = 'devShortcuts';
/** The options, each a flag and an environment variable (OPTIONS). */
export type ConfigOption = Exclude<keyof Config, Derived>;

/** A value as given: a flag's (a string, or true for a flag without one) or an environment variable's. */
type Raw = string | number | boolean;

export type ConfigInput = Partial<Record<ConfigOption, Raw | undefined>>;

/** The levels `--log-level` takes. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

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

function int(v: Raw, name: string, min: number, max: number): number {
  const n = typeof v === 'number' ? v : Number(String(v).trim());
  if (!Number.isInteger(n) || n < min || n > max)
    throw new ConfigError(`${name}: "${v}" must be a whole number from ${min} to ${max}`);
  return n;
}

/** The longest `--ws-reconnect-grace`: well within the hour an event is kept for a reader. */
const MAX_RECONNECT_GRACE_MS = 10 * 60_000;

/** The fastest `--clock-speed`: a year of server time in about half a minute. */
export const MAX_CLOCK_SPEED = 1_000_000;

function speed(v: Raw, name: string): number {
  const n = typeof v === 'number' ? v : /^\d+(\.\d+)?$/.test(String(v).trim()) ? Number(v) : Number.NaN;
  if (!(n > 0 && n <= MAX_CLOCK_SPEED))
    throw new ConfigError(
      `${name}: "${v}" must be a number greater than 0 and at most ${MAX_CLOCK_SPEED} (60: the clock runs 60 times faster than real time)`,
    );
  return n;
}

function bool(v: Raw, name: string): boolean {
  if (typeof v === 'boolean') return v;
  const s = String(v).toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(s)) return true;
  if (['0', 'false', 'no', 'off', ''].includes(s)) return false;
  throw new ConfigError(`${name}: "${v}" must be true or false`);
}

/**
 * A value as text; `fault`, when given, says what is wrong with a text it refuses (the error names
 * the option before it).
 */
const text =
  (fault?: (s: string) => string | undefined) =>
  (v: Raw, label: string): string => {
    const s = String(v);
    const wrong = fault?.(s);
    if (wrong !== undefined) throw new ConfigError(`${label}: ${wrong}`);
    return s;
  };

/** A secret: at least `min` characters. */
const atLeast = (min: number) =>
  text((s) => (s.length < min ? `must be at least ${min} characters` : undefined));

function url(v: string, name: string): string {
  try {
    const u = new URL(v);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
    return v.replace(/\/+$/, '');
  } catch {
    throw new ConfigError(`${name}: "${v}" is not an http(s) URL`);
  }
}

const seedNumber = (v: Raw, name: string) => int(v, name, 0, 2 ** 31 - 1);

/**
 * What the production profile does with an option, decided here and nowhere else (loadConfig
 * applies it, the help text states it).
 *
 * `needs`: the production profile refuses to start without these, for the reason given. Every
 * instance must sign cursors and report URLs alike, and report URLs must name the address callers
 * use: a generated secret and a guessed URL are development's conveniences.
 *
 * `refuses`: the production profile refuses to start with these, for the reason given, checked in
 * this order. Injected faults are for tests against a development server, and a leftover
 * HELIXD_FAULTS must stop the start, not fail real clients. The production profile's clock runs at
 * real speed (from --now, if given): a driven clock is for tests (docs/clock.md). A production
 * store holds the platform's own world: nothing may write it on its own.
 *
 * `on`: on in the production profile, whatever is given (it never seeds demo data).
 */
const IN_PRODUCTION: {
  readonly needs: Partial<Record<ConfigOption, string>>;
  readonly refuses: readonly (readonly [reason: string, options: readonly ConfigOption[]])[];
  readonly on: readonly ConfigOption[];
} = {
  needs: {
    secret: 'the signing secret every instance shares',
    publicUrl: "this server's base URL as callers reach it",
  },
  refuses: [
    ['never injects faults', ['faults', 'faultSeed']],
    ['runs its clock at real speed', ['clockSpeed']],
    ['never moves the world on its own', ['live', 'liveRate', 'liveSeed']],
  ],
  on: ['skipSeed'],
};

/** One option of `helixd serve`: its flag, its environment variable, its default, its parsing, its help. */
export interface OptionSpec<K extends ConfigOption = ConfigOption> {
  /** commander's flags: `--rate-limit <points>`, `-p, --port <port>`; a flag without a value is a boolean */
  readonly flag: string;
  readonly env: string;
  /** read after `env` when neither flag nor `env` is given */
  readonly alsoEnv?: string;
  /** the value when none is given, parsed as a given one would be; the help text states it */
  readonly default?: string | number | boolean;
  /** a value given (or the default) into the configuration's; ConfigError for one it refuses */
  readonly parse: (v: Raw, label: string) => Config[K];
  /** `serve --help`'s line, to which the production rule (IN_PRODUCTION), the default and the env name are added */
  readonly help: string;
}

/**
 * Every option of `helixd serve`, in the order of `serve --help` (and docs/configuration.md). The
 * other commands take some of them (src/cli/options.ts) and read only the ones they use.
 */
export const OPTIONS: { readonly [K in ConfigOption]: OptionSpec<K> } = {
  profile: {
    flag: '--profile <profile>',
    env: 'HELIXD_PROFILE',
    default: 'development',
    parse: (v, label) =>
      text((s) =>
        PROFILES.includes(s as Profile) ? undefined : `"${s}" is not a profile (${PROFILES.join(' or ')})`,
      )(v, label) as Profile,
    help: 'development (demo data, mock-server routes, tokens printed) or production',
  },
  port: {
    flag: '-p, --port <port>',
    env: 'HELIXD_PORT',
    default: 8080,
    parse: (v, label) => int(v, label, 0, 65535),
    help: 'port to listen on',
  },
  host: {
    flag: '--host <host>',
    env: 'HELIXD_HOST',
    default: '127.0.0.1',
    parse: text(),
    help: 'address to listen on',
  },
  db: {
    flag: '--db <url>',
    env: 'HELIXD_DB',
    // many hosts set it
    alsoEnv: 'DATABASE_URL',
    default: './helixd.db',
    parse: text(),
    help: 'SQLite file path or postgres:// URL',
  },
  secret: {
    flag: '--secret <secret>',
    env: 'HELIXD_SECRET',
    parse: atLeast(16),
    help: 'signing secret for report URLs and cursors',
  },
  publicUrl: {
    flag: '--public-url <url>',
    env: 'HELIXD_PUBLIC_URL',
    // unset: http://host:port (loadConfig)
    parse: (v, label) => url(String(v), label),
    help: "this server's base URL as callers see it",
  },
  siteUrl: {
    flag: '--site-url <url>',
    env: 'HELIXD_SITE_URL',
    default: 'https://streams.example.com',
    parse: (v, label) => url(String(v), label),
    help: "base URL of the platform's site, for links in answers",
  },
  now: {
    flag: '--now <iso>',
    env: 'HELIXD_NOW',
    parse: text((s) => (Number.isNaN(Date.parse(s)) ? `"${s}" is not an ISO 8601 date-time` : undefined)),
    help: 'start the server clock at this instant',
  },
  clockSpeed: {
    flag: '--clock-speed <n>',
    env: 'HELIXD_CLOCK_SPEED',
    default: 1,
    parse: speed,
    help: 'run the server clock n times faster than real time, e.g. 60',
  },
  legacy: {
    flag: '--legacy',
    env: 'HELIXD_LEGACY',
    default: false,
    parse: bool,
    help: 'serve the decommissioned operations from the store',
  },
  rateLimit: {
    flag: '--rate-limit <points>',
    env: 'HELIXD_RATE_LIMIT',
    default: 800,
    parse: (v, label) => int(v, label, 0, 1_000_000_000),
    help: 'rate-limit points per minute, 0 = off',
  },
  redisUrl: {
    flag: '--redis-url <url>',
    env: 'HELIXD_REDIS_URL',
    parse: text(),
    help: 'Redis for rate-limit buckets shared by instances',
  },
  userTokenTtl: {
    flag: '--user-token-ttl <duration>',
    env: 'HELIXD_USER_TOKEN_TTL',
    default: '4h',
    parse: (v, label) => parseDuration(String(v), label),
    help: 'lifetime of user tokens',
  },
  appTokenTtl: {
    flag: '--app-token-ttl <duration>',
    env: 'HELIXD_APP_TOKEN_TTL',
    default: '60d',
    parse: (v, label) => parseDuration(String(v), label),
    help: 'lifetime of app tokens',
  },
  seed: {
    flag: '--seed <n>',
    env: 'HELIXD_SEED',
    default: 1,
    parse: seedNumber,
    help: 'demo data seed for the first start',
  },
  users: {
    flag: '--users <n>',
    env: 'HELIXD_USERS',
    default: 200,
    parse: (v, label) => int(v, label, 10, 10_000_000),
    help: 'demo data size for the first start',
  },
  skipSeed: {
    flag: '--skip-seed',
    env: 'HELIXD_SKIP_SEED',
    default: false,
    parse: bool,
    help: 'start with an empty store instead of demo data',
  },
  fixtures: {
    flag: '--fixtures <file>',
    env: 'HELIXD_FIXTURES',
    parse: text(),
    help: 'start a fresh store from exactly this world (a fixture document or NDJSON)',
  },
  adminToken: {
    flag: '--admin-token <token>',
    env: 'HELIXD_ADMIN_TOKEN',
    parse: atLeast(MIN_ADMIN_TOKEN),
    help: `bearer token of the admin API under /admin, at least ${MIN_ADMIN_TOKEN} characters; unset: off`,
  },
  metricsToken: {
    flag: '--metrics-token <token>',
    env: 'HELIXD_METRICS_TOKEN',
    parse: atLeast(MIN_ADMIN_TOKEN),
    help: `bearer token /metrics asks for, at least ${MIN_ADMIN_TOKEN} characters; unset: /metrics is open`,
  },
  logLevel: {
    flag: '--log-level <level>',
    env: 'HELIXD_LOG_LEVEL',
    default: 'info',
    parse: text((s) => (LOG_LEVELS.includes(s) ? undefined : `"${s}" is not a log level`)),
    help: LOG_LEVELS.join('|'),
  },
  queryTimeout: {
    flag: '--query-timeout <duration>',
    env: 'HELIXD_QUERY_TIMEOUT',
    default: '2s',
    parse: (v, label) => parseDurationMs(String(v), label),
    help: 'deadline of every store query and Redis command (500ms, 2s), then 503',
  },
  workers: {
    flag: '--workers <n>',
    env: 'HELIXD_WORKERS',
    default: 1,
    parse: (v, label) => {
      // `auto`: one process per core this process may use.
      const given = String(v).trim();
      const n = given === 'auto' ? Math.min(availableParallelism(), MAX_WORKERS) : Number(given);
      if (!/^(\d+|auto)$/.test(given) || n < 1 || n > MAX_WORKERS)
        throw new ConfigError(
          `${label}: "${given}" must be a whole number from 1 to ${MAX_WORKERS}, or auto`,
        );
      return n;
    },
    help: 'processes serving the port: a number, or auto (one per core)',
  },
  drain: {
    flag: '--drain <duration>',
    env: 'HELIXD_DRAIN',
    default: '5s',
    parse: (v, label) => parseDuration(String(v), label, true),
    help: 'on SIGTERM or SIGINT, how long /readyz answers 503 before the listener closes',
  },
  faults: {
    flag: '--faults <rules>',
    env: 'HELIXD_FAULTS',
    // unset: none (loadConfig)
    parse: (v, label) => {
      try {
        return parseFaultRules(String(v));
      } catch (e) {
        if (e instanceof FaultSyntaxError) throw new ConfigError(`${label}: ${e.message}`);
        throw e;
      }
    },
    help: 'inject faults at random, e.g. "503:2%, latency:300ms:10%, 429:1%"',
  },
  faultSeed: {
    flag: '--fault-seed <n>',
    env: 'HELIXD_FAULT_SEED',
    parse: seedNumber,
    help: "seed of --faults' draws, to replay a run",
  },
  live: {
    flag: '--live',
    env: 'HELIXD_LIVE',
    default: false,
    parse: bool,
    help: 'a world that moves: viewer counts drift, streams go live and offline, clips, videos, subscriptions, follows and markers appear',
  },
  liveRate: {
    flag: '--live-rate <n>',
    env: 'HELIXD_LIVE_RATE',
    default: 5,
    parse: (v, label) => {
      const rate = Number(String(v).trim());
      if (!/^\d+(\.\d+)?$/.test(String(v).trim()) || rate > MAX_LIVE_RATE)
        throw new ConfigError(
          `${label}: "${v}" must be a number of events per second from 0 to ${MAX_LIVE_RATE}`,
        );
      return rate;
    },
    help: 'events of --live per second, 0 = only when stepped',
  },
  liveSeed: {
    flag: '--live-seed <n>',
    env: 'HELIXD_LIVE_SEED',
    parse: seedNumber,
    help: "seed of --live's draws, to replay a run",
  },
  webhookRetries: {
    flag: '--webhook-retries <n>',
    env: 'HELIXD_WEBHOOK_RETRIES',
    default: 5,
    parse: (v, label) => {
      const given = String(v).trim();
      const n = Number(given);
      if (!/^\d+$/.test(given) || n < 1 || n > 20)
        throw new ConfigError(`${label}: "${given}" must be a whole number from 1 to 20`);
      return n;
    },
    help: 'failed attempts of an EventSub webhook notification before its subscription is revoked',
  },
  webhookBackoff: {
    flag: '--webhook-backoff <duration>',
    env: 'HELIXD_WEBHOOK_BACKOFF',
    default: '1s',
    parse: (v, label) => parseDurationMs(String(v), label),
    help: "wait after a webhook's first failed attempt (100ms, 1s); each next wait doubles",
  },
  wsPing: {
    flag: '--ws-ping <duration>',
    env: 'HELIXD_WS_PING',
    default: '30s',
    parse: (v, label) => parseDurationMs(String(v), label),
    help: 'an EventSub WebSocket ping this often (100ms, 30s); a session with no pong by the next one is closed (4002)',
  },
  wsReconnectGrace: {
    flag: '--ws-reconnect-grace <duration>',
    env: 'HELIXD_WS_RECONNECT_GRACE',
    default: '30s',
    parse: (v, label) => {
      const ms = parseDurationMs(String(v), label);
      // Within the outbox's hour (src/eventsub/housekeeping.ts): a session claimed later could
      // have lost events to the pruning by age.
      if (ms > MAX_RECONNECT_GRACE_MS) throw new ConfigError(`${label}: "${v}" must be at most 10m`);
      return ms;
    },
    help: "how long a session_reconnect's URL stays valid (the platform's 30s); untaken, the old socket closes (4004)",
  },
};

const KEYS = Object.keys(OPTIONS) as ConfigOption[];

export const ENV_NAMES = Object.fromEntries(KEYS.map((k) => [k, OPTIONS[k].env])) as Record<
  ConfigOption,
  string
>;

/** `--rate-limit`, of `--rate-limit <points>` */
const longFlag = (k: ConfigOption): string => /--[a-z-]+/.exec(OPTIONS[k].flag)?.[0] ?? k;

/** The name an error gives an option: `HELIXD_PORT / --port`. */
const label = (k: ConfigOption) => `${OPTIONS[k].env} / ${longFlag(k)}`;

/**
 * The help text of option `k`: `help` (the table's when unset: the command's own wording), what the
 * production profile does with it, its default, its environment variables. Written from the table
 * alone, so that the default stated is the default used.
 */
export function helpText(k: ConfigOption, help: string = OPTIONS[k].help): string {
  const { default: dflt, env, alsoEnv } = OPTIONS[k];
  const rule =
    IN_PRODUCTION.needs[k] !== undefined
      ? ' (required in production)'
      : IN_PRODUCTION.on.includes(k)
        ? ' (always on in production)'
        : IN_PRODUCTION.refuses.some(([, options]) => options.includes(k))
          ? ' (not in production)'
          : '';
  const stated = dflt === undefined || typeof dflt === 'boolean' ? '' : `, default ${dflt}`;
  return `${help}${rule}${stated} (env ${env})${alsoEnv ? `, also ${alsoEnv}` : ''}`;
}

/**
 * Builds the configuration from flags (already parsed; undefined when not given) and an
 * environment: each option from its flag, else its environment variable(s), else its default
 * (OPTIONS).
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
  const given = (v: string | undefined) => (v !== undefined && v !== '' ? v : undefined);
  const pick = (k: ConfigOption): Raw | undefined => {
    if (uses && !uses.includes(k)) return undefined;
    const { env: name, alsoEnv } = OPTIONS[k];
    return flags[k] ?? given(env[name]) ?? (alsoEnv === undefined ? undefined : given(env[alsoEnv]));
  };
  const parse = <K extends ConfigOption>(k: K): Config[K] | undefined => {
    const v = pick(k) ?? OPTIONS[k].default;
    return v === undefined ? undefined : OPTIONS[k].parse(v, label(k));
  };

  const profile = parse('profile') as Profile;
  const production = profile === 'production';
  if (production) {
    const { needs, refuses } = IN_PRODUCTION;
    const missing = KEYS.filter((k) => needs[k] && (!uses || uses.includes(k)) && pick(k) === undefined);
    if (missing.length)
      throw new ConfigError(
        `the production profile needs ${missing.map((k) => `${label(k)} (${needs[k]})`).join(' and ')}`,
      );
    for (const [reason, options] of refuses) {
      const given = options.filter((k) => pick(k) !== undefined);
      if (given.length)
        throw new ConfigError(`the production profile ${reason}: remove ${given.map(label).join(' and ')}`);
    }
  }

  const values: Partial<Record<ConfigOption, unknown>> = { profile };
  for (const k of KEYS) {
    if (k === 'profile') continue;
    values[k] = production && IN_PRODUCTION.on.includes(k) ? true : parse(k);
  }
  const c = values as { -readonly [K in ConfigOption]: Config[K] };
  if (c.publicUrl === undefined) {
    const host = c.host;
    const publicHost =
      host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
    c.publicUrl = OPTIONS.publicUrl.parse(`http://${publicHost}:${c.port}`, label('publicUrl'));
  }
  return Object.freeze({ ...c, devShortcuts: !production, faults: Object.freeze(c.faults ?? []) });
}
