// Fuzzing of every route /openapi.json describes (the operations under /helix and /mock, the
// probes, the mock-server units, the report downloads, the admin API, the token service), on both
// stores. Query strings (and path segments) draw names and values from the route's own parameters,
// from the store's records and from earlier answers (cursors, report URLs), mixed with junk:
// repeated keys, empty values, huge numbers, broken percent-encoding, NUL and control characters,
// lone surrogates, very long values; with valid and invalid tokens. The token service also gets
// form and JSON bodies, the admin API JSON bodies (records of the store with a field changed, and
// junk), POST /eventsub/subscriptions subscriptions near valid ones (of every served type, with a
// field changed), POST /streams/markers markers near valid ones (the demo broadcaster's live stream
// has an archive video), PATCH /channels changes near valid ones, and all of them JSON whose bytes
// are not UTF-8. The operations' writes (PUT /users, PATCH /channels, POST /streams/markers,
// DELETE /videos, POST /clips) run after every read of the seeded data.
// Whatever comes in: never a 5xx, every error the route's error body, and the app still serves at
// the end. Every answer is also checked against /openapi.json (test/support/apps.ts).
//
// HELIXD_FUZZ_RUNS: cases per route and store (the default keeps the file near a minute on a busy
// 2-core machine; give thousands for a deep run). HELIXD_FUZZ_SEED replays a run: a failure names
// it, and the same seed makes the same cases in the same order (the data and the clock are pinned;
// only the tokens' text differs, never their role).
import assert from 'node:assert/strict';
import { STATUS_CODES } from 'node:http';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { OPERATION_SCOPES, SCOPES } from '../../src/auth/scopes.ts';
import { mintToken } from '../../src/auth/tokens.ts';
import { EVENT_TYPES } from '../../src/eventsub/types.ts';
import { DOCUMENTED_PREFIX, OPERATION_PREFIXES } from '../../src/http/operation.ts';
import { recordKindByPlural } from '../../src/records/index.ts';
import { forEachStore, startTestApp, TEST_NOW, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';

const RUNS = Number(process.env.HELIXD_FUZZ_RUNS ?? 80);
const SEED = Number(process.env.HELIXD_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
process.stdout.write(`# fuzz: ${RUNS} cases per route and store; HELIXD_FUZZ_SEED=${SEED} replays them\n`);

const ADMIN_TOKEN = 'fuzz-admin-token-0123456789-0123456789';
/** The client of the cases' tokens: no case names it, so none deletes it (and its tokens). */
const FUZZ_CLIENT = { id: 'fuzzclient000000000000000000001', secret: 'fuzz-client-secret-0123' };
const TOKEN_SERVICE = /^\/(oauth2|auth)\//;
/** The injected-fault rules (src/faults/injector.ts): an admin route that holds no records. */
const FAULTS_PATH = '/admin/faults';
/** The server clock (src/routes/admin/clock.ts): an admin route that holds no records, and moves forward only. */
const CLOCK_PATH = '/admin/clock';
/** What a report URL carries (src/reports/signing.ts); /openapi.json does not list it. */
const REPORT_PARAMS = ['type', 'started_at', 'ended_at', 'expires', 'signature'];
/** The EventSub subscriptions: a JSON body on POST, and served at the bare path too (Twurple's mock mode). */
const EVENTSUB_PATH = `${DOCUMENTED_PREFIX}/eventsub/subscriptions`;
/** Create Stream Marker: a JSON body on POST. */
const MARKERS_PATH = `${DOCUMENTED_PREFIX}/streams/markers`;
/** Modify Channel Information: a JSON body on PATCH. */
const CHANNELS_PATH = `${DOCUMENTED_PREFIX}/channels`;
/** The archive video setUp gives the demo broadcaster's live stream, so that markers can be made. */
const ARCHIVE_ID = '1999999999';

// ---- The routes, as /openapi.json describes them ----

interface ParamSchema {
  type?: string;
  enum?: string[];
  items?: ParamSchema;
}
interface Param {
  name: string;
  schema: ParamSchema;
}
interface Route {
  method: string;
  /** as documented: `{name}` for a path parameter */
  path: string;
  /** the query string's parameters; the token service's are also its body's */
  query: Param[];
  pathParams: string[];
  /** the admin API's record kind (its plural), for its JSON bodies */
  plural?: string;
}
interface BodySchema {
  properties?: Record<string, ParamSchema>;
  anyOf?: BodySchema[];
}
type OpenApi = {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: (Param & { in: string })[];
        requestBody?: { content: Record<string, { schema: BodySchema }> };
      }
    >
  >;
};

function routesOf(doc: OpenApi): Route[] {
  const routes: Route[] = [];
  for (const [path, ops] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(ops)) {
      const params = op.parameters ?? [];
      const query: Param[] = params.filter((p) => p.in === 'query');
      if (TOKEN_SERVICE.test(path)) {
        const body = Object.values(op.requestBody?.content ?? {})[0]?.schema;
        for (const [name, schema] of Object.entries(body?.properties ?? {}))
          if (!query.some((p) => p.name === name)) query.push({ name, schema });
      }
      if (path.startsWith('/reports/')) query.push(...REPORT_PARAMS.map((name) => ({ name, schema: {} })));
      const admin = /^\/admin\/([a-z_]+)/.exec(path)?.[1];
      routes.push({
        method: method.toUpperCase(),
        path,
        query,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        // Records' routes only: /admin/batch takes records of every kind, /admin/faults holds rules,
        // /admin/clock the server clock.
        ...(admin && recordKindByPlural(admin) ? { plural: admin } : {}),
      });
    }
  return routes;
}

// ---- Values ----

/** Values seen in the store and in answers, by name: a record's field, a parameter, `<plural>.<field>`. */
class Pool {
  readonly #byName = new Map<string, string[]>();
  add(name: string, value: unknown): void {
    if (typeof value !== 'string' && typeof value !== 'number') return;
    const list = this.#byName.get(name) ?? [];
    this.#byName.set(name, list);
    if (list.includes(String(value))) return;
    // Values that answers bring are kept newest first: a route's own cursors are in its run.
    if (LATER.has(name)) list.unshift(String(value));
    else list.push(String(value));
    if (list.length > 100) list.pop();
  }
  /** Every field of a JSON value, by its key (nested ones too). */
  addAll(value: unknown, name = ''): void {
    if (Array.isArray(value)) for (const v of value) this.addAll(v, name);
    else if (value && typeof value === 'object')
      for (const [k, v] of Object.entries(value)) this.addAll(v, k);
    else if (name) this.add(name, value);
  }
  of(names: readonly string[]): string[] {
    return names.flatMap((n) => this.#byName.get(n) ?? []);
  }
  /**
   * One of the values of `names` when the case is made, not when the arbitrary is: cursors and
   * report URLs arrive with the answers of earlier cases.
   */
  draw(names: readonly string[]): fc.Arbitrary<string> | undefined {
    if (this.of(names).length === 0 && !names.some((n) => LATER.has(n))) return undefined;
    return fc.nat().map((i) => {
      const values = this.of(names);
      return values.length ? (values[i % values.length] as string) : '';
    });
  }
}
/** Values that only answers bring. */
const LATER = new Set(['cursor', ...REPORT_PARAMS, 'file']);

/** Where a parameter's (or a path segment's, or a field's) plausible values come from. */
function sourcesOf(name: string): string[] {
  if (/(^|_)(broadcaster|user|from|to|creator|owner|gifter)_id$/.test(name))
    return [name, 'user_id', 'broadcaster_id', 'users.id'];
  if (['login', 'user_login', 'user'].includes(name)) return ['login', 'user_login'];
  if (name === 'id')
    return ['users.id', 'games.id', 'clips.id', 'videos.id', 'markers.id', 'streams.id', 'subscription_id'];
  if (name === 'game_id') return ['game_id', 'games.id'];
  if (name === 'video_id') return ['video_id', 'videos.id'];
  if (name === 'extension_id' || name === 'extension_client_id')
    return ['extension_id', 'extension_client_id', 'extensions.id'];
  if (name === 'after' || name === 'before') return ['cursor'];
  if (name === 'client_id') return ['clients.id'];
  if (name === 'token') return ['access_token'];
  return [name];
}

// biome-ignore format: a list of values
const NASTY = ['\0', '\x01', '\x1f', '\x7f', '\t', '\n', '\r', ' ', '%', '&', '=', '+', '#', '?', '/', '\\', "'", '"', '<', '>', '*', '_', ',', ';', '\ud800', '\udfff', '\ufffd', '\u2028', 'é', '😀'];
// biome-ignore format: a list of values
const NUMBERS = ['0', '-1', '1', '20', '100', '101', '2147483647', '2147483648', '9007199254740991', '9007199254740993', '9223372036854775807', '9223372036854775808', '99999999999999999999999999', '1e1', '1e309', '0x10', ' 5', '5 ', '+5', '-0', '05', '1.5', 'NaN', 'Infinity'];
// biome-ignore format: a list of values
const INSTANTS = ['2026-06-01T00:00:00Z', '2026-06-01', '2026-02-30T00:00:00Z', '0000-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '+275760-09-13T00:00:00Z', '2026-06-01T00:00:00+25:00', '2026-06-01T24:00:00Z', '2026-06-01T00:00:00.123456789Z', '2026-06-01 00:00:00'];
// biome-ignore format: a list of values
const BROKEN_ESCAPES = ['%', '%z', '%0', '%zz', '%00', '%ED%A0%80', '%C0%80', '%FF%FE', '%E2%82', '%25', '+', '%2B', '=', '%3D', '%2F', '..', '%2e%2e'];

const utf16 = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
/** Text of every kind: plain, unicode, lone surrogates, control characters, long. */
const junk = fc.oneof(
  { arbitrary: fc.constantFrom('', ' ', '\0', 'a\0b', '%00', '\ud800', 'null', '[]', '{}'), weight: 3 },
  { arbitrary: fc.string(), weight: 3 },
  { arbitrary: fc.string({ unit: 'grapheme' }), weight: 2 },
  { arbitrary: fc.string({ unit: utf16 }), weight: 2 },
  { arbitrary: fc.string({ unit: fc.constantFrom(...NASTY), maxLength: 8 }), weight: 3 },
  { arbitrary: fc.string({ unit: fc.constantFrom(...NASTY), minLength: 200, maxLength: 1200 }), weight: 1 },
  { arbitrary: fc.nat({ max: 30_000 }).map((n) => 'x'.repeat(n)), weight: 1 },
);
/** Numbers written every way: in and out of range, huge, signed, not decimal. */
const numbers = fc.oneof(
  fc.integer().map(String),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
  fc.constantFrom(...NUMBERS),
);
/** Instants near the pinned clock, as date-times and as days. */
const nearInstants = fc
  .integer({ min: -400, max: 400 })
  .chain((days) =>
    fc.constantFrom(
      ...[new Date(TEST_NOW + days * 86_400_000).toISOString()].flatMap((t) => [t, t.slice(0, 10)]),
    ),
  );
const oddInstants = fc.oneof(
  fc.date({ min: new Date(-1e14), max: new Date(1e14), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom(...INSTANTS),
);
const scopeLists = fc.subarray([...SCOPES, 'no:such:scope', ''], { maxLength: 6 }).map((s) => s.join(' '));
/** The parameters that name a user: the token's own user is the one most of them must name. */
const USER_PARAM = /(^|_)(broadcaster|user|from|to)_id$/;

/** Plausible values of a parameter: its enum, numbers, instants, the pool's values for its name. */
function ownValues(p: Param, pool: Pool): fc.Arbitrary<string> {
  const s = p.schema.items ?? p.schema;
  const own: fc.Arbitrary<string>[] = [];
  const known = pool.draw(sourcesOf(p.name));
  if (known) own.push(known);
  if (USER_PARAM.test(p.name)) own.push(pool.draw(['me']) as fc.Arbitrary<string>);
  if (s.enum?.length) own.push(fc.constantFrom(...s.enum));
  if (s.type === 'integer' || p.name === 'first') own.push(fc.integer({ min: 1, max: 100 }).map(String));
  if (s.type === 'boolean') own.push(fc.constantFrom('true', 'false'));
  if (/_at$|^date$/.test(p.name)) own.push(nearInstants);
  if (p.name === 'scope') own.push(scopeLists);
  if (own.length === 0) own.push(numbers);
  return fc.oneof(...own);
}
/** Any value of a parameter: its own, its own misspelt, numbers of every kind, or junk. */
function anyValue(p: Param, pool: Pool): fc.Arbitrary<string> {
  const s = p.schema.items ?? p.schema;
  const odd = fc.oneof(
    fc.constantFrom(
      'TRUE',
      'False',
      'yes',
      '1',
      '',
      ...(s.enum ?? []).flatMap((v) => [v.toUpperCase(), ` ${v}`]),
    ),
    oddInstants,
  );
  return fc.oneof(
    { arbitrary: ownValues(p, pool), weight: 3 },
    { arbitrary: odd, weight: 1 },
    { arbitrary: numbers, weight: 1 },
    { arbitrary: junk, weight: 2 },
  );
}

/**
 * Percent-encodes the UTF-8 of `s`, as a client sends it (a lone surrogate becomes U+FFFD: UTF-8
 * cannot carry it); `bare`: only what would end the value (`&`, `#`, `%`) is encoded.
 */
function percent(s: string, bare = false): string {
  if (bare) return s.replace(/[&#%]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return encodeURIComponent(s.replace(/\p{Cs}/gu, '\ufffd'));
}
/** Text beyond correct encoding: broken escapes, reserved characters. */
const rawText = fc.oneof(
  fc.constantFrom(...BROKEN_ESCAPES),
  fc.string({ unit: fc.constantFrom('a', '1', '%', '+', '=', ',', '.', '-', '%00', '%FF', '%2C', '%20') }),
);

/**
 * A query string (or form) for `params`: either plausible (some of the parameters, each once, with
 * their own values), or plausible with one wrong pair added, or anything (repeated keys, values of
 * every kind, broken encoding, junk names).
 */
function queryText(params: Param[], pool: Pool): fc.Arbitrary<string> {
  const pair = (p: Param, value: fc.Arbitrary<string>) =>
    fc.oneof(
      { arbitrary: value.map((v) => `${percent(p.name)}=${percent(v)}`), weight: 6 },
      { arbitrary: value.map((v) => `${percent(p.name)}=${percent(v, true)}`), weight: 1 },
      { arbitrary: rawText.map((v) => `${percent(p.name)}=${v}`), weight: 1 },
      { arbitrary: fc.constant(percent(p.name)), weight: 1 },
    );
  const names = [...params.map((p) => p.name.toUpperCase()), '__proto__', 'constructor', ''];
  const junkPair = fc
    .tuple(fc.oneof(junk, fc.constantFrom(...names)), junk)
    .map(([k, v]) => `${percent(k)}=${percent(v)}`);
  const anyPair = fc.oneof(
    ...params.map((p) => ({ arbitrary: pair(p, anyValue(p, pool)), weight: 4 })),
    { arbitrary: junkPair, weight: 1 },
    { arbitrary: rawText, weight: 1 },
  );
  // A few of the parameters (operations take one selector of several), each once.
  const plausible = params.length
    ? fc
        .uniqueArray(fc.oneof(...params.map((p) => fc.tuple(fc.constant(p.name), ownValues(p, pool)))), {
          maxLength: 4,
          selector: ([name]) => name,
        })
        .map((q) => new URLSearchParams(q).toString())
    : fc.constant('');
  return fc.oneof(
    { arbitrary: plausible, weight: 2 },
    fc.tuple(plausible, anyPair).map(([q, extra]) => (q ? `${q}&${extra}` : extra)),
    fc.array(anyPair, { maxLength: 8 }).map((pairs) => pairs.join('&')),
  );
}

/** A JSON value of any shape, junk among its strings, huge numbers among its numbers. */
const jsonJunk = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    junk,
    fc.integer(),
    fc.double(),
    fc.constantFrom(true, false, null, 1e308, -1, 2 ** 53, 2 ** 31, 1.5),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(junk, tie('value'), { maxKeys: 3 }),
  ),
})).value;

type Json = Record<string, unknown>;

/**
 * A record of the store with a field changed (to another record's value, a number, junk, or
 * dropped) or a field added: mostly valid, so that the write path's checks past the shape run too.
 */
function nearRecord(records: Json[]): fc.Arbitrary<Json> {
  const fields = [...new Set(records.flatMap((r) => Object.keys(r)))];
  const valuesOf = (f: string) =>
    fc.oneof(
      fc.constantFrom(...records.map((r) => r[f])),
      fc.constantFrom(undefined, null, '', 0, -1, 2 ** 31, 2 ** 53, 1e308, '99999999999999999999'),
      fc.integer({ min: 0, max: 2 ** 40 }).map(String),
      jsonJunk,
    );
  const change = fc.oneof(
    ...fields.map((f) => fc.tuple(fc.constant(f), valuesOf(f))),
    fc.tuple(junk, jsonJunk),
  );
  return fc
    .tuple(fc.constantFrom(...records), fc.array(change, { maxLength: 2 }))
    .map(([r, changes]) => ({ ...r, ...Object.fromEntries(changes) }));
}

// ---- Cases ----

type Credentials = 'user' | 'user-no-scope' | 'app' | 'admin' | 'unknown' | 'none' | 'wrong-client';

interface Case {
  /** the operations' prefix (/helix or /mock; none: the bare path, which /eventsub/subscriptions has too) */
  prefix: string;
  /** the path parameters' text, percent-encoded */
  path: string[];
  query: string;
  credentials: Credentials;
  body?: { type: string; payload: string | Buffer };
}

interface Fuzzed {
  t: TestApp;
  routes: Route[];
  pool: Pool;
  /** every record of the store at the start, by plural */
  records: Map<string, Json[]>;
  headers: Record<Credentials, Record<string, string>>;
}

const json = (payload: unknown) => ({ type: 'application/json', payload: JSON.stringify(payload) ?? 'null' });
// biome-ignore format: a list of values
const NOT_UTF8 = [[0xff, 0xfe], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0x80], [0xf4, 0x90, 0x80, 0x80]];
/** JSON with bytes that are not UTF-8 somewhere in it (invalid, overlong, a surrogate, cut short). */
const notUtf8Body = fc.tuple(jsonJunk, fc.constantFrom(...NOT_UTF8), fc.nat()).map(([value, bytes, i]) => {
  const text = Buffer.from(JSON.stringify(value) ?? 'null');
  const at = i % (text.length + 1);
  const payload = Buffer.concat([text.subarray(0, at), Buffer.from(bytes), text.subarray(at)]);
  return { type: 'application/json', payload };
});
const brokenBody = fc.oneof(
  fc
    .constantFrom(
      '{',
      '[',
      '{"a":',
      'nul',
      '"\\ud800"',
      '{"__proto__":{"x":1}}',
      `${'['.repeat(5000)}${']'.repeat(5000)}`,
    )
    .map((payload) => ({ type: 'application/json', payload })),
  junk.map((payload) => ({ type: 'text/plain', payload })),
  notUtf8Body,
);

/** The records of a kind (one empty object when the store holds none: the fields are then junk). */
const recordsOf = (f: Fuzzed, plural: string) => {
  const records = f.records.get(plural) ?? [];
  return records.length ? records : [{}];
};

/**
 * A subscription request near a valid one: a served type with its version and its condition's
 * fields (users of the store, the cases' own client), a webhook or WebSocket transport; any part of
 * it may be junk, missing, or one field too many.
 */
function eventsubBody(f: Fuzzed): fc.Arbitrary<Json> {
  const user = fc.oneof(
    { arbitrary: f.pool.draw(['users.id']) ?? numbers, weight: 20 },
    { arbitrary: f.pool.draw(['me']) ?? numbers, weight: 2 },
    numbers,
    jsonJunk,
  );
  const clientId = fc.oneof({ arbitrary: fc.constant(FUZZ_CLIENT.id), weight: 20 }, junk, jsonJunk);
  const transport = fc.oneof(
    {
      arbitrary: nearly({ method: fc.constant('webhook'), callback: callbacks, secret: secrets }),
      weight: 12,
    },
    {
      arbitrary: nearly({ method: fc.constant('websocket'), session_id: fc.oneof(fc.uuid(), junk) }),
      weight: 2,
    },
    jsonJunk,
  );
  return fc.constantFrom(...EVENT_TYPES).chain((type) =>
    nearly({
      type: fc.oneof({ arbitrary: fc.constant(type.type), weight: 20 }, junk, jsonJunk),
      version: fc.oneof({ arbitrary: fc.constant(type.version), weight: 20 }, numbers, jsonJunk),
      condition: fc.oneof(
        {
          arbitrary: nearly(
            Object.fromEntries(
              type.condition.map((field) => [field, field === 'client_id' ? clientId : user]),
            ),
          ),
          weight: 20,
        },
        jsonJunk,
      ),
      transport,
    }),
  );
}
const callbacks = fc.oneof(
  { arbitrary: fc.constantFrom('http://localhost:9/cb', 'https://example.com:8443/cb'), weight: 20 },
  fc.constantFrom('ftp://example.com/', '/relative', 'http://', `https://x/${'a'.repeat(3000)}`),
  junk,
  jsonJunk,
);
const secrets = fc.oneof({ arbitrary: fc.constant('fuzz-webhook-secret'), weight: 20 }, junk, jsonJunk);

/**
 * A Create Stream Marker body near a valid one: the token's own user mostly (whose live stream has
 * an archive video), other users, ids as JSON numbers, descriptions around the 140 characters.
 */
function markerBody(f: Fuzzed): fc.Arbitrary<Json> {
  const user = fc.oneof(
    { arbitrary: f.pool.draw(['me']) ?? numbers, weight: 12 },
    { arbitrary: f.pool.draw(['users.id']) ?? numbers, weight: 4 },
    fc.integer({ min: -1, max: 2 ** 53 }),
    numbers,
    jsonJunk,
  );
  const description = fc.oneof(
    { arbitrary: fc.string({ maxLength: 140 }), weight: 8 },
    fc.string({ unit: 'grapheme', minLength: 130, maxLength: 150 }),
    junk,
    jsonJunk,
  );
  return nearly({ user_id: user, description });
}

/**
 * A Modify Channel Information body near a valid one: some of its fields, each mostly valid (a
 * game of the store, tags and labels around their limits), else junk.
 */
function channelBody(f: Fuzzed): fc.Arbitrary<Json> {
  const tag = fc.oneof(
    { arbitrary: fc.stringMatching(/^[A-Za-z0-9]{1,25}$/), weight: 8 },
    fc.string({ unit: 'grapheme', maxLength: 30 }),
    junk,
  );
  const label = fc.record({
    id: fc.oneof(
      {
        arbitrary: fc.constantFrom('Gambling', 'DrugsIntoxication', 'ProfanityVulgarity', 'ViolentGraphic'),
        weight: 8,
      },
      fc.constantFrom('MatureGame', 'Nope', ''),
      jsonJunk,
    ),
    is_enabled: fc.oneof({ arbitrary: fc.boolean(), weight: 8 }, jsonJunk),
  });
  const field = <T>(valid: fc.Arbitrary<T>) => fc.oneof({ arbitrary: valid, weight: 8 }, jsonJunk);
  const fields = {
    title: field(fc.string({ unit: 'grapheme', maxLength: 145 })),
    game_id: field(fc.oneof(f.pool.draw(['games.id']) ?? numbers, fc.constantFrom('', '0'), numbers)),
    broadcaster_language: field(fc.constantFrom('en', 'de', 'other', 'EN', 'english', '')),
    delay: field(fc.oneof(fc.integer({ min: -1, max: 901 }), fc.constantFrom('15', '1000'))),
    tags: field(fc.array(tag, { maxLength: 11 })),
    content_classification_labels: field(fc.array(label, { maxLength: 7 })),
    is_branded_content: field(fc.boolean()),
  };
  return fc
    .subarray(Object.keys(fields) as (keyof typeof fields)[], { minLength: 0 })
    .chain((names) => fc.record(Object.fromEntries(names.map((n) => [n, fields[n]]))))
    .map((o) => o as Json);
}

/**
 * A change of a channel that breaks no rule (any account may make it): channelBody's fields are
 * each wrong often enough that a body of several is seldom wholly right.
 */
const channelChange = fc.record(
  {
    title: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9 ]{0,60}$/),
    broadcaster_language: fc.constantFrom('en', 'de', 'other'),
    tags: fc.array(fc.stringMatching(/^[A-Za-z0-9]{1,25}$/), { maxLength: 10 }),
  },
  { requiredKeys: ['title'] },
);

/** An object of `fields`, mostly whole; else one field left out, or one of junk added. */
function nearly(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Json> {
  const names = Object.keys(fields);
  return fc
    .tuple(
      fc.record(fields),
      fc.oneof(
        { arbitrary: fc.constant(undefined), weight: 20 },
        fc.constantFrom(...names).map((name) => ({ drop: name })),
        fc.tuple(junk, jsonJunk).map(([k, v]) => ({ add: [k, v] as const })),
      ),
    )
    .map(([o, change]) => {
      const out: Json = { ...o };
      if (change && 'drop' in change) delete out[change.drop];
      if (change && 'add' in change) out[change.add[0]] = change.add[1];
      return out;
    });
}

function bodyFor(route: Route, f: Fuzzed): fc.Arbitrary<Case['body']> {
  const none = fc.constant(undefined);
  if (TOKEN_SERVICE.test(route.path) && route.method === 'POST') {
    const form = queryText(route.query, f.pool).map((payload) => ({
      type: 'application/x-www-form-urlencoded',
      payload,
    }));
    const object = fc
      .array(
        fc.oneof(
          ...route.query.map((p) => fc.tuple(fc.constant(p.name), fc.oneof(ownValues(p, f.pool), jsonJunk))),
        ),
        { maxLength: 6 },
      )
      .map((e) => json(Object.fromEntries(e)));
    return fc.oneof(
      { arbitrary: none, weight: 2 },
      { arbitrary: form, weight: 4 },
      { arbitrary: object, weight: 2 },
      { arbitrary: brokenBody, weight: 1 },
    );
  }
  if (route.path === MARKERS_PATH && route.method === 'POST')
    return fc.oneof(
      { arbitrary: markerBody(f).map(json), weight: 8 },
      { arbitrary: brokenBody, weight: 1 },
      { arbitrary: none, weight: 1 },
    );
  if (route.path === CHANNELS_PATH && route.method === 'PATCH')
    return fc.oneof(
      { arbitrary: channelBody(f).map(json), weight: 8 },
      { arbitrary: channelChange.map(json), weight: 8 },
      { arbitrary: brokenBody, weight: 1 },
      { arbitrary: none, weight: 1 },
    );
  if (route.path === EVENTSUB_PATH && route.method === 'POST')
    return fc.oneof(
      { arbitrary: eventsubBody(f).map(json), weight: 8 },
      { arbitrary: brokenBody, weight: 1 },
      { arbitrary: none, weight: 1 },
    );
  if (!route.path.startsWith('/admin') || route.method === 'GET' || route.method === 'DELETE')
    return fc.oneof({ arbitrary: none, weight: 9 }, { arbitrary: brokenBody, weight: 1 });
  if (route.path === FAULTS_PATH) {
    // Rules that parse and ones that do not, with seeds in and out of range.
    const rule = fc
      .tuple(
        fc.constantFrom(
          '429',
          '500',
          '503',
          'reset',
          'latency:1ms',
          'latency:0s',
          '404',
          'latency:99s',
          '429:ratelimit-reset=1s',
          '429:ratelimit-reset=0ms',
          '429:ratelimit-reset=61s',
          '503:ratelimit-reset=1s',
        ),
        fc.oneof(fc.integer({ min: -5, max: 105 }).map(String), junk),
        fc.oneof(
          fc.constant(''),
          junk.map((c) => `@${c}`),
        ),
      )
      .map(([what, percent, client]) => `${what}:${percent}%${client}`);
    const rules = fc.oneof(
      fc.array(rule, { maxLength: 3 }).map((r) => r.join(', ')),
      junk,
    );
    const body = fc.record(
      { faults: fc.oneof({ arbitrary: rules, weight: 4 }, jsonJunk), seed: fc.oneof(fc.integer(), jsonJunk) },
      { requiredKeys: [] },
    );
    return fc.oneof(
      { arbitrary: body.map(json), weight: 8 },
      { arbitrary: jsonJunk.map(json), weight: 1 },
      { arbitrary: brokenBody, weight: 1 },
    );
  }
  if (route.path === CLOCK_PATH) {
    // Moves of minutes to a day, and ones refused: back in time, malformed, both fields or neither.
    // The clock only moves forward, so the moves stay small: the cases' tokens live for years.
    const to = fc
      .integer({ min: -1440, max: 1440 })
      .map((minutes) => new Date(TEST_NOW + minutes * 60_000).toISOString().replace('.000Z', 'Z'));
    const advance = fc.oneof(
      fc.constantFrom('1s', '90s', '15m', '4h', '1d', '0s', '-1m', '1e3s', '5 m', '1w'),
      fc.integer({ min: -100, max: 100_000 }).map(String),
    );
    const body = fc.record(
      {
        advance: fc.oneof({ arbitrary: advance, weight: 4 }, jsonJunk),
        // Malformed and past instants; never a far one, which would expire every token.
        to: fc.oneof(
          { arbitrary: to, weight: 4 },
          fc.constantFrom(...INSTANTS.filter((i) => !i.startsWith('9999'))),
          jsonJunk,
        ),
      },
      { requiredKeys: [] },
    );
    return fc.oneof(
      { arbitrary: body.map(json), weight: 8 },
      { arbitrary: jsonJunk.map(json), weight: 1 },
      { arbitrary: brokenBody, weight: 1 },
    );
  }
  const all = [...f.records.entries()].filter(([, rs]) => rs.length > 0);
  const payload = route.plural
    ? fc.oneof(
        { arbitrary: nearRecord(recordsOf(f, route.plural)), weight: 4 },
        fc.array(nearRecord(recordsOf(f, route.plural)), { maxLength: 3 }),
        jsonJunk,
      )
    : fc.oneof(
        {
          arbitrary: fc.array(
            fc.oneof(
              ...all.map(([plural, rs]) =>
                nearRecord(rs).map((data) => ({ kind: plural.replace(/s$/, ''), data })),
              ),
            ),
            { maxLength: 3 },
          ),
          weight: 4,
        },
        fc.array(fc.record({ kind: junk, data: jsonJunk }, { requiredKeys: [] }), { maxLength: 2 }),
        // Records whose kind is not a string: a kind's name in an array (coerced, it would write the
        // record), an object whose toString is not a function (coerced, a TypeError), any JSON.
        fc.array(
          fc.oneof(
            ...all.map(([plural, rs]) => {
              const name = plural.replace(/s$/, '');
              const kind = fc.oneof(
                fc.constantFrom([name], [[name]], { toString: 1 }, { toString: name }, { valueOf: 1 }),
                jsonJunk,
              );
              return fc.record({ kind, data: nearRecord(rs) });
            }),
          ),
          { minLength: 1, maxLength: 2 },
        ),
        jsonJunk,
      );
  return fc.oneof(
    { arbitrary: payload.map(json), weight: 8 },
    { arbitrary: brokenBody, weight: 1 },
    { arbitrary: none, weight: 1 },
  );
}

function caseFor(route: Route, f: Fuzzed): fc.Arbitrary<Case> {
  const credentials: fc.Arbitrary<Credentials> = route.path.startsWith('/admin')
    ? fc.oneof(
        { arbitrary: fc.constant('admin' as const), weight: 8 },
        fc.constantFrom<Credentials>('user', 'unknown', 'none'),
      )
    : fc.oneof(
        { arbitrary: fc.constant('user' as const), weight: 8 },
        // Webhook subscriptions are made with app tokens: as often as user tokens there.
        { arbitrary: fc.constant('app' as const), weight: route.path === EVENTSUB_PATH ? 8 : 2 },
        fc.constantFrom<Credentials>('user-no-scope', 'unknown', 'none', 'wrong-client'),
      );
  const segment = (name: string) =>
    fc.oneof(
      { arbitrary: anyValue({ name, schema: {} }, f.pool).map((v) => percent(v)), weight: 4 },
      { arbitrary: rawText, weight: 1 },
    );
  // An admin route's path also names records of the store: the key of one of them.
  const records = route.plural ? (f.records.get(route.plural) ?? []) : [];
  const keyOfRecord = fc
    .constantFrom(...records, {})
    .map((r) => route.pathParams.map((n) => percent(String((r as Json)[n] ?? ''))));
  const path = fc.tuple(...route.pathParams.map(segment));
  // An operation's write is also sent as its caller sends it, in half the cases, so that some cases
  // write (the run checks it): every parameter that names a user names the token's own user (an
  // operation with no such parameter, DELETE /videos, gets its cases from queryText alone). Most other
  // cases of PATCH /channels fail on the query or the token before the body is looked at.
  const query =
    isOperationWrite(route) && route.query.some((p) => USER_PARAM.test(p.name))
      ? fc.oneof(queryText(route.query, f.pool), ownersQuery(route.query, f.pool))
      : queryText(route.query, f.pool);
  return fc.record({
    prefix: route.path.startsWith(DOCUMENTED_PREFIX)
      ? fc.constantFrom(...OPERATION_PREFIXES, ...(route.path === EVENTSUB_PATH ? [''] : []))
      : fc.constant(''),
    path: records.length && route.pathParams.length ? fc.oneof(keyOfRecord, path) : path,
    query,
    credentials,
    body: bodyFor(route, f),
  });
}

/** The query of a caller that names itself in every parameter that names a user (and gives no other). */
function ownersQuery(params: Param[], pool: Pool): fc.Arbitrary<string> {
  const me = pool.draw(['me']) as fc.Arbitrary<string>;
  const mine = params.filter((p) => USER_PARAM.test(p.name));
  return me.map((id) => new URLSearchParams(mine.map((p) => [p.name, id])).toString());
}

/** The request of a case. */
function requestOf(route: Route, c: Case, f: Fuzzed): InjectOptions & { url: string } {
  let path = route.path;
  for (const [i, name] of route.pathParams.entries()) path = path.replace(`{${name}}`, c.path[i] ?? '');
  if (route.path.startsWith(DOCUMENTED_PREFIX)) path = c.prefix + path.slice(DOCUMENTED_PREFIX.length);
  return {
    method: route.method as 'GET',
    url: `${path}${c.query ? `?${c.query}` : ''}`,
    headers: { ...f.headers[c.credentials], ...(c.body ? { 'content-type': c.body.type } : {}) },
    ...(c.body ? { payload: c.body.payload } : {}),
  };
}

// ---- The run ----

async function setUp(kind: StoreKind): Promise<Fuzzed> {
  const t = await startTestApp(kind, { users: 30, config: { adminToken: ADMIN_TOKEN, legacy: true } });
  const seed = t.seed as NonNullable<TestApp['seed']>;
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const doc = JSON.parse((await t.inject({ method: 'GET', url: '/openapi.json' })).body) as OpenApi;
  const routes = routesOf(doc);
  // Every record of the store (the first 100 of each kind), and their values by field name.
  const pool = new Pool();
  const records = new Map<string, Json[]>();
  for (const plural of new Set(routes.map((r) => r.plural).filter((p) => p !== undefined))) {
    const res = await t.inject({ method: 'GET', url: `/admin/${plural}?first=100`, headers: admin });
    const data = JSON.parse(res.body).data as Json[];
    records.set(plural, data);
    for (const record of data)
      for (const [k, v] of Object.entries(record)) {
        pool.addAll(v, k);
        pool.add(`${plural}.${k}`, v);
      }
  }
  // The cases' tokens, of a client no case names (FUZZ_CLIENT).
  const created = await t.inject({
    method: 'POST',
    url: '/admin/clients',
    headers: admin,
    payload: {
      id: FUZZ_CLIENT.id,
      name: 'fuzz',
      redirect_uris: ['http://localhost:3000/cb'],
      created_at: '2020-01-01T00:00:00Z',
      secret: FUZZ_CLIENT.secret,
    },
  });
  assert.equal(created.statusCode, 201, created.body);
  const now = Math.floor(t.clock.now() / 1000);
  const ttl = 10 * 365 * 86_400;
  const userToken = async (scopes: readonly string[]) =>
    (
      await mintToken(t.store.db, {
        kind: 'user',
        clientId: FUZZ_CLIENT.id,
        userId: seed.demoUserId,
        scopes,
        ttl,
        now,
      })
    ).access_token;
  const auth = (token: string) => ({ authorization: `Bearer ${token}`, 'client-id': FUZZ_CLIENT.id });
  const user = await userToken(OPERATION_SCOPES);
  const app = await mintToken(t.store.db, { kind: 'app', clientId: FUZZ_CLIENT.id, scopes: [], ttl, now });
  const headers: Fuzzed['headers'] = {
    user: auth(user),
    'user-no-scope': auth(await userToken([])),
    app: auth(app.access_token),
    admin,
    unknown: auth('0123456789abcdefghijklmnopqrst'),
    none: {},
    'wrong-client': { ...auth(user), 'client-id': seed.demoClientId },
  };
  pool.add('me', seed.demoUserId);
  // An archive video of the demo broadcaster's live stream: a marker then has somewhere to go.
  const stream = await t.store.db
    .selectFrom('streams')
    .selectAll()
    .where('user_id', '=', seed.demoUserId)
    .executeTakeFirstOrThrow();
  const startedAt = new Date(stream.started_at * 1000).toISOString().replace('.000Z', 'Z');
  const archive = await t.inject({
    method: 'POST',
    url: '/admin/videos',
    headers: admin,
    payload: {
      id: ARCHIVE_ID,
      stream_id: String(stream.id),
      user_id: String(seed.demoUserId),
      game_id: String(stream.game_id),
      title: 'fuzz',
      description: '',
      created_at: startedAt,
      published_at: startedAt,
      view_count: 0,
      language: stream.language,
      type: 'archive',
      duration: '0s',
      muted_segments: null,
    },
  });
  assert.equal(archive.statusCode, 201, archive.body);
  // The token service's values: the clients' secrets, live tokens and refresh tokens to spend.
  pool.addAll(JSON.parse((await t.inject({ method: 'GET', url: '/units/clients' })).body).data);
  for (const secret of pool.of(['Secret'])) pool.add('client_secret', secret);
  for (const uri of pool.of(['redirect_uris'])) pool.add('redirect_uri', uri);
  for (let i = 0; i < 20; i++) {
    const minted = await t.inject({
      method: 'POST',
      url: '/auth/authorize',
      payload: {
        client_id: seed.demoClientId,
        client_secret: pool.of(['Secret'])[0],
        grant_type: 'user_token',
        user_id: String(seed.demoUserId),
      },
    });
    pool.addAll(JSON.parse(minted.body));
  }
  return { t, routes, pool, records, headers };
}

/** Never a 5xx; an error has the route's error body: the Helix one, or the token service's own. */
function checkAnswer(route: Route, req: { method?: string; url: string }, res: LightMyRequestResponse): void {
  const s = res.statusCode;
  const what = `${req.method} ${req.url.slice(0, 300)} answered ${s}: ${res.body.slice(0, 300)}`;
  assert.ok(s < 500, what);
  if (s < 400) return;
  const tokenService = TOKEN_SERVICE.test(route.path);
  // The consent page again, with the problem on it (docs/auth.md).
  if (tokenService && String(res.headers['content-type']).startsWith('text/html')) {
    assert.equal(s, 400, what);
    return;
  }
  const body = JSON.parse(res.body) as Json;
  assert.equal(body.status, s, what);
  assert.equal(typeof body.message, 'string', what);
  if (!tokenService) assert.equal(body.error, STATUS_CODES[s], what);
}

/** Cursors and report URLs of an answer become values of later cases. */
function harvest(pool: Pool, res: LightMyRequestResponse): void {
  if (!String(res.headers['content-type']).startsWith('application/json')) return;
  const body = JSON.parse(res.body) as { pagination?: { cursor?: unknown }; data?: unknown };
  pool.add('cursor', body.pagination?.cursor);
  // EventSub subscriptions' ids, for the DELETE and the GET filter of later cases.
  for (const d of Array.isArray(body.data) ? (body.data as Json[]) : [])
    if (typeof d?.transport === 'object') pool.add('subscription_id', d.id);
  for (const d of Array.isArray(body.data) ? (body.data as Json[]) : []) {
    if (typeof d?.URL !== 'string') continue;
    const url = new URL(d.URL);
    pool.add('file', url.pathname.split('/').pop());
    for (const [k, v] of url.searchParams) pool.add(k, v);
  }
}

// The reads first, on the data as seeded; then the operations' writes (a DELETE /videos case takes
// videos and markers from the reads after it); then the admin API, its reads before its writes.
const isWrite = (r: Route) => r.method !== 'GET' && r.path !== EVENTSUB_PATH;
/** A write of an operation, served under /helix and /mock (not the admin API's, not the token service's). */
const isOperationWrite = (r: Route) => isWrite(r) && r.path.startsWith(DOCUMENTED_PREFIX);
const order = (r: Route) => (r.path.startsWith('/admin') ? (r.method === 'GET' ? 2 : 3) : isWrite(r) ? 1 : 0);

// The stores run side by side: one waits on PostgreSQL while the other works.
describe('fuzzing', { concurrency: true }, () =>
  forEachStore('every route', (kind) => {
    let f: Fuzzed | undefined;
    before(async () => {
      f = await setUp(kind);
    });
    after(() => f?.t.close());

    it("answers every case below 500, with the route's error body", async () => {
      const fuzzed = f as Fuzzed;
      const routes = [...fuzzed.routes].sort((a, b) => order(a) - order(b));
      for (const [i, route] of routes.entries()) {
        let done = 0;
        const property = fc.asyncProperty(caseFor(route, fuzzed), async (c) => {
          const req = requestOf(route, c, fuzzed);
          const res = await fuzzed.t.inject(req);
          checkAnswer(route, req, res);
          console.log('DBG', route.method, route.path, res.statusCode);
          harvest(fuzzed.pool, res);
          if (res.statusCode < 300) done++;
          // Rules a case set would fail the operations on purpose; the admin API's cases run last
          // and faults never reach /admin, but a reordering must not turn them into failures.
          if (route.path === FAULTS_PATH && route.method === 'PUT' && res.statusCode === 200) {
            const removed = await fuzzed.t.inject({
              method: 'DELETE',
              url: FAULTS_PATH,
              headers: fuzzed.headers.admin,
            });
            assert.equal(removed.statusCode, 204, removed.body);
          }
        });
        await fc
          .assert(property, { numRuns: RUNS, seed: SEED + i, includeErrorInReport: true })
          .catch((err: Error) => {
            throw new Error(
              `${route.method} ${route.path} [${kind}]; HELIXD_FUZZ_SEED=${SEED}\n${err.message}`,
            );
          });
        // The operations' writes were not only refused: some cases wrote (a run of 50 or more).
        if (isOperationWrite(route) && RUNS >= 50)
          assert.ok(
            done > 0,
            `${route.method} ${route.path} [${kind}]: no case wrote; HELIXD_FUZZ_SEED=${SEED}`,
          );
      }
      const health = await fuzzed.t.inject({ method: 'GET', url: '/readyz' });
      assert.equal(health.statusCode, 200, 'still serving');
    });
  }),
);
