// The counts and the progress line of `helixd import` and `helixd export`. The progress line
// appears on a terminal only: one line on stderr, redrawn at most ten times a second (rows, rows per
// second, the kind being written, and the share of the file read when its size is known).
// Redirected output gets nothing, so logs and pipes stay clean; scripts read the `--json` summary.

import type { Writable } from 'node:stream';

export interface Progress {
  /** `rows` more rows done, `bytes` more bytes of input read; `kind`: what is being written now */
  tick(rows: number, bytes: number, kind?: string): void;
  stop(): void;
}

const NONE: Progress = { tick: () => {}, stop: () => {} };

export function progressLine(
  verb: string,
  totalBytes: number | undefined,
  stream: Writable & { isTTY?: boolean; columns?: number } = process.stderr,
): Progress {
  if (!stream.isTTY) return NONE;
  const started = Date.now();
  let rows = 0;
  let bytes = 0;
  let kind = '';
  let drawn = 0;
  const draw = () => {
    drawn = Date.now();
    const secs = Math.max((drawn - started) / 1000, 0.001);
    const share = totalBytes ? `  ${Math.min(100, Math.floor((bytes / totalBytes) * 100))}%` : '';
    const line = `${verb} ${rows.toLocaleString('en-US')} rows  ${Math.round(rows / secs).toLocaleString('en-US')} rows/s${share}  ${kind}`;
    stream.write(`\r${line.slice(0, (stream.columns || 80) - 1)}\x1b[K`);
  };
  return {
    tick(n, b, k) {
      rows += n;
      bytes += b;
      kind = k ?? kind;
      if (Date.now() - drawn >= 100) draw();
    },
    stop() {
      draw();
      stream.write('\n');
    },
  };
}

/** What an import or export did: the `--json` output. */
export interface Summary {
  /** records per kind, in the order the kinds were written */
  records: Record<string, number>;
  rows: number;
  seconds: number;
  rows_per_second: number;
}

/** Counts records per kind as they pass, and shows them on the progress line. */
export class Tally {
  readonly #progress: Progress;
  readonly #started = Date.now();
  readonly #records: Record<string, number> = {};
  #rows = 0;

  constructor(progress: Progress = NONE) {
    this.#progress = progress;
  }

  /** Counts `n` (default 1) more records of `kind`. */
  add(kind: string, n = 1): void {
    this.#records[kind] = (this.#records[kind] ?? 0) + n;
    this.#rows += n;
    this.#progress.tick(n, 0, kind);
  }

  /** Counts `bytes` more bytes of input read. */
  read(bytes: number): void {
    this.#progress.tick(0, bytes);
  }

  get rows(): number {
    return this.#rows;
  }

  /** Ends the progress line (call once, also after a failure). */
  stop(): void {
    this.#progress.stop();
  }

  summary(): Summary {
    const seconds = (Date.now() - this.#started) / 1000;
    return {
      records: { ...this.#records },
      rows: this.#rows,
      seconds: Math.round(seconds * 1000) / 1000,
      rows_per_second: seconds > 0 ? Math.round(this.#rows / seconds) : this.#rows,
    };
  }
}
