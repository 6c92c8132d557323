// NDJSON, one JSON value per line, read and written as streams: a file of any size passes through
// in bounded memory, and every value read carries its line number so that an error can name it.
import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { decodeUtf8, INPUT_LIMIT, type InvalidUtf8 } from '../wire/text.ts';

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

/** The refusal of a line of more than INPUT_LIMIT bytes before its `\n`. */
export const tooLong = (line: number) =>
  `line ${line}: longer than ${INPUT_LIMIT} bytes (32 MiB), the most a line may hold`;

const asBuffer = (c: Uint8Array): Buffer =>
  Buffer.isBuffer(c) ? c : Buffer.from(c.buffer, c.byteOffset, c.byteLength);

/**
 * Cuts text that comes in chunks (bytes, which must be UTF-8, or strings) into lines, however the
 * chunks are cut, numbering them from `firstLine`. A line may hold at most INPUT_LIMIT bytes
 * before its `\n`: a longer one is refused once that many bytes of it have come, never held
 * whole. A refusal (a line too long, bytes that are not UTF-8) comes after the lines before it:
 * `push` returns those, and the next `push` or `end` throws it, so that a reader deals with the
 * lines in the order of the input, and the refusal of an earlier line wins.
 */
export class LineCutter {
  #line: number;
  /** string input: the text after the last line end */
  #rest = '';
  /** byte input: the bytes after the last line end, and their total */
  #parts: Buffer[] = [];
  #partBytes = 0;
  #refusal: FormatError | undefined;

  constructor(firstLine = 1) {
    this.#line = firstLine - 1;
  }

  #cut(text: string): Line {
    this.#line++;
    return { line: this.#line, text: text.endsWith('\r') ? text.slice(0, -1) : text };
  }

  /** The lines `chunk` completed. */
  push(chunk: string | Uint8Array): Line[] {
    if (this.#refusal) throw this.#refusal;
    if (typeof chunk !== 'string') return this.#pushBytes(asBuffer(chunk));
    // A stream gives strings or bytes; bytes kept from before a string are its text's start.
    const text = (this.#partBytes ? this.#takeParts() : this.#rest) + chunk;
    const lines: Line[] = [];
    // A line's UTF-8 is at most 3 bytes per UTF-16 unit: only a long line is measured.
    const over = (t: string) => t.length * 3 > INPUT_LIMIT && Buffer.byteLength(t) > INPUT_LIMIT;
    let start = 0;
    for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
      const line = text.slice(start, end);
      if (over(line)) return this.#refuse(lines, tooLong(this.#line + 1));
      lines.push(this.#cut(line));
      start = end + 1;
    }
    this.#rest = text.slice(start);
    if (over(this.#rest)) return this.#refuse(lines, tooLong(this.#line + 1));
    return lines;
  }

  /** The last line, when the text does not end with a line end. */
  end(): Line[] {
    if (this.#refusal) throw this.#refusal;
    const rest = this.#partBytes ? this.#takeParts() : this.#rest;
    this.#rest = '';
    return rest === '' ? [] : [this.#cut(rest)];
  }

  #refuse(lines: Line[], message: string): Line[] {
    this.#refusal = new FormatError(message);
    this.#rest = '';
    this.#parts = [];
    this.#partBytes = 0;
    return lines;
  }

  #keep(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.#parts.push(bytes);
    this.#partBytes += bytes.length;
  }

  /** The text of the bytes kept (the start of a line: any line end in them was cut before). */
  #takeParts(): string {
    const bytes = Buffer.concat(this.#parts, this.#partBytes);
    this.#parts = [];
    this.#partBytes = 0;
    try {
      return decodeUtf8(bytes);
    } catch (err) {
      throw new FormatError(notUtf8(this.#line + 1, (err as InvalidUtf8).offset));
    }
  }

  #pushBytes(chunk: Buffer): Line[] {
    const last = chunk.lastIndexOf(10);
    const lines: Line[] = [];
    if (last < 0) {
      this.#keep(chunk);
      if (this.#partBytes > INPUT_LIMIT) return this.#refuse(lines, tooLong(this.#line + 1));
      return lines;
    }
    // The bytes of the lines this chunk completes, each with its line end.
    const head = chunk.subarray(0, last + 1);
    let whole = head;
    if (this.#partBytes) {
      whole = Buffer.concat([...this.#parts, head], this.#partBytes + head.length);
      this.#parts = [];
      this.#partBytes = 0;
    }
    // Only bytes of more than a line's worth can hold a line that is too long.
    let upTo = whole.length;
    let refusal: string | undefined;
    if (whole.length > INPUT_LIMIT)
      for (let start = 0, n = 1, end = whole.indexOf(10); end >= 0; n++) {
        if (end - start > INPUT_LIMIT) {
          upTo = start;
          refusal = tooLong(this.#line + n);
          break;
        }
        start = end + 1;
        end = whole.indexOf(10, start);
      }
    let text: string;
    const good = whole.subarray(0, upTo);
    try {
      text = decodeUtf8(good);
    } catch (err) {
      // The bytes are not UTF-8 from `at` on: the lines before the one that holds it are.
      const at = (err as InvalidUtf8).offset;
      const start = good.lastIndexOf(10, at) + 1;
      let n = 1;
      for (let i = good.indexOf(10); i >= 0 && i < start; i = good.indexOf(10, i + 1)) n++;
      refusal = notUtf8(this.#line + n, at - start);
      text = decodeUtf8(good.subarray(0, start));
    }
    let start = 0;
    for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
      lines.push(this.#cut(text.slice(start, end)));
      start = end + 1;
    }
    if (refusal !== undefined) return this.#refuse(lines, refusal);
    this.#keep(chunk.subarray(last + 1));
    if (this.#partBytes > INPUT_LIMIT) return this.#refuse(lines, tooLong(this.#line + 1));
    return lines;
  }
}

const notUtf8 = (line: number, offset: number) =>
  `line ${line}: not valid UTF-8 (byte offset ${offset} in the line)`;

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
