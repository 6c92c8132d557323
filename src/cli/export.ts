// `helixd export`: the records of the store into a file or stdout (src/io/).
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { type Command, Option } from 'commander';
import { EXPORT_FORMATS, type ExportFormat } from '../io/formats.ts';
import { progressLine, Tally } from '../io/progress.ts';
import { RECORD_KIND_NAMES } from '../records/names.ts';
import { type CliIo, describe, UsageError, withStore } from './common.ts';
import { configFrom, configOption } from './options.ts';

export function exportCommand(program: Command, io: CliIo): void {
  program
    .command('export')
    .description('write the records of the store, kind by kind in dependency order, then by key')
    .addOption(configOption('db'))
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
      const config = configFrom(opts, ['db']);
      const { RECORD_KINDS, recordKind } = await import('../records/index.ts');
      const { exportRecords } = await import('../io/export.ts');
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
