// What a client gives helixd as one piece of text: a body of the admin API (src/routes/admin/route.ts) and
// a line of `helixd import` or of a fixture file (src/io/ndjson.ts). Both are UTF-8, and both have
// the same size limit (docs/admin.md). Bytes that are not UTF-8 are refused, never decoded to
// U+FFFD: the record would otherwise be stored with other text than the one sent, without a word.

/** The most bytes an admin API body, or a line of an import, may hold: 32 MiB. */
export const INPUT_LIMIT = 32 * 1024 * 1024;

/** Bytes that are not UTF-8, and where the first such byte is. */
export class InvalidUtf8 extends Error {
  constructor(
    /** 0-based, from the start of the bytes decoded */
    readonly offset: number,
  ) {
    super(`not valid UTF-8 (byte offset ${offset})`);
  }
}

// A leading U+FEFF is kept, as text: whoever reads the text decides (JSON bodies skip it).
const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The text of UTF-8 bytes; an InvalidUtf8 when they are not UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return fatal.decode(bytes);
  } catch {
    throw new InvalidUtf8(invalidUtf8At(bytes));
  }
}

/**
 * The offset of the first byte of the first sequence that is not UTF-8 (as the decoder above reads
 * it: an overlong form such as C0 80, an encoded surrogate such as ED A0 80, a code point past
 * U+10FFFF, a sequence cut short), or -1. Only called once decoding failed.
 */
export function invalidUtf8At(b: Uint8Array): number {
  const n = b.length;
  let i = 0;
  while (i < n) {
    const c = b[i] as number;
    if (c < 0x80) {
      i++;
      continue;
    }
    // The bytes that follow a lead byte, and the range its first follower must be in.
    let more: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) more = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      more = 2;
      if (c === 0xe0) lo = 0xa0;
      else if (c === 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      more = 3;
      if (c === 0xf0) lo = 0x90;
      else if (c === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= more; k++) {
      const f = b[i + k];
      if (f === undefined || f < (k === 1 ? lo : 0x80) || f > (k === 1 ? hi : 0xbf)) return i;
    }
    i += more + 1;
  }
  return -1;
}
