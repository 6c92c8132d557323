// The helixd command line. Each command returns an exit code; errors go to stderr as one clear
// line and exit 1, never a stack trace for a user mistake.
import { Command, Option } from 'commander';
import { isScope, splitScopes } from './auth/scopes.ts';
import { mintToken, randomId, sha256 } from './auth/tokens.ts';
import { nowSeconds } from './clock.ts';
import {
  type Config,
  ConfigError,
  type ConfigInput,
  ENV_NAMES,
  loadConfig,
  parseDuration,
} from './config.ts';
import { dayStart, sizesFor } from './seed/generate.ts';
import { readSeedInfo, StoreNotEmptyError, seedStore } from './seed/index.ts';
import { clockFor, startServer } from './server.ts';
import { allClients, findClient, insertClient, redirectUrisOf } from './store/clients.ts';
import { openStore, type Store } from './store/db.ts';
import { parseNumericId } from './store/ids.ts';
import { migrateOrThrow } from './store/migrate.ts';
import { findUserByLoginOrId } from './store/users.ts';

class UsageError extends Error {}

const env = (k: keyof Config) => `(env ${ENV_NAMES[k]})`;

function dbOption() {
  return new Option('--db <url>', `SQLite file path or postgres:// URL ${env('db')}, also DATABASE_URL`);
}

function configFrom(opts: Record<string, unknown>): Config {
  const flags: ConfigInput = {};
  for (const k of Object.keys(ENV_NAMES) as (keyof Config)[]) {
    const v = opts[k];
    if (v !== undefined) flags[k] = v as string | number | boolean;
  }
  return loadConfig(flags, process.env);
}

async function withStore<T>(config: Config, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = openStore({ url: config.db });
  try {
    await migrateOrThrow(store);
    return await fn(store);
  } finally {
    await store.close();
  }
}

export function buildCli(): Command {
  const program = new Command('helixd')
    .description('A self-hostable server for a live-streaming platform read API (Twitch Helix wire format)')
    .showHelpAfterError()
    .exitOverride();

  program
    .command('serve', { isDefault: true })
    .description('serve the API (seeds demo data on the first start with an empty store)')
    .option('-p, --port <port>', `port to listen on, default 8080 ${env('port')}`)
    .option('--host <host>', `address to listen on, default 127.0.0.1 ${env('host')}`)
    .addOption(dbOption())
    .option('--secret <secret>', `signing secret for report URLs and cursors ${env('secret')}`)
    .option('--public-url <url>', `this server's base URL as callers see it ${env('publicUrl')}`)
    .option('--site-url <url>', `base URL of the platform's site, for links in answers ${env('siteUrl')}`)
    .option('--now <iso>', `start the server clock at this instant ${env('now')}`)
    .option('--legacy', `serve the decommissioned operations from the store ${env('legacy')}`)
    .option('--rate-limit <points>', `rate-limit points per minute, 0 = off, default 800 ${env('rateLimit')}`)
    .option('--redis-url <url>', `Redis for rate-limit buckets shared by instances ${env('redisUrl')}`)
    .option('--user-token-ttl <duration>', `lifetime of user tokens, default 4h ${env('userTokenTtl')}`)
    .option('--app-token-ttl <duration>', `lifetime of app tokens, default 60d ${env('appTokenTtl')}`)
    .option('--seed <n>', `demo data seed for the first start, default 1 ${env('seed')}`)
    .option('--users <n>', `demo data size for the first start, default 200 ${env('users')}`)
    .option('--skip-seed', `start with an empty store instead of demo data ${env('skipSeed')}`)
    .option(
      '--admin-token <token>',
      `bearer token of the admin API under /admin, at least 32 characters; unset: off ${env('adminToken')}`,
    )
    .option(
      '--log-level <level>',
      `fatal|error|warn|info|debug|trace|silent, default info ${env('logLevel')}`,
    )
    .action(async (opts) => {
      const running = await startServer(configFrom(opts));
      await new Promise<void>((resolve) => {
        const onSignal = () => {
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
          running.stop().then(resolve, resolve);
        };
        process.on('SIGINT', onSignal);
        process.on('SIGTERM', onSignal);
      });
    });

  program
    .command('seed')
    .description('write the deterministic demo data set into the store')
    .addOption(dbOption())
    .option('--seed <n>', 'seed: the same seed and size give the same data', '1')
    .option('--users <n>', 'number of users; every other table scales with it', '200')
    .option('--now <iso>', 'the day the data is generated relative to (default: today, UTC)')
    .option('--force', 'replace the data of a store that already holds some')
    .action(async (opts) => {
      const config = configFrom({ db: opts.db, seed: opts.seed, users: opts.users, now: opts.now });
      await withStore(config, async (store) => {
        const started = Date.now();
        const estimate = Object.values(sizesFor(config.users)).reduce((a, b) => a + b, 0);
        const bar = await progressBar(estimate);
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
        process.stdout.write(`seeded ${store.location} in ${secs} s: ${counts}\n`);
        process.stdout.write(
          `demo broadcaster ${summary.demoLogin} (id ${summary.demoUserId}); demo client ${summary.demoClientId}\n`,
        );
      });
    });

  program
    .command('migrate')
    .description('apply pending database migrations (serve does this too)')
    .addOption(dbOption())
    .action(async (opts) => {
      const config = configFrom({ db: opts.db });
      const store = openStore({ url: config.db });
      try {
        const applied = await migrateOrThrow(store);
        process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'already up to date\n');
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
    .option('--json', 'print the token reply as JSON, with client_id (and user_id, login for a user token)')
    .action(async (opts) => {
      const config = configFrom({ db: opts.db });
      if (Boolean(opts.user) === Boolean(opts.app))
        throw new UsageError('give exactly one of --user <login-or-id> and --app');
      const scopes = splitScopes(opts.scope);
      const unknown = scopes.filter((s) => !isScope(s));
      if (unknown.length) throw new UsageError(`unknown scope: ${unknown.join(', ')}`);
      if (opts.app && scopes.length)
        throw new UsageError('app tokens carry no scopes; drop --scope or use --user');
      await withStore(config, async (store) => {
        const clientId = opts.client ?? (await readSeedInfo(store))?.demoClientId;
        if (!clientId) throw new UsageError('no demo client in this store: give --client <id>');
        const client = await findClient(store.db, clientId);
        if (!client) throw new UsageError(`unknown client: ${clientId}`);
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
          process.stdout.write(
            `${JSON.stringify({ ...token, client_id: client.id, ...(login ? { user_id: String(userId), login } : {}) })}\n`,
          );
        else if (token.refresh_token)
          process.stdout.write(
            `access_token   ${token.access_token}\nrefresh_token  ${token.refresh_token}\n`,
          );
        else process.stdout.write(`${token.access_token}\n`);
      });
    });

  const client = program.command('client').description('manage client applications');
  client
    .command('create')
    .description('register a client; prints its id and secret (the secret is shown only now)')
    .addOption(dbOption())
    .requiredOption('--name <name>', 'the application name')
    .option('--redirect-uri <uri...>', 'redirect URI(s) allowed in the authorization flow')
    .option('--json', 'print as JSON')
    .action(async (opts) => {
      const config = configFrom({ db: opts.db });
      const uris: string[] = opts.redirectUri ?? [];
      for (const u of uris) {
        try {
          new URL(u);
        } catch {
          throw new UsageError(`not a URL: ${u}`);
        }
      }
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
          process.stdout.write(
            `${JSON.stringify({ client_id: id, client_secret: secret, name: opts.name, redirect_uris: uris })}\n`,
          );
        else process.stdout.write(`client_id      ${id}\nclient_secret  ${secret}\n`);
      });
    });
  client
    .command('list')
    .description('list registered clients')
    .addOption(dbOption())
    .option('--json', 'print as JSON')
    .action(async (opts) => {
      const config = configFrom({ db: opts.db });
      await withStore(config, async (store) => {
        const list = (await allClients(store.db)).map((r) => ({
          client_id: r.id,
          name: r.name,
          redirect_uris: redirectUrisOf(r),
        }));
        if (opts.json) process.stdout.write(`${JSON.stringify(list)}\n`);
        else
          for (const c of list)
            process.stdout.write(`${c.client_id}  ${c.name}  ${c.redirect_uris.join(' ')}\n`);
      });
    });

  return program;
}

/** A progress bar on a terminal; nothing otherwise. `estimate`: rows expected (analytics days come on top). */
async function progressBar(
  estimate: number,
): Promise<{ tick: (table: string, rows: number) => void; stop: () => void }> {
  if (!process.stderr.isTTY) return { tick: () => {}, stop: () => {} };
  const { default: progress } = await import('cli-progress');
  const bar = new progress.SingleBar(
    { format: 'seeding {bar} {percentage}% | {value} rows | {table}', stream: process.stderr },
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

export async function main(argv: string[]): Promise<number> {
  const program = buildCli();
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (err) {
    const e = err as { code?: string; exitCode?: number; message?: string };
    if (typeof e.code === 'string' && e.code.startsWith('commander.')) return e.exitCode ?? 1;
    if (err instanceof UsageError || err instanceof ConfigError || err instanceof StoreNotEmptyError) {
      process.stderr.write(`helixd: ${e.message}\n`);
      return 1;
    }
    process.stderr.write(`helixd: ${e.message ?? String(err)}\n`);
    return 1;
  }
}
