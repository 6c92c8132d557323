// `helixd client create` and `helixd client list`: the client applications of the store.
import type { Command } from 'commander';
import { clockFor, nowSeconds } from '../clock.ts';
import { type CliIo, UsageError, withStore } from './common.ts';
import { configFrom, configOption } from './options.ts';

export function clientCommand(program: Command, io: CliIo): void {
  const client = program.command('client').description('manage client applications');
  client
    .command('create')
    .description('register a client; prints its id and secret (the secret is shown only now)')
    .addOption(configOption('db'))
    .requiredOption('--name <name>', 'the application name')
    .option('--redirect-uri <uri...>', 'redirect URI(s) allowed in the authorization flow')
    .addOption(configOption('now', 'the instant the client is registered at, default the system clock'))
    .option('--json', 'print as JSON')
    .action(async (opts) => {
      const config = configFrom(opts, ['db', 'now']);
      const uris: string[] = opts.redirectUri ?? [];
      // The client record's own rule (src/records/kinds.ts), as the admin API and import apply it.
      const { redirectUrisRefusal } = await import('../records/kinds.ts');
      const refused = redirectUrisRefusal(uris);
      if (refused) throw new UsageError(`--redirect-uri: client ${refused.message}`);
      const { randomId, sha256 } = await import('../auth/tokens.ts');
      const { insertClient } = await import('../store/clients.ts');
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
    .addOption(configOption('db'))
    .option('--json', 'print as JSON')
    .action(async (opts) => {
      const config = configFrom(opts, ['db']);
      const { allClients, redirectUrisOf } = await import('../store/clients.ts');
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
}
