// Seeding on two threads: this worker generates the rows and encodes each chunk as JSON while the
// main thread writes the previous chunks into the store. Generating and encoding are the smaller
// part of seeding; SQLite's inserts and index builds are the rest
// (docs/perf/2026-11-22-first-run.md). The rows and their order are exactly those of `generate` run
// in one thread.
//
// Main thread: `generateChunks(options, threads, onChunk)`. The worker sends { kind: 'chunk', table,
// columns, json, rows } and waits for an ack once WINDOW chunks are unacknowledged, so at most that
// many chunks are held in memory; it ends with { kind: 'done', summary }.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { Database } from '../store/schema.ts';
import { generate, type Part, type SeedOptions, type SeedSummary } from './generate.ts';
import { type FromSideWriter, type SideFiles, writeSideFiles } from './side.ts';

/** A chunk of one table's rows: the column names and the rows as a JSON array of value arrays. */
export interface EncodedChunk {
  table: keyof Database;
  columns: string[];
  json: string;
  rows: number;
}

type FromWorker = ({ kind: 'chunk' } & EncodedChunk) | { kind: 'done'; summary: SeedSummary };

const WINDOW = 3;

/** Every value is an integer below 2^53, a string or null, so the JSON round trip is exact. */
export function encodeChunk(table: keyof Database, rows: readonly object[]): EncodedChunk {
  const columns = Object.keys(rows[0] as object);
  const tuples = rows.map((row) => columns.map((c) => (row as Record<string, unknown>)[c]));
  return { table, columns, json: JSON.stringify(tuples), rows: rows.length };
}

/**
 * Generates the rows of `options` as encoded chunks; `onChunk` writes each, in order, one at a
 * time. With 2 threads the generator runs in a worker (docs/perf/2026-11-22-second-session.md);
 * with 1, in this thread, which small stores use (src/seed/index.ts: below 10,000 users).
 */
export function generateChunks(
  options: SeedOptions,
  threads: 1 | 2,
  onChunk: (chunk: EncodedChunk) => Promise<void>,
  part: Part = 'all',
): Promise<SeedSummary> {
  if (threads === 2) return generateInWorker(options, part, onChunk);
  return generate(
    options,
    async (table, rows) => {
      if (rows.length > 0) await onChunk(encodeChunk(table, rows));
    },
    part,
  );
}

function generateInWorker(
  options: SeedOptions,
  part: Part,
  onChunk: (chunk: EncodedChunk) => Promise<void>,
): Promise<SeedSummary> {
  // No execArgv: the worker's entry registers tsx itself, whatever flags the main thread had.
  const worker = new Worker(new URL('./worker-thread.js', import.meta.url), {
    workerData: { helixdSeed: { options, part } },
    execArgv: [],
  });
  return new Promise<SeedSummary>((resolve, reject) => {
    let settled = false;
    let queue = Promise.resolve();
    const fail = (e: unknown) => {
      if (settled) return;
      settled = true;
      void worker.terminate();
      reject(e);
    };
    worker.on('message', (m: FromWorker) => {
      // Chunks are written strictly one after another, in the order they were generated.
      queue = queue.then(async () => {
        if (settled) return;
        if (m.kind === 'done') {
          settled = true;
          resolve(m.summary);
          await worker.terminate();
          return;
        }
        await onChunk(m);
        worker.postMessage('ack');
      });
      queue.catch(fail);
    });
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (code !== 0) fail(new Error(`the seeding worker exited with code ${code}`));
    });
  });
}

async function runInWorker(): Promise<void> {
  const port = parentPort;
  if (!port) return;
  let unacked = 0;
  let wake: (() => void) | undefined;
  port.on('message', () => {
    unacked--;
    wake?.();
    wake = undefined;
  });
  const { options, part } = (workerData as { helixdSeed: { options: SeedOptions; part: Part } }).helixdSeed;
  const summary = await generate(
    options,
    async (table, rows) => {
      if (rows.length === 0) return;
      while (unacked >= WINDOW) await new Promise<void>((r) => (wake = r));
      unacked++;
      port.postMessage({ kind: 'chunk', ...encodeChunk(table, rows) } satisfies FromWorker);
    },
    part,
  );
  port.postMessage({ kind: 'done', summary } satisfies FromWorker);
}

/** The side writer's thread (src/seed/side.ts): the side tables into their files, then their counts. */
async function runSideInWorker(job: { options: SeedOptions; side: SideFiles }): Promise<void> {
  const port = parentPort;
  if (!port) return;
  const counts = await writeSideFiles(job.options, job.side, (table) =>
    port.postMessage({ kind: 'table', table } satisfies FromSideWriter),
  );
  port.postMessage({ kind: 'done', counts } satisfies FromSideWriter);
}

const job = isMainThread
  ? undefined
  : (workerData as
      | { helixdSeed?: unknown; helixdSeedSide?: { options: SeedOptions; side: SideFiles } }
      | undefined);
if (job?.helixdSeed !== undefined) await runInWorker();
else if (job?.helixdSeedSide !== undefined) await runSideInWorker(job.helixdSeedSide);
