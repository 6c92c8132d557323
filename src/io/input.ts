// What `helixd import` and `serve --fixtures` read, turned into the items of the one write path
// (src/records/write.ts). Two forms, told apart by their first non-blank line:
// - NDJSON, one `{"kind": "clip", "data": {...}}` per line, for any size (streamed);
// - a fixture document, one JSON object `{"users": [...], "clips": [...], ...}` keyed by the kinds'
//   plurals, for small worlds (read whole).
// Only the envelope is checked here; what a record may hold is the write path's business.
import type { Readable } from 'node:stream';
import type { RecordInput } from '../records/index.ts';
import { FormatError, isBlank, type Line, type Lines, parseLine, readLines } from './ndjson.ts';

/** The names of a record kind this module needs: its NDJSON `kind` and its fixture key. */
export interface KindName {
  kind: string;
  plural: string;
}

/** The records one chunk of input held, and the chunk's size in bytes (for progress). */
export interface Items {
  items: RecordInput[];
  bytes: number;
}

const list = (names: readonly string[]) => names.join(', ');

/**
 * The records of an input stream, NDJSON or a fixture document, a chunk of input at a time. A
 * fixture document's records come in the kinds' order (users before the clips that name them),
 * whatever the order of its keys.
 */
export async function* readItems(input: Readable, kinds: readonly KindName[]): AsyncGenerator<Items> {
  // The first chunk with a non-blank line tells the form; iterated by hand, since leaving a
  // for-await loop early would close the line reader.
  const chunks = readLines(input);
  let head: Lines | undefined;
  let first: Line | undefined;
  while (!first) {
    const r = await chunks.next();
    if (r.done) return;
    head = r.value;
    first = head.lines.find((l) => !isBlank(l));
  }
  const all = async function* (): AsyncGenerator<Lines> {
    if (head) yield head;
    for (let r = await chunks.next(); !r.done; r = await chunks.next()) yield r.value;
  };
  if (isEnvelopeLine(first)) {
    const names = new Set(kinds.map((k) => k.kind));
    for await (const { lines, bytes } of all()) yield { items: envelopeItems(lines, names), bytes };
    return;
  }
  // Lines of blank chunks before the document count, so that a parse error names the file's line.
  const texts = ['\n'.repeat(((head as Lines).lines[0] as Line).line - 1)];
  let bytes = 0;
  for await (const chunk of all()) {
    for (const l of chunk.lines) texts.push(l.text);
    bytes += chunk.bytes;
  }
  yield { items: fixtureItems(parseDocument(texts.join('\n').slice(1)), kinds), bytes };
}

/** Whether a line is a whole JSON object with a `kind`: the first line of an NDJSON input. */
export function isEnvelopeLine(l: Line): boolean {
  try {
    const v = JSON.parse(l.text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) && 'kind' in v;
  } catch {
    return false;
  }
}

/** The records of NDJSON lines (blank lines hold none); a FormatError naming the first line that is not one. */
export function envelopeItems(lines: readonly Line[], kinds: ReadonlySet<string>): RecordInput[] {
  const items: RecordInput[] = [];
  for (const l of lines) if (!isBlank(l)) items.push(envelopeItem(l, kinds));
  return items;
}

function envelopeItem(l: Line, kinds: ReadonlySet<string>): RecordInput {
  const v = parseLine(l);
  const where = `line ${l.line}`;
  const shape = 'a line is {"kind": "<kind>", "data": {...}}';
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new FormatError(`${where}: not an object (${shape})`);
  for (const extra in v)
    if (extra !== 'kind' && extra !== 'data')
      throw new FormatError(`${where}: unknown field "${extra}" (${shape})`);
  const { kind, data } = v as { kind?: unknown; data?: unknown };
  if (typeof kind !== 'string') throw new FormatError(`${where}: kind: must be a string (${shape})`);
  if (!kinds.has(kind))
    throw new FormatError(`${where}: kind: "${kind}" is not a record kind (one of ${list([...kinds])})`);
  if (data === undefined) throw new FormatError(`${where}: data: missing (${shape})`);
  return { kind, data, where, line: l.line, storableText: storableLine(l.text) };
}

/**
 * Whether no string or key parsed from this line can hold text no store can (src/store/text.ts):
 * JSON writes a NUL or a lone surrogate only as a `\u` escape, or raw, and a raw NUL is not JSON.
 * One look at the line instead of one at each of its strings (the write path looks when this is false).
 */
const storableLine = (text: string): boolean =>
  !text.includes('\\u') && (text as unknown as { isWellFormed(): boolean }).isWellFormed();

function parseDocument(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const message = (err as Error).message;
    const at = /position (\d+)/.exec(message);
    if (!at || /\(line \d+/.test(message)) throw new FormatError(`not JSON (${message})`);
    const before = text.slice(0, Number(at[1]));
    const line = before.split('\n').length;
    const column = before.length - before.lastIndexOf('\n');
    throw new FormatError(`line ${line} column ${column}: not JSON (${message})`);
  }
}

/**
 * The records of a fixture document, in the kinds' order. Every key must be a kind's plural: a
 * misspelt key would otherwise leave a part of the world out without a word.
 */
export function fixtureItems(doc: unknown, kinds: readonly KindName[]): RecordInput[] {
  const keys = list(kinds.map((k) => k.plural));
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new FormatError(`a fixture is one JSON object whose keys are record kinds (${keys})`);
  for (const key of Object.keys(doc))
    if (!kinds.some((k) => k.plural === key))
      throw new FormatError(`fixture: unknown key "${key}" (the keys are ${keys})`);
  const items: RecordInput[] = [];
  for (const { kind, plural } of kinds) {
    const records = (doc as Record<string, unknown>)[plural];
    if (records === undefined) continue;
    if (!Array.isArray(records)) throw new FormatError(`fixture: "${plural}" must be an array of records`);
    records.forEach((data, i) => {
      items.push({ kind, data, where: `${plural}[${i}]` });
    });
  }
  return items;
}
