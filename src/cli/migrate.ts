// `helixd migrate`: the store's pending migrations (src/store/migrate.ts), as `serve` applies them.
import type { Command } from 'commander';
import type { CliIo } from './common.ts';
import { configFrom, configOption } from './options.ts';

export function migrateCommand(program: Command, io: CliIo): void {
  program
    .command('migrate')
    .description('apply pending database migrations (serve does this too)')
    .addOption(configOption('db'))
    .action(async (opts) => {
      const config = configFrom(opts, ['db']);
      const { openStore } = await import('../store/db.ts');
      const { migrateOrThrow } = await import('../store/migrate.ts');
      const store = openStore({ url: config.db });
      try {
        const applied = await migrateOrThrow(store);
        io.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'already up to date\n');
      } finally {
        await store.close();
      }
    });
}
