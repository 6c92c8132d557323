// The leanest program: the least a server that reads the store must do to answer the listings the
// bench compares it on, /clips and /videos by broadcaster, user or game, first and deep pages. A
// plain node:http server in its own process (no Fastify, no Kysely per request). Per request it
// checks that `Authorization` and `Client-Id` are there, binds the values of ONE prepared
// better-sqlite3 statement that returns rows as arrays, takes display names from a Map loaded at
// start, and writes the JSON by hand in helixd's property order. Its `data` is byte-identical to
// helixd's (bench/run.ts checks it on every page it measures); its cursor is its own and unsigned.
//
// The SQL is helixd's own: at start, each shape's statement is captured from helixd's store
// function (src/store/clips.ts clipsPage, src/store/videos.ts videosPage) as Kysely compiles it, with
// marker values whose places in the parameter list say where each request value goes. So both
// programs run the same statement text over the same index range.
//
// Run as a child: `node --import tsx bench/leanest.ts <sqlite file> <site url>`; it prints
// `listening <port>`. Anything it does not serve (another parameter, another path) is a 400 or 404.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import SQLite from 'better-sqlite3';
import { type CompiledQuery, Kysely, type KyselyPlugin, type RootOperationNode, SqliteDialect } from 'kysely';
import { clipsPage } from '../src/store/clips.ts';
import type { Key } from '../src/store/page.ts';
import type { Database } from '../src/store/schema.ts';
import { videosPage } from '../src/store/videos.ts';
import { rfc3339 } from '../src/wire/datetime.ts';
import { hms } from '../src/wire/links.ts';

const [file, siteArg] = process.argv.slice(2);
if (!file || !siteArg) {
  process.stderr.write('usage: leanest.ts <sqlite file> <site url>\n');
  process.exit(2);
}
const site = siteArg;

const conn = new SQLite(file);
// helixd's serving pragmas that bear on reads (src/store/db.ts): the same page cache.
conn.pragma('journal_mode = WAL');
conn.pragma('cache_size = -65536');

// ---- names, loaded once -------------------------------------------------------------------------

/** user id -> [login as a JSON string's inside, display name as a JSON string with its quotes] */
const users = new Map<number, [string, string]>();
for (const [id, login, name] of conn
  .prepare('select id, login, display_name from users')
  .raw()
  .iterate() as Iterable<[number, string, string]>)
  users.set(id, [JSON.stringify(login).slice(1, -1), JSON.stringify(name)]);
const games = new Set<number>(conn.prepare('select id from games').pluck().all() as number[]);

// ---- the statements, captured from helixd's store functions -------------------------------------

const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: conn }) });

/** Kysely's compiled queries of what `run` executes (test/store/plans.ts, capturedQueries). */
async function captured(run: (db: Kysely<Database>) => Promise<unknown>): Promise<CompiledQuery[]> {
  const nodes: {
    node: RootOperationNode;
    queryId: Parameters<KyselyPlugin['transformQuery']>[0]['queryId'];
  }[] = [];
  await run(
    db.withPlugin({
      transformQuery(args) {
        nodes.push({ node: args.node, queryId: args.queryId });
        return args.node;
      },
      transformResult: async (args) => args.result,
    }),
  );
  return nodes.map(({ node, queryId }) => db.getExecutor().compileQuery(node, queryId));
}

// Marker values: no store holds them, so each one's place in the parameters is unambiguous.
const VALUE = 987_654_321;
const K0 = 987_654_322;
const K1_CLIP = 'leanest-marker-id';
const K1_VIDEO = 987_654_323;

interface Shape {
  stmt: SQLite.Statement;
  /** per parameter: 0 the selector's value, 1 the cursor's first key value, 2 its second */
  slots: number[];
  /** column name -> index in a raw row */
  col: Record<string, number>;
}

async function shape(
  op: 'clips' | 'videos',
  selector: string,
  first: number,
  withCursor: boolean,
): Promise<Shape> {
  const k1 = op === 'clips' ? K1_CLIP : K1_VIDEO;
  const after: Key | undefined = withCursor ? [K0, k1] : undefined;
  const page = { first, ...(after ? { after } : {}) };
  const queries = await captured((d) =>
    op === 'clips'
      ? clipsPage(d, { selector: selector as 'game_id' | 'broadcaster_id', value: VALUE }, page)
      : videosPage(d, { selector: selector as 'game_id' | 'user_id', value: VALUE, sort: 'time' }, page),
  );
  const q = queries.at(-1);
  if (!q || queries.length !== 1) throw new Error(`${op} by ${selector}: expected one statement`);
  const slots = q.parameters.map((p) => {
    const i = [VALUE, K0, k1].indexOf(p as never);
    if (i < 0) throw new Error(`${op} by ${selector}: a parameter that is no request value: ${String(p)}`);
    return i;
  });
  const stmt = conn.prepare(q.sql).raw();
  const col: Record<string, number> = {};
  stmt.columns().forEach((c, i) => {
    col[c.name] = i;
  });
  return { stmt, slots, col };
}

const SELECTORS = { clips: ['broadcaster_id', 'game_id'], videos: ['user_id', 'game_id'] } as const;
/** `${op} ${selector} ${first} ${0|1}` -> its statement: 2 x 2 x 100 x 2, prepared before listening */
const shapes = new Map<string, Shape>();
for (const op of ['clips', 'videos'] as const)
  for (const selector of SELECTORS[op])
    for (let first = 1; first <= 100; first++)
      for (const c of [0, 1])
        shapes.set(`${op} ${selector} ${first} ${c}`, await shape(op, selector, first, c === 1));

// ---- the answers --------------------------------------------------------------------------------

const str = JSON.stringify;

function clipJson(r: unknown[], c: Record<string, number>): string {
  const id = str(r[c.id as number]).slice(1, -1);
  const b = r[c.broadcaster_id as number] as number;
  const cr = r[c.creator_id as number] as number;
  const video = r[c.video_id as number];
  const vod = r[c.vod_offset as number];
  return `{"id":"${id}","url":"${site}/clip/${id}","embed_url":"${site}/embed/clip?clip=${id}","broadcaster_id":"${b}","broadcaster_name":${users.get(b)?.[1] ?? '""'},"creator_id":"${cr}","creator_name":${users.get(cr)?.[1] ?? '""'},"video_id":"${video === null ? '' : video}","game_id":"${r[c.game_id as number]}","language":${str(r[c.language as number])},"title":${str(r[c.title as number])},"view_count":${r[c.view_count as number]},"created_at":"${rfc3339(r[c.created_at as number] as number)}","thumbnail_url":"${site}/media/clips/${id}/preview-480x272.jpg","duration":${(r[c.duration_ds as number] as number) / 10},"vod_offset":${vod === null ? 'null' : vod},"is_featured":${r[c.is_featured as number] === 1}}`;
}

function videoJson(r: unknown[], c: Record<string, number>): string {
  const id = r[c.id as number] as number;
  const u = r[c.user_id as number] as number;
  const owner = users.get(u);
  const login = owner?.[0] ?? '';
  const stream = r[c.stream_id as number];
  const muted = r[c.muted_segments as number] as string | null;
  const segments =
    muted === null
      ? 'null'
      : `[${(JSON.parse(muted) as { duration: number; offset: number }[]).map((s) => `{"duration":${s.duration},"offset":${s.offset}}`).join(',')}]`;
  return `{"id":"${id}","stream_id":${stream === null ? 'null' : `"${stream}"`},"user_id":"${u}","user_login":"${login}","user_name":${owner?.[1] ?? '""'},"title":${str(r[c.title as number])},"description":${str(r[c.description as number])},"created_at":"${rfc3339(r[c.created_at as number] as number)}","published_at":"${rfc3339(r[c.published_at as number] as number)}","url":"${site}/videos/${id}","thumbnail_url":"${site}/media/videos/${login}_${id}-%{width}x%{height}.jpg","viewable":"public","view_count":${r[c.view_count as number]},"language":${str(r[c.language as number])},"type":${str(r[c.type as number])},"duration":"${hms(r[c.duration_s as number] as number)}","muted_segments":${segments}}`;
}

/** The key columns of each listing's order (helixd's: CLIPS_ORDER, videoOrder('time')). */
const ORDER = { clips: ['view_count', 'id'], videos: ['created_at', 'id'] } as const;

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}
const error = (status: number, message: string): [number, string] => [
  status,
  `{"error":"","status":${status},"message":${str(message)}}`,
];

/** The status and body of the answer to `req`. */
function respond(req: IncomingMessage): [number, string] {
  if (!req.headers.authorization || !req.headers['client-id'])
    return error(401, 'Authorization and Client-Id are required');
  const url = req.url ?? '';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const op = path === '/helix/clips' ? 'clips' : path === '/helix/videos' ? 'videos' : undefined;
  if (!op) return error(404, 'Not Found');
  let selector: string | undefined;
  let value = 0;
  let first = 20;
  let cursor: string | undefined;
  for (const [k, v] of new URLSearchParams(q < 0 ? '' : url.slice(q + 1))) {
    if (k === 'first') first = Number(v);
    else if (k === 'after') cursor = v;
    else if ((SELECTORS[op] as readonly string[]).includes(k) && selector === undefined) {
      selector = k;
      value = Number(v);
    } else return error(400, `the leanest program does not serve "${k}" here`);
  }
  if (!selector || !Number.isSafeInteger(value)) return error(400, 'one numeric selector is needed');
  const s = shapes.get(`${op} ${selector} ${first} ${cursor === undefined ? 0 : 1}`);
  if (!s) return error(400, 'first: 1 to 100');
  const vals: unknown[] = [value, 0, 0];
  if (cursor !== undefined) {
    // Its own cursor, unsigned: the last row's sort value, a dot, its id.
    const dot = cursor.indexOf('.');
    vals[1] = Number(cursor.slice(0, dot));
    vals[2] = op === 'clips' ? cursor.slice(dot + 1) : Number(cursor.slice(dot + 1));
  }
  const rows = s.stmt.all(...s.slots.map((i) => vals[i])) as unknown[][];
  const more = rows.length > first;
  if (more) rows.pop();
  if (rows.length === 0 && selector === 'game_id' && !games.has(value))
    return error(404, 'The game was not found');
  const c = s.col;
  let body = '{"data":[';
  for (let i = 0; i < rows.length; i++) {
    if (i > 0) body += ',';
    body += op === 'clips' ? clipJson(rows[i] as unknown[], c) : videoJson(rows[i] as unknown[], c);
  }
  const last = rows.at(-1);
  const [k0, k1] = ORDER[op];
  body +=
    more && last
      ? `],"pagination":{"cursor":${str(`${last[c[k0] as number]}.${last[c[k1] as number]}`)}}}`
      : '],"pagination":{}}';
  return [200, body];
}

function answer(req: IncomingMessage, res: ServerResponse): void {
  const [status, body] = respond(req);
  send(res, status, body);
}

const server = createServer(answer);
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`listening ${typeof addr === 'object' && addr ? addr.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
