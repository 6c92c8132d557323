// `helixd export`: every record of the chosen kinds, read through the one read path
// (src/records/), written in the kinds' order and then in key order, so that the output imports
// back into an empty store as it is and the same store always exports the same bytes.
import type { Writable } from 'node:stream';
import { readRecords } from '../records/index.ts';
import type { Store } from '../store/db.ts';
import type { ExportFormat } from './formats.ts';
import type { KindName } from './input.ts';
import { blockWriter } from './ndjson.ts';
import { type Summary, Tally } from './progress.ts';

export interface ExportRun {
  /** the kinds to write, in the order to write them */
  kinds: readonly KindName[];
  format: ExportFormat;
  tally?: Tally;
}

export async function exportRecords(store: Store, out: Writable, run: ExportRun): Promise<Summary> {
  const tally = run.tally ?? new Tally();
  const writer = blockWriter(out);
  try {
    // A fixture document holds one record per line too, so that a diff of two fixtures reads well;
    // a kind without records is left out.
    let keys = 0;
    for (const { kind, plural } of run.kinds) {
      let n = 0;
      for await (const data of readRecords(store, kind)) {
        if (run.format === 'ndjson') await writer.write(`${JSON.stringify({ kind, data })}\n`);
        else {
          let head = ',\n';
          if (n === 0) head = `${keys++ === 0 ? '{\n' : '\n  ],\n'}  ${JSON.stringify(plural)}: [\n`;
          await writer.write(`${head}    ${JSON.stringify(data)}`);
        }
        n++;
        tally.add(kind);
      }
    }
    if (run.format === 'fixture') await writer.write(keys ? '\n  ]\n}\n' : '{}\n');
    await writer.end();
  } finally {
    tally.stop();
  }
  return tally.summary();
}
