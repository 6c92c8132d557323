// `helixd import`: the records of a file into the store, all of them or none (src/io/).
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { Command } from 'commander';
import { progressLine, type Summary, Tally } from '../io/progress.ts';
import { type CliIo, describe, UsageError, withStore } from './common.ts';
import { configFrom, configOption } from './options.ts';

export function importCommand(program: Command, io: CliIo): void {
  program
    .command('import')
    .description('write the records of a file into the store, all of them or none (ids kept as given)')
    .argument(
      '<file>',
      'NDJSON ({"kind": "clip", "data": {...}} per line) or a fixture document; - reads stdin',
    )
    .addOption(configOption('db'))
    .option('--json', 'print the summary as JSON: records per kind, rows, seconds, rows_per_second')
    .option(
      '--events',
      'record the EventSub events the records cause (a stream.online per stream...), for subscribers to receive; off by default',
    )
    .action(async (file: string, opts) => {
      const config = configFrom(opts, ['db']);
      const input = file === '-' ? { stream: io.stdin } : await openInput(file);
      const { importItems } = await import('../io/import.ts');
      const records = await importInput(input);
      await withStore(config, async (store) => {
        const tally = new Tally(progressLine('importing', input.size, io.stderr));
        let summary: Summary;
        try {
          summary = await importItems(store, records, { tally, events: opts.events === true });
        } catch (err) {
          // One transaction: whatever went wrong, the store is as it was.
          throw new UsageError(`${(err as Error).message} (nothing was imported)`, { cause: err });
        } finally {
          input.stream.destroy();
        }
        io.stdout.write(opts.json ? `${JSON.stringify(summary)}\n` : `imported ${describe(summary)}\n`);
      });
    });
}

/** From this size (or of unknown size: stdin) an input is read in a worker thread: starting one costs more than a small file. */
const WORKER_FROM_BYTES = 1_000_000;

async function importInput(input: { stream: Readable; size?: number }) {
  if (input.size !== undefined && input.size < WORKER_FROM_BYTES) {
    const { prepared } = await import('../io/import.ts');
    const { readItems } = await import('../io/input.ts');
    const { RECORD_KINDS } = await import('../records/index.ts');
    return prepared(readItems(input.stream, RECORD_KINDS));
  }
  const { preparedInWorker } = await import('../io/worker.ts');
  return preparedInWorker(input.stream);
}

/** An input file and its size (for the progress line), or a clear error. */
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
