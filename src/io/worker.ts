// `helixd import` on several threads. The main thread reads the input and cuts it into pieces of
// CHUNK lines (fewer when the lines are long), at line ends; preparing threads (workers) parse the pieces' lines and prepare their
// records (each record's shape and rules, its row, the insert's JSON: most of an import's work,
// docs/perf/2026-11-22-import-speed.md), several pieces at once, while the main thread writes the
// pieces before, in order, as the seeder generates rows in a worker (src/seed/worker.ts). The store
// is the main thread's alone, so whatever a record's validity depends on beyond itself (keys,
// references) is still checked there, in order. A piece knows the number of its first line, so a
// refusal names the line of the file, whichever thread found it; a refusal is thrown in its turn,
// after the pieces before it are written, and the caller's transaction then leaves the store as it
// was. Memory is bounded whatever the lines: a line may hold at most INPUT_LIMIT bytes, and one
// longer is refused by its number once that many bytes of it are read, never held whole.
//
// An input whose first line is not an NDJSON record is a fixture document, read whole: it is
// prepared in the main thread (src/io/input.ts).
//
// Protocol: the main thread sends a worker pieces ('piece': its index, first line and text); the
// worker answers each, in the order received, with its records prepared ('prepared') or the first
// refusal in it ('refused').
import { availableParallelism } from 'node:os';
import type { Readable } from 'node:stream';
import { Readable as ReadableStream } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { prepareRuns, RECORD_KINDS, RecordError } from '../records/index.ts';
import { INPUT_LIMIT } from '../wire/text.ts';
import { CHUNK, type Prepared, prepared } from './import.ts';
import { envelopeItems, isEnvelopeLine, readItems } from './input.ts';
import { FormatError, isBlank, type Line, LineCutter, tooLong } from './ndjson.ts';

/** Pieces read and not yet written: how far preparing may run ahead of the store (memory: a few MB each). */
const AHEAD = 24;
/**
 * A piece ends at its CHUNK-th line, or at the first line end past this many bytes: long lines
 * (a line may hold up to INPUT_LIMIT bytes) make fewer lines to a piece, not larger pieces.
 */
const PIECE_BYTES = 16 << 20;
/**
 * At most this many bytes of pieces read and not yet written: AHEAD bounds pieces of short lines,
 * this one pieces of long lines, which weigh about ten times their bytes once prepared.
 */
const AHEAD_BYTES = 32 << 20;
/**
 * Pieces sent to a worker and not yet answered. More than one: this thread sends pieces only
 * between its statements, and a worker prepares a piece in less time than a long insert takes.
 */
const QUEUED = 4;
/**
 * Preparing threads. Two on two cores, beside the main thread: while the store writes a piece of
 * rows that are quick to prepare, the workers wait for room (AHEAD); while it writes rows that are
 * slow to prepare, the main thread would wait for one worker alone.
 */
const PREPARERS = Math.max(2, Math.min(availableParallelism(), 4));
/**
 * A preparing thread's young generation (V8's default is 16-32 MB): an import makes short-lived
 * objects by the million (lines, parsed records, rows), and a larger nursery collects them in
 * fewer, cheaper passes.
 */
const YOUNG_MB = 96;

type Chunk = string | Uint8Array;

interface Piece {
  type: 'piece';
  index: number;
  firstLine: number;
  parts: Chunk[];
  bytes: number;
  /** the buffer of the piece's one part when the piece made it: moved to the worker, not copied */
  own?: ArrayBuffer;
  /** the refusal of the line `firstLine`, which is not in the piece (it was too long to hold) */
  refused?: string;
}

/** An error as it crosses threads: enough to throw the same error on the other side. */
interface SentError {
  type: 'RecordError' | 'FormatError' | 'Error';
  message: string;
  record?: { status: 400 | 404 | 409; where: string; kind: string; field: string; rule: string };
}

/** A preparing thread, and the pieces sent to it that it has not answered. */
interface Preparer {
  worker: Worker;
  /** its modules are loaded: until then, pieces wait here (where this thread may prepare them) */
  ready: boolean;
  pending: number;
}

type FromWorker =
  | { type: 'prepared'; index: number; chunk: Prepared }
  | { type: 'refused'; index: number; error: SentError };

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

const KIND_NAMES: ReadonlySet<string> = new Set(RECORD_KINDS.map((k) => k.kind));

/** A piece's records, prepared: what a worker does with a piece. */
function preparePiece(piece: Piece): Prepared {
  if (piece.refused !== undefined) throw new FormatError(piece.refused);
  const cutter = new LineCutter(piece.firstLine);
  const lines: Line[] = [];
  // A line that is not UTF-8 is refused after the lines before it are checked: one of those may
  // be refused first.
  let refusal: unknown;
  try {
    for (const part of piece.parts) for (const l of cutter.push(part)) lines.push(l);
    for (const l of cutter.end()) lines.push(l);
  } catch (err) {
    refusal = err;
  }
  const items = envelopeItems(lines, KIND_NAMES);
  const runs = prepareRuns(items);
  if (refusal !== undefined) throw refusal;
  return { runs, records: items.length, bytes: piece.bytes };
}

const asBuffer = (c: Uint8Array): Buffer =>
  Buffer.isBuffer(c) ? c : Buffer.from(c.buffer, c.byteOffset, c.byteLength);

/**
 * The next line end in `chunk` from `from` on, or -1. A byte 0x0A is a line end in UTF-8 wherever
 * it is: no other character's encoding holds one.
 */
const lineEnd = (chunk: Chunk, from: number): number =>
  typeof chunk === 'string' ? chunk.indexOf('\n', from) : asBuffer(chunk).indexOf(10, from);

/** The UTF-8 bytes of `chunk` from `start` to `end`. */
const bytesOf = (chunk: Chunk, start: number, end: number): number =>
  typeof chunk === 'string' ? Buffer.byteLength(chunk.slice(start, end)) : end - start;

const slice = (c: Chunk, start: number, end?: number): Chunk =>
  typeof c === 'string' ? c.slice(start, end) : c.subarray(start, end);

/**
 * Cuts chunks of input into pieces of `lines` lines (the last one shorter) or of about
 * PIECE_BYTES, in order. A piece's bytes are copied into one buffer of its own, which is moved to
 * the worker, not copied again. A line of more than INPUT_LIMIT bytes is refused as soon as that
 * many bytes of it have come: the lines before it make a piece, the line itself a piece that holds
 * only its refusal, and nothing after it is cut (`over`).
 */
class PieceCutter {
  #parts: Chunk[] = [];
  /** the length of the parts, in their units (bytes, or UTF-16 units for strings) */
  #size = 0;
  #lines = 0;
  #firstLine = 1;
  #index = 0;
  /** the line not yet ended: its bytes so far, and its units at the end of the parts */
  #lineBytes = 0;
  #lineUnits = 0;
  #over = false;

  constructor(private readonly lines: number) {}

  /** Whether a line was too long: no piece comes after its refusal. */
  get over(): boolean {
    return this.#over;
  }

  /** The pieces `chunk` completed. */
  push(chunk: Chunk): Piece[] {
    const pieces: Piece[] = [];
    if (this.#over) return pieces;
    const length = chunk.length;
    let from = 0; // what the parts do not hold yet
    let lineStart = 0;
    for (;;) {
      const end = lineEnd(chunk, lineStart);
      this.#lineBytes += bytesOf(chunk, lineStart, end < 0 ? length : end);
      if (this.#lineBytes > INPUT_LIMIT) {
        this.#refuse(pieces, slice(chunk, from, lineStart));
        break;
      }
      if (end < 0) {
        if (from < length) this.#add(from === 0 ? chunk : slice(chunk, from));
        this.#lineUnits += length - lineStart;
        break;
      }
      this.#lineBytes = 0;
      this.#lineUnits = 0;
      this.#lines++;
      lineStart = end + 1;
      if (this.#lines === this.lines || this.#size + lineStart - from >= PIECE_BYTES) {
        this.#add(slice(chunk, from, lineStart));
        pieces.push(this.#take());
        from = lineStart;
      }
    }
    return pieces;
  }

  /** The last piece, if any text is left. */
  end(): Piece[] {
    return this.#parts.length && !this.#over ? [this.#take()] : [];
  }

  #add(part: Chunk): void {
    this.#parts.push(part);
    this.#size += part.length;
  }

  /**
   * The line not yet ended is too long: the piece of the lines before it (`before`: the ones in
   * the chunk at hand), then its refusal.
   */
  #refuse(pieces: Piece[], before: Chunk): void {
    // Its start, at the end of the parts when it began in an earlier chunk, is dropped.
    for (let drop = this.#lineUnits; drop > 0; ) {
      const last = this.#parts.pop() as Chunk;
      this.#size -= last.length;
      if (last.length > drop) this.#add(slice(last, 0, last.length - drop));
      drop -= last.length;
    }
    if (before.length) this.#add(before);
    if (this.#lines) pieces.push(this.#take());
    pieces.push({
      type: 'piece',
      index: this.#index++,
      firstLine: this.#firstLine,
      parts: [],
      bytes: 0,
      refused: tooLong(this.#firstLine),
    });
    this.#parts = [];
    this.#size = 0;
    this.#over = true;
  }

  #take(): Piece {
    const parts = this.#parts;
    let bytes = 0;
    for (const p of parts) bytes += p.length;
    const whole = parts.every((p) => typeof p !== 'string')
      ? concat(parts as Uint8Array[], bytes)
      : undefined;
    const piece: Piece = {
      type: 'piece',
      index: this.#index++,
      firstLine: this.#firstLine,
      parts: whole ? [whole] : parts,
      bytes,
      ...(whole ? { own: whole.buffer as ArrayBuffer } : {}),
    };
    this.#firstLine += this.#lines;
    this.#parts = [];
    this.#size = 0;
    this.#lines = 0;
    return piece;
  }
}

/** The parts in one buffer with an ArrayBuffer of its own (a slice of a pool could not be moved). */
function concat(parts: readonly Uint8Array[], bytes: number): Uint8Array {
  const out = Buffer.allocUnsafeSlow(bytes);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * The first non-blank line of the input and the chunks read to find it (undefined: the input
 * holds only blank lines). Read by hand, since leaving a for-await loop early would close `input`.
 */
async function firstLine(
  reader: AsyncIterator<Chunk>,
): Promise<{ line: Line | undefined; head: Chunk[]; done: boolean }> {
  const cutter = new LineCutter();
  const head: Chunk[] = [];
  for (;;) {
    const r = await reader.next();
    const lines = r.done ? cutter.end() : cutter.push(r.value);
    if (!r.done) head.push(r.value);
    const line = lines.find((l) => !isBlank(l));
    if (line || r.done) return { line, head, done: r.done === true };
  }
}

/** The prepared chunks of `input` (NDJSON or a fixture document), made in worker threads. */
export async function* preparedInWorker(input: Readable): AsyncGenerator<Prepared> {
  const reader = (input as AsyncIterable<Chunk>)[Symbol.asyncIterator]();
  const { line, head, done } = await firstLine(reader);
  if (!line) return;
  if (!isEnvelopeLine(line)) {
    // A fixture document: one JSON value, parsed whole, so nothing to share out.
    const rest = async function* (): AsyncGenerator<Chunk> {
      yield* head;
      if (!done) for (let r = await reader.next(); !r.done; r = await reader.next()) yield r.value;
    };
    yield* prepared(readItems(ReadableStream.from(rest()), RECORD_KINDS));
    return;
  }

  const workers: Preparer[] = [];
  /** pieces cut and not yet sent to a worker, in order */
  const queue: Piece[] = [];
  const results = new Map<number, FromWorker>();
  let failure: { error: unknown } | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  const fail = (error: unknown) => {
    failure ??= { error };
    notify();
  };
  /** Queued pieces to the ready workers with room, the one with the fewest pending first. */
  const dispatch = () => {
    for (;;) {
      const piece = queue[0];
      let best: Preparer | undefined;
      for (const p of workers)
        if (p.ready && p.pending < QUEUED && (!best || p.pending < best.pending)) best = p;
      if (!piece || !best) return;
      queue.shift();
      best.pending++;
      best.worker.postMessage(piece, piece.own ? [piece.own] : []);
    }
  };
  const start = () => {
    const worker = new Worker(new URL('./worker-thread.js', import.meta.url), {
      workerData: { helixdImport: true },
      // No execArgv: the worker's entry registers tsx itself, whatever flags the main thread had.
      execArgv: [],
      resourceLimits: { maxYoungGenerationSizeMb: YOUNG_MB },
    });
    const p: Preparer = { worker, ready: false, pending: 0 };
    workers.push(p);
    worker.on('message', (m: FromWorker | { type: 'ready' }) => {
      if (m.type === 'ready') p.ready = true;
      else {
        p.pending--;
        results.set(m.index, m);
        notify();
      }
      dispatch();
    });
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`an import worker exited with code ${code}`)));
  };

  // The reading side: pieces are cut while fewer than AHEAD, and fewer than AHEAD_BYTES of them,
  // are unwritten.
  let cut = 0;
  let written = 0;
  let ended = false;
  let stopped = false;
  let room: (() => void) | undefined;
  /** the bytes of each piece cut and not yet written, and their sum */
  const sizes = new Map<number, number>();
  let ahead = 0;
  const pump = async () => {
    const cutter = new PieceCutter(CHUNK);
    const out = async (pieces: Piece[]) => {
      for (const p of pieces) {
        while ((cut - written >= AHEAD || ahead >= AHEAD_BYTES) && !stopped)
          await new Promise<void>((r) => (room = r));
        if (stopped) return;
        // The workers start with the second piece: a smaller input is prepared here.
        if (cut === 1) for (let i = 0; i < PREPARERS; i++) start();
        queue.push(p);
        sizes.set(p.index, p.bytes);
        ahead += p.bytes;
        cut++;
        dispatch();
        notify();
      }
    };
    // Once a line is refused for its length, nothing after it is read.
    for (const chunk of head) await out(cutter.push(chunk));
    if (!done && !cutter.over)
      for (let r = await reader.next(); !r.done && !stopped; r = await reader.next()) {
        await out(cutter.push(r.value));
        if (cutter.over) break;
      }
    await out(cutter.end());
    ended = true;
    notify();
  };
  pump().catch(fail);

  try {
    for (let k = 0; ; k++) {
      // One turn of the event loop per piece: the store's statements run synchronously, and only
      // between turns do reads complete and pieces go out, which keeps the workers fed.
      await nextTurn();
      while (!results.has(k) && !failure && !(ended && k >= cut)) {
        // This thread would wait for a piece no worker has taken (the workers are starting, or
        // hold as many pieces as they may): it prepares it itself.
        if (queue[0]?.index === k) {
          results.set(k, prepareMessage(queue.shift() as Piece));
        } else await new Promise<void>((r) => (wake = r));
      }
      const m = results.get(k);
      if (!m) {
        if (failure) throw failure.error;
        return;
      }
      results.delete(k);
      written++;
      ahead -= sizes.get(k) ?? 0;
      sizes.delete(k);
      room?.();
      room = undefined;
      if (m.type === 'refused') throw receive(m.error);
      yield m.chunk;
    }
  } finally {
    stopped = true;
    room?.();
    for (const p of workers) p.worker.removeAllListeners('exit');
    await Promise.all(workers.map((p) => p.worker.terminate()));
  }
}

/** A piece prepared, or its first refusal, as a worker answers it. */
function prepareMessage(piece: Piece): FromWorker {
  try {
    return { type: 'prepared', index: piece.index, chunk: preparePiece(piece) };
  } catch (err) {
    return { type: 'refused', index: piece.index, error: send(err) };
  }
}

function runInWorker(): void {
  const port = parentPort;
  if (!port) return;
  port.on('message', (piece: Piece) => port.postMessage(prepareMessage(piece)));
  port.postMessage({ type: 'ready' });
}

if (!isMainThread && (workerData as { helixdImport?: unknown } | undefined)?.helixdImport !== undefined)
  runInWorker();
