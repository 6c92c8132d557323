// NDJSON, one JSON value per line, read and written as streams: a file of any size passes through
// in bounded memory, and every value read carries its line number so that an error can name it.
import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

/** Input that is not what the format requires; the message names the line. */
export class FormatError extends Error {}

export interface Line {
  /** 1-based */
  line: number;
  /** without its line end (\n or \r\n) */
  text: string;
}

/** The lines one chunk of input completed, and the chunk's size in bytes (for progress). */
export interface Lines {
  lines: Line[];
  bytes: number;
}

/**
 * Cuts text that comes in chunks (bytes, decoded as UTF-8, or strings) into lines, however the
 * chunks are cut, numbering them from `firstLine`.
 */
export class LineCutter {
  // Decoded here rather than with setEncoding, which object-mode streams ignore.
  readonly #decoder = new StringDecoder('utf8');
  #line: number;
  #rest = '';

  constructor(firstLine = 1) {
    this.#line = firstLine - 1;
  }

  #cut(text: string): Line {
    this.#line++;
    return { line: this.#line, text: text.endsWith('\r') ? text.slice(0, -1) : text };
  }

  /** The lines `chunk` completed. */
  push(chunk: string | Uint8Array): Line[] {
    const text = this.#rest + (typeof chunk === 'string' ? chunk : this.#decoder.write(chunk as Buffer));
    const lines: Line[] = [];
    let start = 0;
    for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
      lines.push(this.#cut(text.slice(start, end)));
      start = end + 1;
    }
    this.#rest = text.slice(start);
    return lines;
  }

  /** The last line, when the text does not end with a line end. */
  end(): Line[] {
    const rest = this.#rest + this.#decoder.end();
    this.#rest = '';
    return rest === '' ? [] : [this.#cut(rest)];
  }
}

/**
 * The lines of a text stream, in order, however the stream cuts its chunks. They come a chunk at a
 * time: a million lines handed over one by one would spend more on the handing than on parsing.
 */
export async function* readLines(input: Readable): AsyncGenerator<Lines> {
  const cutter = new LineCutter();
  for await (const chunk of input as AsyncIterable<string | Buffer>)
    yield { lines: cutter.push(chunk), bytes: chunk.length };
  const last = cutter.end();
  if (last.length) yield { lines: last, bytes: 0 };
}

const NON_BLANK = /\S/;
export const isBlank = (l: Line) => !NON_BLANK.test(l.text);

/** One line's JSON value; a FormatError naming the line if it is not JSON. */
export function parseLine(l: Line): unknown {
  try {
    return JSON.parse(l.text);
  } catch (err) {
    throw new FormatError(`line ${l.line}: not JSON (${(err as Error).message})`);
  }
}

/**
 * Writes text in blocks of about 64 KiB (one write per line would cost more than the line), and
 * waits when the destination asks it to (backpressure), so a large export never piles up in memory.
 */
export function blockWriter(out: Writable): { write(text: string): Promise<void>; end(): Promise<void> } {
  const BLOCK = 64 * 1024;
  let block = '';
  const flush = async () => {
    if (block === '') return;
    const text = block;
    block = '';
    if (!out.write(text)) await once(out, 'drain');
  };
  return {
    async write(text) {
      block += text;
      if (block.length >= BLOCK) await flush();
    },
    end: flush,
  };
}
