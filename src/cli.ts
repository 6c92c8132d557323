// The helixd command line. Each command returns an exit code; errors go to stderr as one clear
// line and exit 1, never a stack trace for a user mistake.
import cluster from 'node:cluster';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { Readable, Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { Command, Option } from 'commander';
import { isScope, splitScopes } from './auth/scopes.ts';
import { clockFor, nowSeconds } from './clock.ts';
import {
  type Config,
  ConfigError,
  type ConfigInput,
  type ConfigOption,
  ENV_NAMES,
  loadConfig,
  parseDuration,
} from './config.ts';
import { EXPORT_FORMATS, type ExportFormat } from './io/formats.ts';
import { progressLine, type Summary, Tally } from './io/progress.ts';
import { RECORD_KIND_NAMES } from './records/names.ts';
import type { Store } from './store/db.ts';
import type { ClientRow } from './store/schema.ts';
import { VERSION } from './version.ts';
import { parseNumericId } from './wire/ids.ts';

// The modules a command runs with are imported by its action, when it runs: `helixd --help` and
// `--version` load none of them, and `token` no HTTP server (Kysely, TypeBox and Fastify are most
// of a start-up: bench/startup.ts). The modules imported above are small and import nothing heavy.

class UsageError extends Error {}

const env = (k: ConfigOption) => `(env ${ENV_NAMES[k]})`;

function dbOption() {
  return new Option('--db <url>', `SQLite file path or postgres:// URL ${env('db')}, also DATABASE_URL`);
}

/** `uses`: the options the command reads (src/config.ts loadConfig); unset: all (serve). */
function configFrom(opts: Record<string, unknown>, uses?: readonly ConfigOption[]): Config {
  const flags: ConfigInput = {};
  for (const k of Object.keys(ENV_NAMES) as ConfigOption[]) {
    const v = opts[k];
    if (v !== undefined) flags[k] = v as string | number | boolean;
  }
  return loadConfig(flags, process.env, uses);
}

async function withStore<T>(config: Config, fn: (store: Store) => Promise<T>): Promise<T> {
  const { openStore } = await import('./store/db.ts');
  const { migrateOrThrow } = await import('./store/migrate.ts');
  const store = openStore({ url: config.db });
  try {
    await migrateOrThrow(store);
    return await fn(store);
  } finally {
    await store.close();
  }
}

/**
 * Where a command reads and writes: the process's own streams, or others when the command line runs
 * inside another program (tests run `import` and `export` in-process).
 */
export interface CliIo {
  stdin: Readable;
  stdout: Writable;
  /** the progress line shows only when this is a terminal */
  stderr: Writable & { isTTY?: boolean; columns?: number };
}

const PROCESS_IO: CliIo = process;

export function buildCli(io: CliIo = PROCESS_IO): Command {
  const program = new Command('helixd')
    .description('A self-hostable server for a live-streaming platform read API (Twitch Helix wire format)')
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .version(VERSION, '-V, --version', 'print the version')
    .showHelpAfterError()
    .exitOverride();

  program
    .command('serve', { isDefault: true })
    .description('serve the API (development: seeds demo data on the first start with an empty store)')
    .option(
      '--profile <profile>',
      `development (demo data, mock-server routes, tokens printed) or production, default development ${env('profile')}`,
    )
    .option('-p, --port <port>', `port to listen on, default 8080 ${env('port')}`)
    .option('--host <host>', `address to listen on, default 127.0.0.1 ${env('host')}`)
    .addOption(dbOption())
    .option('--secret <secret>', `signing secret for report URLs and cursors ${env('secret')}`)
    .option('--public-url <url>', `this server's base URL as callers see it ${env('publicUrl')}`)
    .option('--site-url <url>', `base URL of the platform's site, for links in answers ${env('siteUrl')}`)
    .option('--now <iso>', `start the server clock at this instant ${env('now')}`)
    .option(
      '--clock-speed <n>',
      `run the server clock n times faster than real time, e.g. 60 (not in production), default 1 ${env('clockSpeed')}`,
    )
    .option('--legacy', `serve the decommissioned operations from the store ${env('legacy')}`)
    .option('--rate-limit <points>', `rate-limit points per minute, 0 = off, default 800 ${env('rateLimit')}`)
    .option('--redis-url <url>', `Redis for rate-limit buckets shared by instances ${env('redisUrl')}`)
    .option('--user-token-ttl <duration>', `lifetime of user tokens, default 4h ${env('userTokenTtl')}`)
    .option('--app-token-ttl <duration>', `lifetime of app tokens, default 60d ${env('appTokenTtl')}`)
    .option('--seed <n>', `demo data seed for the first start, default 1 ${env('seed')}`)
    .option('--users <n>', `demo data size for the first start, default 200 ${env('users')}`)
    .option('--skip-seed', `start with an empty store instead of demo data ${env('skipSeed')}`)
    .option(
      '--fixtures <file>',
      `start a fresh store from exactly this world (a fixture document or NDJSON) ${env('fixtures')}`,
    )
    .option(
      '--admin-token <token>',
      `bearer token of the admin API under /admin, at least 32 characters; unset: off ${env('adminToken')}`,
    )
    .option(
      '--metrics-token <token>',
      `bearer token /metrics asks for, at least 32 characters; unset: /metrics is open ${env('metricsToken')}`,
    )
    .option(
      '--log-level <level>',
      `fatal|error|warn|info|debug|trace|silent, default info ${env('logLevel')}`,
    )
    .option(
      '--query-timeout <duration>',
      `deadline of every store query and Redis command (500ms, 2s), then 503; default 2s ${env('queryTimeout')}`,
    )
    .option(
      '--workers <n>',
      `processes serving the port: a number, or auto (one per core), default 1 ${env('workers')}`,
    )
    .option(
      '--drain <duration>',
      `on SIGTERM or SIGINT, how long /readyz answers 503 before the listener closes, default 5s ${env('drain')}`,
    )
    .option(
      '--faults <rules>',
      `inject faults at random, e.g. "503:2%, latency:300ms:10%, 429:1%" (not in production) ${env('faults')}`,
    )
    .option('--fault-seed <n>', `seed of --faults' draws, to replay a run ${env('faultSeed')}`)
    .option(
      '--live',
      `a world that moves: viewer counts drift, streams go live and offline, clips, videos, subscriptions, follows and markers appear (not in production) ${env('live')}`,
    )
    .option(
      '--live-rate <n>',
      `events of --live per second, 0 = only when stepped; default 5 ${env('liveRate')}`,
    )
    .option('--live-seed <n>', `seed of --live's draws, to replay a run ${env('liveSeed')}`)
    .action(async (opts) => {
      if (cluster.isWorker) return (await import('./cluster/worker.ts')).serveWorker();
      const config = configFrom(opts);
      // The banner to stderr: stdout carries the JSON log lines alone.
      const print = (l: string) => io.stderr.write(`${l}\n`);
      if (config.workers > 1) return (await import('./cluster/primary.ts')).servePrimary(config, print);
      const { startServer } = await import('./server.ts');
      const { stopMessage, untilStopSignal } = await import('./cluster/shutdown.ts');
      const running = await startServer(config, print);
      await untilStopSignal(config, running.stop, (signal, drain) =>
        running.app.log.info({ signal }, stopMessage(drain ? config.drain : 0)),
      );
    });

  program
    .command('seed')
    .description('write the deterministic demo data set into the store')
    .addOption(dbOption())
    .option('--seed <n>', `seed: the same seed and size give the same data, default 1 ${env('seed')}`)
    .option('--users <n>', `number of users; every other table scales with it, default 200 ${env('users')}`)
    .option('--now <iso>', `the day the data is generated relative to, default today (UTC) ${env('now')}`)
    .option('--force', 'replace the data of a store that already holds some')
    .action(async (opts) => {
      const config = configFrom({ db: opts.db, seed: opts.seed, users: opts.users, now: opts.now }, [
        'db',
        'seed',
        'users',
        'now',
      ]);
      const { dayStart, sizesFor } = await import('./seed/generate.ts');
      const { seedStore } = await import('./seed/index.ts');
      await withStore(config, async (store) => {
        const started = Date.now();
        const estimate = Object.values(sizesFor(config.users)).reduce((a, b) => a + b, 0);
        const bar = await progressBar(estimate, io.stderr);
        const summary = await seedStore(
          store,
          { seed: config.seed, users: config.users, anchor: dayStart(clockFor(config).now()) },
          { force: Boolean(opts.force), onProgress: bar.tick },
        );
        bar.stop();
        const secs = ((Date.now() - started) / 1000).toFixed(1);
        const counts = Object.entries(summary.counts)
          .map(([t, n]) => `${t} ${n}`)
          .join(', ');
        io.stdout.write(`seeded ${store.location} in ${secs} s: ${counts}\n`);
        io.stdout.write(
          `demo broadcaster ${summary.demoLogin} (id ${summary.demoUserId}); demo client ${summary.demoClientId}\n`,
        );
      });
    });

  program
    .command('migrate')
    .description('apply pending database migrations (serve does this too)')
    .addOption(dbOption())
    .action(async (opts) => {
      const config = configFrom({ db: opts.db }, ['db']);
      const { openStore } = await import('./store/db.ts');
      const { migrateOrThrow } = await import('./store/migrate.ts');
      const store = openStore({ url: config.db });
      try {
        const applied = await migrateOrThrow(store);
        io.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'already up to date\n');
      } finally {
        await store.close();
      }
    });

  program
    .command('token')
    .description("print a working access token (and a user token's refresh token) from the store")
    .addOption(dbOption())
    .option('--user <login-or-id>', 'mint a user token for this user')
    .option('--app', 'mint an app token')
    .option('--scope <scopes>', 'space-separated scopes of a user token', '')
    .option('--client <id>', 'the client the token belongs to (default: the demo client)')
    .option('--expires <duration>', 'lifetime, e.g. 30m, 4h, 60d (default: the configured token lifetime)')
    .option('--now <iso>', `the instant the token is issued at, default the system clock ${env('now')}`)
    .option('--json', 'print the token reply as JSON, with client_id (and user_id, login for a user token)')
    .action(async (opts) => {
      const config = configFrom({ db: opts.db, now: opts.now }, ['db', 'now', 'userTokenTtl', 'appTokenTtl']);
      if (Boolean(opts.user) === Boolean(opts.app))
        throw new UsageError('give exactly one of --user <login-or-id> and --app');
      const scopes = splitScopes(opts.scope);
      const unknown = scopes.filter((s) => !isScope(s));
      if (unknown.length) throw new UsageError(`unknown scope: ${unknown.join(', ')}`);
      if (opts.app && scopes.length)
        throw new UsageError('app tokens carry no scopes; drop --scope or use --user');
      const { mintToken } = await import('./auth/tokens.ts');
      const { readSeedInfo } = await import('./seed/index.ts');
      const { demoClients, findClient } = await import('./store/clients.ts');
      const { findUserByLoginOrId } = await import('./store/users.ts');
      await withStore(config, async (store) => {
        let client: ClientRow | undefined;
        if (opts.client !== undefined) {
          client = await findClient(store.db, opts.client);
          if (!client) throw new UsageError(`unknown client: ${opts.client}`);
        } else {
          // The store's demo client, whatever wrote it (the seed, a fixture or an import with
          // "demo": true): the seeded one while it is there, else the oldest; naming the choice
          // when there are several.
          const demos = await demoClients(store.db);
          const seeded = (await readSeedInfo(store))?.demoClientId;
          client = demos.find((c) => c.id === seeded) ?? demos[0];
          if (!client) throw new UsageError('no demo client in this store: give --client <id>');
          if (demos.length > 1)
            io.stderr.write(
              `helixd: ${demos.length} demo clients in this store; using ${client.id} (give --client <id> for another: ${demos
                .filter((c) => c !== client)
                .map((c) => c.id)
                .join(', ')})\n`,
            );
        }
        let userId: number | null = null;
        let login: string | undefined;
        if (opts.user) {
          const user = await findUserByLoginOrId(store.db, String(opts.user), parseNumericId(opts.user));
          if (!user) throw new UsageError(`unknown user: ${opts.user}`);
          userId = user.id;
          login = user.login;
        }
        const ttl = opts.expires
          ? parseDuration(opts.expires, '--expires')
          : opts.app
            ? config.appTokenTtl
            : config.userTokenTtl;
        const token = await mintToken(store.db, {
          kind: opts.app ? 'app' : 'user',
          clientId: client.id,
          userId,
          scopes,
          ttl,
          now: nowSeconds(clockFor(config)),
        });
        // A user token comes with its refresh token, so that a client given both can keep going
        // past the access token's lifetime (POST /oauth2/token grant_type=refresh_token).
        if (opts.json)
          io.stdout.write(
            `${JSON.stringify({ ...token, client_id: client.id, ...(login ? { user_id: String(userId), login } : {}) })}\n`,
          );
        else if (token.refresh_token)
          io.stdout.write(`access_token   ${token.access_token}\nrefresh_token  ${token.refresh_token}\n`);
        else io.stdout.write(`${token.access_token}\n`);
      });
    });

  program
    .command('import')
    .description('write the records of a file into the store, all of them or none (ids kept as given)')
    .argument(
      '<file>',
      'NDJSON ({"kind": "clip", "data": {...}} per line) or a fixture document; - reads stdin',
    )
    .addOption(dbOption())
    .option('--json', 'print the summary as JSON: records per kind, rows, seconds, rows_per_second')
    .action(async (file: string, opts) => {
      const config = configFrom({ db: opts.db }, ['db']);
      const input = file === '-' ? { stream: io.stdin } : await openInput(file);
      const { importItems } = await import('./io/import.ts');
      const records = await importInput(input);
      await withStore(config, async (store) => {
        const tally = new Tally(progressLine('importing', input.size, io.stderr));
        let summary: Summary;
        try {
          summary = await importItems(store, records, { tally });
        } catch (err) {
          // One transaction: whatever went wrong, the store is as it was.
          throw new UsageError(`${(err as Error).message} (nothing was imported)`, { cause: err });
        } finally {
          input.stream.destroy();
        }
        io.stdout.write(opts.json ? `${JSON.stringify(summary)}\n` : `imported ${describe(summary)}\n`);
      });
    });

  program
    .command('export')
    .description('write the records of the store, kind by kind in dependency order, then by key')
    .addOption(dbOption())
    .option('--kind <kind...>', `only these kinds (default: all): ${RECORD_KIND_NAMES.join(' ')}`)
    .option('--out <file>', 'write to this file (replaced only once complete) instead of stdout')
    .addOption(
      new Option('--format <format>', 'NDJSON, or one fixture document for small worlds')
        .choices(EXPORT_FORMATS)
        .default('ndjson'),
    )
    .option(
      '--json',
      'print the summary as JSON on stdout (with --out: stdout carries the records otherwise)',
    )
    .action(async (opts) => {
      const config = configFrom({ db: opts.db }, ['db']);
      const { RECORD_KINDS, recordKind } = await import('./records/index.ts');
      const { exportRecords } = await import('./io/export.ts');
      const asked: string[] = opts.kind ?? RECORD_KINDS.map((k) => k.kind);
      const unknown = asked.filter((k) => !recordKind(k));
      if (unknown.length)
        throw new UsageError(
          `--kind: unknown kind ${unknown.join(', ')} (kinds: ${RECORD_KINDS.map((k) => k.kind).join(', ')})`,
        );
      if (opts.json && !opts.out) throw new UsageError('--json needs --out: stdout carries the records');
      const kinds = RECORD_KINDS.filter((k) => asked.includes(k.kind));
      await withStore(config, async (store) => {
        const tally = new Tally(progressLine('exporting', undefined, io.stderr));
        const run = { kinds, format: opts.format as ExportFormat, tally };
        const summary = opts.out
          ? await writeFileWhole(opts.out, (out) => exportRecords(store, out, run))
          : await exportRecords(store, io.stdout, run);
        if (opts.json) io.stdout.write(`${JSON.stringify(summary)}\n`);
        else (opts.out ? io.stdout : io.stderr).write(`exported ${describe(summary)}\n`);
      });
    });

  const client = program.command('client').description('manage client applications');
  client
    .command('create')
    .description('register a client; prints its id and secret (the secret is shown only now)')
    .addOption(dbOption())
    .requiredOption('--name <name>', 'the application name')
    .option('--redirect-uri <uri...>', 'redirect URI(s) allowed in the authorization flow')
    .option('--now <iso>', `the instant the client is registered at, default the system clock ${env('now')}`)
    .option('--json', 'print as JSON')
    .action(async (opts) => {
      const config = configFrom({ db: opts.db, now: opts.now }, ['db', 'now']);
      const uris: string[] = opts.redirectUri ?? [];
      // The client record's own rule (src/records/kinds.ts), as the admin API and import apply it.
      const { redirectUrisRefusal } = await import('./records/kinds.ts');
      const refused = redirectUrisRefusal(uris);
      if (refused) throw new UsageError(`--redirect-uri: client ${refused.message}`);
      const { randomId, sha256 } = await import('./auth/tokens.ts');
      const { insertClient } = await import('./store/clients.ts');
      await withStore(config, async (store) => {
        const id = randomId();
        const secret = randomId();
        await insertClient(store.db, {
          id,
          name: opts.name,
          secret_hash: sha256(secret),
          demo_secret: null,
          redirect_uris: JSON.stringify(uris),
          created_at: nowSeconds(clockFor(config)),
        });
        if (opts.json)
          io.stdout.write(
            `${JSON.stringify({ client_id: id, client_secret: secret, name: opts.name, redirect_uris: uris })}\n`,
          );
        else io.stdout.write(`client_id      ${id}\nclient_secret  ${secret}\n`);
      });
    });
  client
    .command('list')
    .description('list registered clients')
    .addOption(dbOption())
    .option('--json', 'print as JSON')
    .action(async (opts) => {
      const config = configFrom({ db: opts.db }, ['db']);
      const { allClients, redirectUrisOf } = await import('./store/clients.ts');
      await withStore(config, async (store) => {
        const list = (await allClients(store.db)).map((r) => ({
          client_id: r.id,
          name: r.name,
          redirect_uris: redirectUrisOf(r),
        }));
        if (opts.json) io.stdout.write(`${JSON.stringify(list)}\n`);
        else
          for (const c of list) io.stdout.write(`${c.client_id}  ${c.name}  ${c.redirect_uris.join(' ')}\n`);
      });
    });

  return program;
}

/** A progress bar on a terminal; nothing otherwise. `estimate`: rows expected (analytics days come on top). */
async function progressBar(
  estimate: number,
  stream: CliIo['stderr'],
): Promise<{ tick: (table: string, rows: number) => void; stop: () => void }> {
  if (!stream.isTTY) return { tick: () => {}, stop: () => {} };
  const { default: progress } = await import('cli-progress');
  const bar = new progress.SingleBar(
    { format: 'seeding {bar} {percentage}% | {value} rows | {table}', stream },
    progress.Presets.shades_classic,
  );
  let done = 0;
  bar.start(estimate, 0, { table: '' });
  return {
    tick(table, rows) {
      done += rows;
      if (done > estimate) bar.setTotal(done);
      bar.update(done, { table });
    },
    stop: () => bar.stop(),
  };
}

/** An input file and its size (for the progress line), or a clear error. */
/** From this size (or of unknown size: stdin) an input is read in a worker thread: starting one costs more than a small file. */
const WORKER_FROM_BYTES = 1_000_000;

async function importInput(input: { stream: Readable; size?: number }) {
  if (input.size !== undefined && input.size < WORKER_FROM_BYTES) {
    const { prepared } = await import('./io/import.ts');
    const { readItems } = await import('./io/input.ts');
    const { RECORD_KINDS } = await import('./records/index.ts');
    return prepared(readItems(input.stream, RECORD_KINDS));
  }
  const { preparedInWorker } = await import('./io/worker.ts');
  return preparedInWorker(input.stream);
}

async function openInput(file: string): Promise<{ stream: Readable; size?: number }> {
  try {
    const handle = await open(file);
    const { size } = await handle.stat();
    // Read in large blocks: an import reads a block only between its store's statements (src/io/worker.ts).
    return { stream: handle.createReadStream({ highWaterMark: 4 << 20 }), size };
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
  }
}

/**
 * Writes a file through `fill` into a temporary file beside it, renamed over `file` once complete:
 * a failed export never leaves half a file behind, nor destroys an earlier one.
 */
async function writeFileWhole<T>(file: string, fill: (out: Writable) => Promise<T>): Promise<T> {
  const temp = `${file}.${process.pid}.tmp`;
  const out = createWriteStream(temp);
  try {
    await once(out, 'open');
    const result = await fill(out);
    out.end();
    await finished(out);
    await rename(temp, file);
    return result;
  } catch (err) {
    out.destroy();
    await rm(temp, { force: true });
    if ((err as NodeJS.ErrnoException).syscall)
      throw new UsageError(`cannot write ${file}: ${(err as Error).message}`);
    throw err;
  }
}

/** `1,234 records in 0.8 s (1,543 rows/s): user 200, clip 1,034` */
function describe(s: Summary): string {
  const n = (v: number) => v.toLocaleString('en-US');
  const kinds = Object.entries(s.records)
    .map(([k, v]) => `${k} ${n(v)}`)
    .join(', ');
  return `${n(s.rows)} records in ${s.seconds.toFixed(1)} s (${n(s.rows_per_second)} rows/s)${kinds ? `: ${kinds}` : ''}`;
}

/**
 * Runs the command line inside this process with its output captured: for programs that drive
 * `helixd` (the tests, the import bench) without a process start per command.
 */
export async function runCaptured(
  args: readonly string[],
  stdin = '',
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = { stdout: '', stderr: '' };
  const sink = (name: keyof typeof out) =>
    new Writable({
      write(chunk, _encoding, done) {
        out[name] += String(chunk);
        done();
      },
    });
  const code = await main(['node', 'helixd', ...args], {
    stdin: Readable.from([stdin]),
    stdout: sink('stdout'),
    stderr: sink('stderr'),
  });
  return { code, ...out };
}

export async function main(argv: string[], io: CliIo = PROCESS_IO): Promise<number> {
  const program = buildCli(io);
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (err) {
    const e = err as { code?: string; exitCode?: number; message?: string };
    if (typeof e.code === 'string' && e.code.startsWith('commander.')) return e.exitCode ?? 1;
    if (err instanceof UsageError || err instanceof ConfigError) {
      io.stderr.write(`helixd: ${e.message}\n`);
      return 1;
    }
    io.stderr.write(`helixd: ${e.message ?? String(err)}\n`);
    return 1;
  }
}
