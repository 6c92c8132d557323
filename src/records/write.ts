// The one write path of records: the admin API and `helixd import` hand records here and nowhere
// else. A call validates every record (shape, rules, references, keys), writes them, and keeps the
// derived data true through the store's triggers (subscription totals: migration 004; the games'
// live counts: migration 008). A call is one transaction (or runs inside the caller's): a refusal
// anywhere leaves the store as it was.
import { sql, type Transaction } from 'kysely';
import { Compile } from 'typebox/compile';
import { HelixError } from '../http/errors.ts';
import { inserter } from '../store/bulk.ts';
import { detachClipsFromVideos } from '../store/clips.ts';
import type { Dialect, Store } from '../store/db.ts';
import { eventsCommitted, type NewEvent, recordEvents } from '../store/events.ts';
import { revokeSubscriptions } from '../store/eventsub-subscriptions.ts';
import { deleteMarkersOfVideos } from '../store/markers.ts';
import {
  type AnyRow,
  anyRowNames,
  deleteByKey,
  deleteUserGrants,
  existingKeys,
  isUniqueViolation,
  type KeyValue,
  keyText,
  rowByKey,
  rowsWhereIn,
} from '../store/records.ts';
import type { Database } from '../store/schema.ts';
import { findUnstorable, unstorableText } from '../store/text.ts';
import { deleteVideoRows, videoOwners } from '../store/videos.ts';
import { parseNumericId } from '../wire/ids.ts';
import {
  channelRows,
  channelsToFollow,
  fillFromChannels,
  HELD_COLUMNS,
  liveStreamRows,
  streamsToFollow,
} from './channels.ts';
import { EVENT_KINDS, eventsOfDelete, eventsOfWrite, USER_UPDATE_COLUMNS } from './events.ts';
import { FieldRule, ruleOfPattern } from './fields.ts';
import { RECORD_KINDS, type RecordKind, type Row, recordKind } from './kinds.ts';

export interface RecordInput {
  /**
   * the record kind's name (RecordKind.kind); whatever a caller was sent, unchecked: only a string
   * that names a kind is one (an array or an object is refused, never coerced to its text)
   */
  kind: unknown;
  data: unknown;
  /** how an error names the record: 'line 12', 'body[3]' */
  where: string;
  /** the record's line in an NDJSON input (its `where` is then `line <line>`) */
  line?: number;
  /**
   * set by a reader that checked the text `data` was parsed from (src/io/input.ts): no string or
   * key in it can hold what no store can (src/store/text.ts), so the write path need not look
   */
  storableText?: boolean;
}

export type WriteMode = 'create' | 'replace' | 'upsert';

export interface WriteOptions {
  /** create: the key must be new (409). replace: it must exist (404). upsert: either. */
  mode: WriteMode;
  /** write inside this transaction (the caller commits or rolls back) instead of one of its own */
  trx?: Transaction<Database>;
  /** return the records as written (as reading them back would give them); default: none */
  echo?: boolean;
  /**
   * an import into a store that held no data when `trx` began: references are checked against
   * the keys it wrote (see ImportedKeys) instead of looked up
   */
  imported?: ImportedKeys;
  /**
   * record the EventSub events the write causes (src/records/events.ts), in its transaction; default
   * true. `helixd import` and `--fixtures` pass false unless asked (docs/eventsub.md: a bulk load
   * floods no subscriber with old news, nor doubles its cost in outbox rows).
   */
  events?: boolean;
}

/** A refused record: `<where>: <kind> <field>: <rule>`, answered in the Helix error body. */
export class RecordError extends HelixError {
  constructor(
    status: 400 | 404 | 409,
    readonly where: string,
    readonly kind: string,
    readonly field: string,
    readonly rule: string,
  ) {
    super(status, `${where}: ${kind} ${field}: ${rule}`);
  }
}

interface ShapeError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message: string;
}

/** `['muted_segments', 0, 'duration']` -> `muted_segments[0].duration` */
const fieldName = (path: readonly (string | number)[]): string =>
  path.map((p, i) => (/^\d+$/.test(String(p)) ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
/** `/muted_segments/0/duration` -> `muted_segments[0].duration` */
const fieldOf = (pointer: string): string => fieldName(pointer.split('/').slice(1));

function ruleOf(e: ShapeError): { field: string; rule: string } {
  const field = fieldOf(e.instancePath);
  const p = e.params;
  switch (e.keyword) {
    case 'required': {
      const missing = String((p.requiredProperties as string[] | undefined)?.[0] ?? '');
      return { field: field ? `${field}.${missing}` : missing, rule: 'is required' };
    }
    case 'additionalProperties': {
      const extra = String((p.additionalProperties as string[] | undefined)?.[0] ?? '');
      return { field: field ? `${field}.${extra}` : extra, rule: 'is not a field of this record' };
    }
    // TypeBox reports a property that additionalProperties: false forbids at the property's path.
    case 'boolean':
      return { field, rule: 'is not a field of this record' };
    case 'type':
      return { field, rule: `must be of type ${p.type}` };
    case 'anyOf':
      return { field, rule: 'must be null or a value of the documented type' };
    case 'pattern':
      return { field, rule: ruleOfPattern(String(p.pattern)) ?? e.message };
    case 'enum':
      return {
        field,
        rule: `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
      };
    case 'minLength':
      return { field, rule: p.limit === 1 ? 'must not be empty' : `must be at least ${p.limit} characters` };
    case 'maxLength':
      return { field, rule: `must be at most ${p.limit} characters` };
    case 'maxItems':
      return { field, rule: `must hold at most ${p.limit} items` };
    case 'uniqueItems':
      return { field, rule: 'must not hold an item twice' };
    case 'minimum':
    case 'maximum':
      return { field, rule: `must be ${p.comparison} ${p.limit}` };
    case 'format':
      return {
        field,
        rule:
          p.format === 'date'
            ? 'must be a day written YYYY-MM-DD'
            : 'must be an RFC 3339 date-time such as 2026-06-01T00:00:00Z',
      };
    default:
      return { field, rule: e.message };
  }
}

/** A record checked and turned into its row, with its key (values of the kind's keyColumns). */
export interface PreparedRecord {
  input: RecordInput;
  kind: RecordKind;
  row: Row;
  key: KeyValue[];
}

/** What checking a record of a kind needs, made once per kind rather than once per record. */
interface KindCheck {
  kind: RecordKind;
  checker: ReturnType<typeof Compile>;
  /** the record's fields (the schema's properties) */
  fields: ReadonlySet<string>;
  derived: ReadonlySet<string>;
}

const kindChecks = new Map<string, KindCheck>(
  RECORD_KINDS.map((k) => [
    k.kind,
    {
      kind: k,
      checker: Compile(k.schema),
      fields: new Set(Object.keys(k.schema.properties)),
      derived: new Set(k.derived),
    },
  ]),
);

/** The refusal of `input`'s field (a plain function: closures made per record cost an import). */
const refusal = (
  input: RecordInput,
  kind: string,
  field: string,
  rule: string,
  status: 400 | 404 | 409 = 400,
) => new RecordError(status, input.where, kind, field, rule);

/** The first field of `data` that is not one of its kind's, refused; undefined when all are. */
function strayField(input: RecordInput, check: KindCheck, data: object): RecordError | undefined {
  for (const f in data) {
    if (check.fields.has(f) && !check.derived.has(f)) continue;
    if (check.derived.has(f))
      return refusal(input, check.kind.kind, f, 'is derived by the server: leave it out');
    return refusal(input, check.kind.kind, f, `is not a field of a ${check.kind.kind} record`);
  }
  return undefined;
}

/** Checks one record's shape and rules (not the store): its row, or a 400 naming the field. */
export function prepareRecord(input: RecordInput): PreparedRecord {
  const check = typeof input.kind === 'string' ? kindChecks.get(input.kind) : undefined;
  if (!check)
    throw refusal(
      input,
      'record',
      'kind',
      `must be one of ${RECORD_KINDS.map((k) => k.kind).join(', ')}, as a string: ${JSON.stringify(input.kind) ?? String(typeof input.kind)} is not`,
    );
  const { kind, checker } = check;
  const data = input.data;
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw refusal(input, kind.kind, 'data', 'must be a JSON object');
  const stray = strayField(input, check, data);
  if (stray) throw stray;
  if (!checker.Check(data)) {
    const first = checker.Errors(data)[0] as ShapeError | undefined;
    const { field, rule } = first ? ruleOf(first) : { field: 'data', rule: 'is malformed' };
    throw refusal(input, kind.kind, field || 'data', rule);
  }
  // After the shape check, which bounds the depth: any string (or key) no store can hold, unless
  // the reader vouches for the text the record was parsed from.
  if (!input.storableText) {
    const unstorable = findUnstorable(data);
    if (unstorable) throw refusal(input, kind.kind, fieldName(unstorable.path), unstorable.rule);
  }
  let row: Row;
  try {
    // No copy: toRow only reads the record (RecordKind.toRow), so the caller's object stays as given.
    row = kind.toRow(data as never);
  } catch (err) {
    if (err instanceof FieldRule) throw refusal(input, kind.kind, err.field, err.rule, err.status);
    throw err;
  }
  const key: KeyValue[] = [];
  for (const c of kind.keyColumns) key.push(row[c] as KeyValue);
  return { input, kind, row, key };
}

const keyField = (kind: RecordKind) => kind.key.join('+');

/**
 * Records of one kind, checked and turned into rows, ready for the store's checks and insert: plain
 * data, so that an import prepares them in a worker thread while this one writes (src/io/worker.ts).
 * Per record i: `wheres[i]` (see `whereOf`), `keyCols[c][i]` for each of the kind's key columns,
 * `unique[u][i]` for each of its unique columns, `refs[f][i]` for each of its references (null:
 * names none). Column by column, with numbers for lines: an import hands a worker's runs to the
 * main thread, where each object of the message costs time to rebuild and collect.
 */
export interface PreparedRun {
  kind: string;
  /** how errors name the records: each record's `where`, or the number of its NDJSON line */
  wheres: string[] | Float64Array;
  keyCols: KeyValue[][];
  unique: KeyValue[][];
  refs: (KeyValue | null)[][];
  columns: string[];
  /** the rows as a JSON array of value arrays, as src/store/bulk.ts `inserter` takes them */
  json: string;
}

/** How an error names record `i` of `run`. */
const whereOf = (run: PreparedRun, i: number): string => {
  const w = run.wheres[i];
  return typeof w === 'number' ? `line ${w}` : (w as string);
};

/** The key of record `i` of `run` (values of the kind's keyColumns). */
const keyOf = (run: PreparedRun, i: number): KeyValue[] => run.keyCols.map((c) => c[i] as KeyValue);

/** Items written per statement: runs of one kind are cut to this size. */
const RUN_SIZE = 5000;

function toRun(records: readonly PreparedRecord[]): PreparedRun {
  const first = records[0] as PreparedRecord;
  const kind = first.kind;
  const extra = Object.values(kind.insertOnly ?? {});
  const n = records.length;
  const byLine = records.every((r) => r.input.line !== undefined);
  const wheres = byLine ? new Float64Array(n) : new Array<string>(n);
  const values: unknown[][] = new Array(n);
  for (let i = 0; i < n; i++) {
    const r = records[i] as PreparedRecord;
    wheres[i] = (byLine ? r.input.line : r.input.where) as never;
    const v: unknown[] = Object.values(r.row);
    for (const x of extra) v.push(x);
    values[i] = v;
  }
  const column = (c: string) => records.map((r) => r.row[c] as KeyValue);
  return {
    kind: kind.kind,
    wheres,
    keyCols: kind.keyColumns.map(column),
    unique: kind.unique.map((u) => column(u.column)),
    refs: kind.refs.map((ref) => column(ref.column)),
    columns: [...Object.keys(first.row), ...Object.keys(kind.insertOnly ?? {})],
    json: JSON.stringify(values),
  };
}

/** Consecutive records of one kind as runs of at most RUN_SIZE. */
function runsOf(prepared: readonly PreparedRecord[]): PreparedRun[] {
  const runs: PreparedRun[] = [];
  let start = 0;
  for (let i = 1; i <= prepared.length; i++)
    if (i === prepared.length || prepared[i]?.kind !== prepared[start]?.kind || i - start >= RUN_SIZE) {
      runs.push(toRun(prepared.slice(start, i)));
      start = i;
    }
  return runs;
}

/** Checks every item's shape and rules (not the store): its runs, or the first item's refusal. */
export const prepareRuns = (items: readonly RecordInput[]): PreparedRun[] => runsOf(items.map(prepareRecord));

/**
 * The keys of the referenced kinds (users, games, videos...) that an import wrote into a store that
 * held no data when its transaction began. Then a reference names a record exactly when it names
 * one of these, and a set answers what a lookup in a table of millions of rows would: the import
 * checks its references in memory. Only the kinds that references name are kept (a few hundred
 * thousand keys for a million clips), never the clips' or the follows'.
 */
export class ImportedKeys {
  readonly #keys = new Map<string, Set<KeyValue>>(
    [...new Set(RECORD_KINDS.flatMap((k) => k.refs.map((r) => r.kind)))].map((kind) => [kind, new Set()]),
  );

  /** the keys written of a referenced kind (undefined: no reference names that kind) */
  of(kind: string): Set<KeyValue> | undefined {
    return this.#keys.get(kind);
  }
}

/**
 * Refuses a run's first record whose key or unique value is repeated in the run or taken in the
 * store; returns the keys (keyText) the store already held.
 */
async function checkKeys(
  trx: Transaction<Database>,
  run: PreparedRun,
  kind: RecordKind,
  mode: WriteMode,
  dialect: Dialect,
): Promise<Set<string>> {
  const refuse = (i: number, status: 404 | 409, field: string, rule: string) =>
    new RecordError(status, whereOf(run, i), kind.kind, field, rule);
  const keys = Array.from({ length: run.wheres.length }, (_, i) => keyOf(run, i));
  const keyValues = (i: number) => (keys[i] as KeyValue[]).map((v) => String(v)).join(', ');

  const seen = new Map<string, number>();
  keys.forEach((key, i) => {
    const k = keyText(key);
    const earlier = seen.get(k);
    if (earlier !== undefined)
      throw refuse(i, 409, keyField(kind), `repeats the key of ${whereOf(run, earlier)} (${keyValues(i)})`);
    seen.set(k, i);
  });

  const existing = await existingKeys(trx, dialect, kind.table, kind.keyColumns, keys);
  keys.forEach((key, i) => {
    const exists = existing.has(keyText(key));
    if (mode === 'create' && exists)
      throw refuse(i, 409, keyField(kind), `a ${kind.kind} with this key (${keyValues(i)}) already exists`);
    if (mode === 'replace' && !exists)
      throw refuse(i, 404, keyField(kind), `no ${kind.kind} has this key (${keyValues(i)})`);
  });

  for (const [u, unique] of kind.unique.entries()) {
    const values = run.unique[u] as KeyValue[];
    const holders = new Map<string, number>();
    values.forEach((value, i) => {
      const v = String(value);
      const other = holders.get(v);
      if (other !== undefined)
        throw refuse(i, 409, unique.field, `repeats the ${unique.field} of ${whereOf(run, other)} (${v})`);
      holders.set(v, i);
    });
    const taken = await rowsWhereIn(trx, dialect, kind.table, unique.column, values, kind.keyColumns);
    for (const row of taken) {
      const i = holders.get(String(row[unique.column])) as number;
      const holderKey = kind.keyColumns.map((c) => row[c]);
      if (keyText(holderKey) !== keyText(keys[i] as KeyValue[]))
        throw refuse(
          i,
          409,
          unique.field,
          `${row[unique.column]} is taken by ${kind.kind} ${holderKey.join(', ')}`,
        );
    }
  }
  return existing;
}

/** Refuses a run's first record that names a record the store does not hold. */
async function checkRefs(
  trx: Transaction<Database>,
  run: PreparedRun,
  kind: RecordKind,
  dialect: Dialect,
  imported: ImportedKeys | undefined,
): Promise<void> {
  for (const [f, ref] of kind.refs.entries()) {
    const target = recordKind(ref.kind) as RecordKind;
    const named = run.refs[f] as (KeyValue | null)[];
    let found = imported?.of(target.kind);
    if (!found) {
      const values = [...new Set(named.filter((v) => v !== null))];
      if (values.length === 0) continue;
      const col = target.keyColumns[0] as string;
      found = new Set(
        (await rowsWhereIn(trx, dialect, target.table, col, values, [])).map((row) => row[col]),
      );
    }
    // A plain loop: an import checks millions of references here, in the thread that writes.
    for (let i = 0; i < named.length; i++) {
      const v = named[i] as KeyValue | null;
      if (v !== null && !found.has(v))
        throw new RecordError(
          404,
          whereOf(run, i),
          kind.kind,
          ref.field,
          `names no ${target.kind} (${v}): ${target.plural} must exist before the records that name them`,
        );
    }
  }
}

/**
 * Writes a run of one kind's records, after checking them against the store.
 *
 * A create needs no lookup of its keys and unique values beforehand: the store's primary keys and
 * unique constraints refuse a taken one as the rows go in (an import of a million records saves a
 * lookup per record). Only then, after rolling back to a savepoint taken before the insert, does
 * `checkKeys` find which record it was, to name it. Replace and upsert need to know which keys
 * exist first.
 */
async function writeRun(
  trx: Transaction<Database>,
  run: PreparedRun,
  opts: WriteOptions,
  insert: ReturnType<typeof inserter>,
  dialect: Dialect,
): Promise<NewEvent[]> {
  const kind = recordKind(run.kind) as RecordKind;
  const { mode, imported } = opts;
  const existing = mode === 'create' ? undefined : await checkKeys(trx, run, kind, mode, dialect);
  await checkRefs(trx, run, kind, dialect, imported);
  const events = opts.events !== false && EVENT_KINDS.has(kind.kind);
  // The rows as written, parsed once when something below reads them.
  let parsed: AnyRow[] | undefined;
  const rowsOf = () =>
    (parsed ??= (JSON.parse(run.json) as unknown[][]).map((values) =>
      Object.fromEntries(run.columns.map((c, i) => [c, values[i]])),
    ));
  // A stream holds its channel's title, game, language and tags (src/records/channels.ts): the
  // ones a record left out are the channel's, filled in before the insert.
  const channels =
    kind.kind === 'stream'
      ? await channelRows(
          trx,
          dialect,
          rowsOf().map((r) => Number(r.user_id)),
        )
      : undefined;
  if (channels) {
    const rows = rowsOf();
    if (rows.some((r) => HELD_COLUMNS.some((c) => r[c] === null))) {
      const gameless = fillFromChannels(rows, channels);
      if (gameless >= 0)
        throw new RecordError(
          400,
          whereOf(run, gameless),
          kind.kind,
          'game_id',
          "is required: the user's channel has no game to give the stream (give game_id, or set the channel's first)",
        );
      run.json = JSON.stringify(rows.map((r) => run.columns.map((c) => r[c])));
    }
  }
  // The values before the write of a user (a change of its names, description or email is an
  // event) or of a channel (a change of its title, language, game or labels is one).
  const before =
    events && existing && kind.kind === 'user'
      ? new Map(
          (
            await rowsWhereIn(trx, dialect, 'users', 'id', run.keyCols[0] as KeyValue[], [
              'id',
              ...USER_UPDATE_COLUMNS,
            ])
          ).map((r) => [Number(r.id), r]),
        )
      : events && kind.kind === 'channel'
        ? await channelRows(trx, dialect, run.keyCols[0] as number[])
        : undefined;

  const insertOnly = kind.insertOnly ?? {};
  const rows = { table: kind.table, columns: run.columns, json: run.json };
  if (mode === 'create') await sql`savepoint helixd_run`.execute(trx);
  try {
    await insert(rows, mode === 'create' ? undefined : { key: kind.order, keep: Object.keys(insertOnly) });
    if (mode === 'create') await sql`release savepoint helixd_run`.execute(trx);
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    if (mode === 'create') {
      await sql`rollback to savepoint helixd_run`.execute(trx);
      await checkKeys(trx, run, kind, mode, dialect);
    }
    // Another writer took a key or a unique value between the checks above and the insert.
    throw new RecordError(
      409,
      whereOf(run, 0),
      kind.kind,
      keyField(kind),
      'conflicts with a record written at the same time: try again',
    );
  }
  const keys = imported?.of(kind.kind);
  if (keys) for (const key of run.keyCols[0] as KeyValue[]) keys.add(key);
  const out: NewEvent[] = [];
  if (events) {
    const created = rowsOf().map((_, i) => !existing?.has(keyText(keyOf(run, i))));
    out.push(...(await eventsOfWrite(trx, dialect, kind.kind, rowsOf(), created, before)));
  }
  // The other side of a live stream and its channel, where it now differs: written through this
  // same path, so with its checks and its events.
  let follow: { kind: string; records: object[]; mode: WriteMode } | undefined;
  if (channels) follow = { kind: 'channel', records: channelsToFollow(rowsOf(), channels), mode: 'upsert' };
  if (kind.kind === 'channel') {
    const written = rowsOf();
    const streams = await liveStreamRows(
      trx,
      dialect,
      written.map((r) => Number(r.broadcaster_id)),
    );
    const { records, gameless } = streamsToFollow(written, streams);
    if (gameless >= 0)
      throw new RecordError(
        400,
        whereOf(run, gameless),
        kind.kind,
        'game_id',
        "must name a game while the broadcaster is live: the live stream holds the channel's game",
      );
    follow = { kind: 'stream', records, mode: 'replace' };
  }
  if (follow && follow.records.length > 0) {
    const where = `${whereOf(run, 0)} (the ${follow.kind} it holds)`;
    const prepared = follow.records.map((data) => prepareRecord({ kind: follow.kind, data, where }));
    for (const r of runsOf(prepared))
      out.push(...(await writeRun(trx, r, { ...opts, mode: follow.mode }, insert, dialect)));
  }
  return out;
}

/**
 * A write of streams moves rows of GET /streams and GET /games/top, which migration 013 logs in
 * `seq` order. Walks need that order to be the order the moves became visible (src/store/moves.ts):
 * on PostgreSQL, where transactions commit in any order, every transaction that writes streams
 * takes this lock first, before any row lock (so no two wait for each other), and holds it to its
 * end. SQLite has one writer at a time already.
 */
async function lockMoves(trx: Transaction<Database>, dialect: Dialect): Promise<void> {
  if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(${MOVES_LOCK})`.execute(trx);
}

/** The advisory lock key of writes that move listed rows: "helixd moves", any fixed number. */
const MOVES_LOCK = 0x6d6f766573;

/**
 * Writes runs that `prepareRuns` made, in order: a record may name records written before it in
 * the same call. All of them or none: the first refusal throws a RecordError and nothing is
 * written (with `trx`, the caller's transaction is left to roll back). Returns how many EventSub
 * events the write recorded.
 */
export async function writeRuns(
  store: Store,
  runs: readonly PreparedRun[],
  opts: WriteOptions,
): Promise<number> {
  const write = async (trx: Transaction<Database>) => {
    // A channel written while live writes its stream (src/records/channels.ts).
    if (runs.some((r) => r.kind === 'stream' || r.kind === 'channel')) await lockMoves(trx, store.dialect);
    const insert = inserter(trx, store.dialect);
    const events: NewEvent[] = [];
    for (const run of runs) events.push(...(await writeRun(trx, run, opts, insert, store.dialect)));
    return (await recordEvents(trx, store.dialect, events, Date.now())).length;
  };
  // In the caller's transaction, the caller commits (and calls eventsCommitted when this says it
  // recorded events): serving processes find them by their tails' polls (src/eventsub/).
  if (opts.trx) return write(opts.trx);
  const recorded = await store.db.transaction().execute(write);
  if (recorded > 0) eventsCommitted(store);
  return recorded;
}

/**
 * Validates and writes `items` in order: a record may name records written before it in the same
 * call. All of them or none: the first refusal throws a RecordError and nothing is written.
 */
export async function writeRecords(
  store: Store,
  items: readonly RecordInput[],
  opts: WriteOptions,
): Promise<object[]> {
  const runs = runsOf(items.map(prepareRecord));
  await writeRuns(store, runs, opts);
  // From the runs as written: a stream's fields left out are its channel's, filled in by the write.
  return opts.echo
    ? runs.flatMap((run) => {
        const kind = recordKind(run.kind) as RecordKind;
        return (JSON.parse(run.json) as unknown[][]).map((values) =>
          kind.fromRow(Object.fromEntries(run.columns.map((c, i) => [c, values[i] as Row[string]]))),
        );
      })
    : [];
}

/**
 * Changes some fields of the record of `kind` with this key (keyColumns values): it is read, `patch`
 * laid over it, and the whole written back through the write path (every check, and the events the
 * change causes: a user's new description is a `user.update`), all in one transaction, so that no
 * write in between is lost. Returns the row as written; a RecordError 404 when no record has the
 * key (unless `fresh` is given), or the write path's refusal of the result.
 */
export async function patchRecord(
  store: Store,
  kind: RecordKind,
  key: readonly KeyValue[],
  /** the fields to change, or a function of the record as read that gives them */
  patch: Record<string, unknown> | ((record: Record<string, unknown>) => Record<string, unknown>),
  where: string,
  /** the record to lay `patch` over when none has the key (then written as new), instead of a 404 */
  fresh?: Record<string, unknown>,
): Promise<Row> {
  const { row, recorded } = await store.db.transaction().execute(async (trx) => {
    // Before the row lock, as every writer of streams takes it (lockMoves).
    if (kind.kind === 'stream' || kind.kind === 'channel') await lockMoves(trx, store.dialect);
    const found = await rowByKey(trx, kind.table, kind.keyColumns, key, store.dialect === 'postgres');
    if (!found && !fresh)
      throw new RecordError(
        404,
        where,
        kind.kind,
        keyField(kind),
        `no ${kind.kind} has this key (${key.join(', ')})`,
      );
    const base = (found ? kind.fromRow(found) : fresh) as Record<string, unknown>;
    const changes = typeof patch === 'function' ? patch(base) : patch;
    const prepared = prepareRecord({ kind: kind.kind, data: { ...base, ...changes }, where });
    const recorded = await writeRuns(store, runsOf([prepared]), { mode: found ? 'replace' : 'create', trx });
    return { row: prepared.row, recorded };
  });
  if (recorded > 0) eventsCommitted(store);
  return row;
}

/**
 * Deletes the videos among `ids` with what hangs on them, all of them or none, in one transaction:
 * their stream markers go with them, and the clips cut from them stay, their `video_id` and
 * `vod_offset` cleared (a clip whose video is not available, as production shows it). Ids of no
 * video are passed over. `check` sees the videos found (id to owner) before anything changes, and
 * refuses by throwing. Returns the ids deleted, in the order of `ids`, each once. Deleting a video
 * causes no EventSub event.
 */
export async function deleteVideos(
  store: Store,
  ids: readonly number[],
  check: (owners: ReadonlyMap<number, number>) => void,
): Promise<number[]> {
  return store.db.transaction().execute(async (trx) => {
    const owners = await videoOwners(trx, ids, store.dialect === 'postgres');
    check(owners);
    const found = [...new Set(ids)].filter((id) => owners.has(id));
    await deleteMarkersOfVideos(trx, found);
    await detachClipsFromVideos(trx, found);
    await deleteVideoRows(trx, found);
    return found;
  });
}

/**
 * The key of a record of `kind` from its text form (admin path segments, in `kind.key` order), as
 * values of its keyColumns; a 400 naming the field when a numeric id is not one.
 */
export function keyFromText(kind: RecordKind, parts: readonly string[], where: string): KeyValue[] {
  if (parts.length !== kind.key.length)
    throw new RecordError(400, where, kind.kind, keyField(kind), `takes ${kind.key.length} path segment(s)`);
  return kind.keyColumns.map((c, i) => {
    const text = parts[i] as string;
    if (!kind.numericKey.includes(c)) {
      const rule = unstorableText(text);
      if (rule !== undefined) throw new RecordError(400, where, kind.kind, kind.key[i] as string, rule);
      return text;
    }
    const n = parseNumericId(text);
    if (n === undefined)
      throw new RecordError(400, where, kind.kind, kind.key[i] as string, 'must be a numeric id');
    return n;
  });
}

/** The record of `kind` with this key (keyColumns values), or undefined. */
export async function readRecord(
  store: Store,
  kind: RecordKind,
  key: readonly KeyValue[],
): Promise<object | undefined> {
  const row = await rowByKey(store.db, kind.table, kind.keyColumns, key);
  return row && kind.fromRow(row);
}

/** Whether `kind`'s field `field` names a channel's own user (deleted with the user, not a reason to refuse). */
const ownChannel = (kind: RecordKind, field: string) => kind.kind === 'channel' && field === 'broadcaster_id';

/**
 * Deletes the record of `kind` with this key. A record that others still name is a 409 naming
 * them (delete those first); a user's tokens and authorization codes go with the user, and a
 * client's with the client.
 */
export async function deleteRecord(
  store: Store,
  kind: RecordKind,
  key: readonly KeyValue[],
  where: string,
): Promise<void> {
  const refuse = (status: 404 | 409, rule: string) =>
    new RecordError(status, where, kind.kind, keyField(kind), rule);
  const recorded = await store.db.transaction().execute(async (trx) => {
    if (kind.kind === 'stream') await lockMoves(trx, store.dialect);
    const row = await rowByKey(trx, kind.table, kind.keyColumns, key);
    if (!row) throw refuse(404, `no ${kind.kind} has this key (${key.join(', ')})`);
    for (const other of RECORD_KINDS)
      for (const ref of other.refs)
        if (
          ref.kind === kind.kind &&
          !ownChannel(other, ref.field) &&
          (await anyRowNames(trx, other.table, ref.column, key[0] as KeyValue))
        )
          throw refuse(409, `is named by ${other.plural} (${ref.field}): delete or change those first`);
    // A live stream holds its channel's values (src/records/channels.ts): the channel goes after it.
    if (kind.kind === 'channel' && (await anyRowNames(trx, 'streams', 'user_id', key[0] as KeyValue)))
      throw refuse(
        409,
        "is live: its stream holds the channel's title, game, language and tags; delete the stream first",
      );
    if (kind.kind === 'user') {
      await deleteUserGrants(trx, key[0] as number);
      // A user's channel is the user's own: it goes with the user.
      await deleteByKey(trx, 'channels', ['broadcaster_id'], key);
    }
    // The event names the users as they are before the delete (a user is never deleted here
    // while a record names it).
    const events = await eventsOfDelete(trx, store.dialect, kind.kind, row);
    await deleteByKey(trx, kind.table, kind.keyColumns, key);
    const at = Date.now();
    // The EventSub subscriptions that rested on what went are revoked in the same transaction
    // (docs/eventsub-design.md, section 1): a user's, and the follows read through a moderator.
    let controls = 0;
    if (kind.kind === 'user')
      controls = await revokeSubscriptions(
        trx,
        store.dialect,
        { namesUser: Number(key[0]) },
        'user_removed',
        at,
      );
    if (kind.kind === 'moderator')
      controls = await revokeSubscriptions(
        trx,
        store.dialect,
        { followsOf: Number(row.broadcaster_id), moderator: Number(row.user_id) },
        'moderator_removed',
        at,
      );
    return (await recordEvents(trx, store.dialect, events, at)).length + controls;
  });
  if (recorded > 0) eventsCommitted(store);
}
