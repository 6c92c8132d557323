// `helixd seed`: the demo data set into the store (src/seed/).
import type { Command } from 'commander';
import { clockFor } from '../clock.ts';
import { type CliIo, withStore } from './common.ts';
import { configFrom, configOption } from './options.ts';

export function seedCommand(program: Command, io: CliIo): void {
  program
    .command('seed')
    .description('write the deterministic demo data set into the store')
    .addOption(configOption('db'))
    .addOption(configOption('seed', 'seed: the same seed and size give the same data'))
    .addOption(configOption('users', 'number of users; every other table scales with it'))
    .addOption(configOption('now', 'the day the data is generated relative to, default today (UTC)'))
    .option('--force', 'replace the data of a store that already holds some')
    .action(async (opts) => {
      const config = configFrom(opts, ['db', 'seed', 'users', 'now']);
      const { dayStart, sizesFor } = await import('../seed/generate.ts');
      const { seedStore } = await import('../seed/index.ts');
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
