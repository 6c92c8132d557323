// `helixd import` on two threads: a worker reads the input (NDJSON parsing, each record's shape and
// rules, its row and the insert's JSON: more than half of an import's work) while the main thread
// checks the chunk before against the store and writes it, as the seeder generates rows in a
// worker (src/seed/worker.ts). The store is the main thread's alone, so whatever a record's
// validity depends on beyond itself (keys, references) is still checked there, in order.
//
// Protocol: the worker asks for input ('more', AHEAD times ahead), the main thread answers each
// with the input's next chunk of bytes ('data') or 'end', in order; the worker sends each prepared chunk ('chunk') and waits for an
// ack once WINDOW are unacknowledged, and ends with 'done' or with the first refusal ('error'),
// sent in its turn after the chunks before it.
import type { Readable } from 'node:stream';
import { Readable as ReadableStream } from 'node:stream';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { RECORD_KINDS, RecordError } from '../records/index.ts';
import { type Prepared, prepared } from './import.ts';
import { readItems } from './input.ts';
import { FormatError } from './ndjson.ts';

const WINDOW = 3;
/** input chunks asked for ahead (64 KiB each from a file) */
const AHEAD = 32;

type ToWorker = { type: 'data'; chunk: Uint8Array | string } | { type: 'end' } | { type: 'ack' };

/** An error as it crosses threads: enough to throw the same error on the other side. */
interface SentError {
  type: 'RecordError' | 'FormatError' | 'Error';
  message: string;
  record?: { status: 400 | 404 | 409; where: string; kind: string; field: string; rule: string };
}

type FromWorker =
  | { type: 'more' }
  | { type: 'chunk'; chunk: Prepared }
  | { type: 'error'; error: SentError }
  | { type: 'done' };

function send(err: unknown): SentError {
  if (err instanceof RecordError)
    return {
      type: 'RecordError',
      message: err.message,
      record: {
        status: err.status as 400 | 404 | 409,
        where: err.where,
        kind: err.kind,
        field: err.field,
        rule: err.rule,
      },
    };
  return {
    type: err instanceof FormatError ? 'FormatError' : 'Error',
    message: (err as Error)?.message ?? String(err),
  };
}

function receive(e: SentError): Error {
  if (e.record)
    return new RecordError(e.record.status, e.record.where, e.record.kind, e.record.field, e.record.rule);
  return e.type === 'FormatError' ? new FormatError(e.message) : new Error(e.message);
}

/** The prepared chunks of `input` (NDJSON or a fixture document), made in a worker thread. */
export async function* preparedInWorker(input: Readable): AsyncGenerator<Prepared> {
  // No execArgv: the worker's entry registers tsx itself, whatever flags the main thread had.
  const worker = new Worker(new URL('./worker-thread.js', import.meta.url), {
    workerData: { helixdImport: true },
    execArgv: [],
  });
  const reader = (input as AsyncIterable<Uint8Array | string>)[Symbol.asyncIterator]();
  const inbox: (FromWorker | { type: 'failed'; error: unknown })[] = [];
  let wake: (() => void) | undefined;
  const deliver = (m: FromWorker | { type: 'failed'; error: unknown }) => {
    inbox.push(m);
    wake?.();
    wake = undefined;
  };
  worker.on('message', (m: FromWorker) => {
    if (m.type !== 'more') return deliver(m);
    reader.next().then(
      (r) =>
        worker.postMessage((r.done ? { type: 'end' } : { type: 'data', chunk: r.value }) satisfies ToWorker),
      (error) => deliver({ type: 'failed', error }),
    );
  });
  worker.on('error', (error) => deliver({ type: 'failed', error }));
  worker.on('exit', (code) =>
    deliver({ type: 'failed', error: new Error(`the import worker exited with code ${code}`) }),
  );
  try {
    for (;;) {
      while (inbox.length === 0) await new Promise<void>((r) => (wake = r));
      const m = inbox.shift() as FromWorker | { type: 'failed'; error: unknown };
      if (m.type === 'chunk') {
        worker.postMessage({ type: 'ack' } satisfies ToWorker);
        yield m.chunk;
      } else if (m.type === 'error') throw receive(m.error);
      else if (m.type === 'failed') throw m.error;
      else if (m.type === 'done') return;
    }
  } finally {
    worker.removeAllListeners('exit');
    await worker.terminate();
  }
}

async function runInWorker(): Promise<void> {
  const port = parentPort;
  if (!port) return;
  let unacked = 0;
  let acked: (() => void) | undefined;
  let received: ((m: ToWorker) => void) | undefined;
  port.on('message', (m: ToWorker) => {
    if (m.type === 'ack') {
      unacked--;
      acked?.();
      acked = undefined;
    } else received?.(m);
  });
  // Input is asked for AHEAD chunks ahead: the main thread answers between its statements, and
  // a synchronous SQLite insert can take a tenth of a second, which must not leave this thread idle.
  const inputs: ToWorker[] = [];
  let arrived: (() => void) | undefined;
  received = (m) => {
    inputs.push(m);
    arrived?.();
    arrived = undefined;
  };
  const fromMain = async function* (): AsyncGenerator<Uint8Array | string> {
    for (let i = 0; i < AHEAD; i++) port.postMessage({ type: 'more' } satisfies FromWorker);
    for (;;) {
      while (inputs.length === 0) await new Promise<void>((r) => (arrived = r));
      const m = inputs.shift() as ToWorker;
      if (m.type !== 'data') return;
      port.postMessage({ type: 'more' } satisfies FromWorker);
      yield m.chunk;
    }
  };
  try {
    for await (const chunk of prepared(readItems(ReadableStream.from(fromMain()), RECORD_KINDS))) {
      while (unacked >= WINDOW) await new Promise<void>((r) => (acked = r));
      unacked++;
      port.postMessage({ type: 'chunk', chunk } satisfies FromWorker);
    }
    port.postMessage({ type: 'done' } satisfies FromWorker);
  } catch (err) {
    port.postMessage({ type: 'error', error: send(err) } satisfies FromWorker);
  }
}

if (!isMainThread && (workerData as { helixdImport?: unknown } | undefined)?.helixdImport !== undefined)
  await runInWorker();
