// `helixd serve`, the default command: every option of the configuration (src/config.ts OPTIONS).
import cluster from 'node:cluster';
import type { Command } from 'commander';
import type { CliIo } from './common.ts';
import { allConfigOptions, configFrom } from './options.ts';

export function serveCommand(program: Command, io: CliIo): void {
  const serve = program
    .command('serve', { isDefault: true })
    .description('serve the API (development: seeds demo data on the first start with an empty store)');
  for (const option of allConfigOptions()) serve.addOption(option);
  serve.action(async (opts) => {
    if (cluster.isWorker) return (await import('../cluster/worker.ts')).serveWorker();
    const config = configFrom(opts);
    // The banner to stderr: stdout carries the JSON log lines alone.
    const print = (l: string) => io.stderr.write(`${l}\n`);
    if (config.workers > 1) return (await import('../cluster/primary.ts')).servePrimary(config, print);
    const { startServer } = await import('../server.ts');
    const { stopMessage, untilStopSignal } = await import('../cluster/shutdown.ts');
    const running = await startServer(config, print);
    await untilStopSignal(config, running.stop, (signal, drain) =>
      running.app.log.info({ signal }, stopMessage(drain ? config.drain : 0)),
    );
  });
}
