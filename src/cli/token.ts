// `helixd token`: a working access token from the store, minted as the OAuth endpoints mint them.
import type { Command } from 'commander';
import { isScope, splitScopes } from '../auth/scopes.ts';
import { clockFor, nowSeconds } from '../clock.ts';
import { parseDuration } from '../config.ts';
import type { ClientRow } from '../store/schema.ts';
import { parseNumericId } from '../wire/ids.ts';
import { type CliIo, UsageError, withStore } from './common.ts';
import { configFrom, configOption } from './options.ts';

export function tokenCommand(program: Command, io: CliIo): void {
  program
    .command('token')
    .description("print a working access token (and a user token's refresh token) from the store")
    .addOption(configOption('db'))
    .option('--user <login-or-id>', 'mint a user token for this user')
    .option('--app', 'mint an app token')
    .option('--scope <scopes>', 'space-separated scopes of a user token', '')
    .option('--client <id>', 'the client the token belongs to (default: the demo client)')
    .option('--expires <duration>', 'lifetime, e.g. 30m, 4h, 60d (default: the configured token lifetime)')
    .addOption(configOption('now', 'the instant the token is issued at, default the system clock'))
    .option('--json', 'print the token reply as JSON, with client_id (and user_id, login for a user token)')
    .action(async (opts) => {
      const config = configFrom(opts, ['db', 'now', 'userTokenTtl', 'appTokenTtl']);
      if (Boolean(opts.user) === Boolean(opts.app))
        throw new UsageError('give exactly one of --user <login-or-id> and --app');
      const scopes = splitScopes(opts.scope);
      const unknown = scopes.filter((s) => !isScope(s));
      if (unknown.length) throw new UsageError(`unknown scope: ${unknown.join(', ')}`);
      if (opts.app && scopes.length)
        throw new UsageError('app tokens carry no scopes; drop --scope or use --user');
      const { mintToken } = await import('../auth/tokens.ts');
      const { readSeedInfo } = await import('../seed/index.ts');
      const { demoClients, findClient } = await import('../store/clients.ts');
      const { findUserByLoginOrId } = await import('../store/users.ts');
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
}
