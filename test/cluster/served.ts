// `helixd serve` as the cluster tests start it (test/support/process.ts), on a seeded store with
// its JSON log lines at info level, and the requests spread over its workers: each request on a
// connection of its own, the pid that answered each read back from the log.
import { type Answer, request } from '../support/http.ts';
import { type HelixdProcess, serveHelixd } from '../support/process.ts';
import { cliDb, type StoreKind, type TempStore, tempStore } from '../support/stores.ts';

export type Served = HelixdProcess;

/**
 * `helixd serve --port 0 --log-level info --users 10 <args>`; resolves once it serves (under
 * `workers` > 1, once the worker pids are printed).
 */
export function serve(args: readonly string[], workers = 1): Promise<Served> {
  return serveHelixd(['--log-level', 'info', '--users', '10', ...args], {
    ready: workers > 1 ? 'workers' : 'banner',
  });
}

/**
 * `serve(args)` on a fresh store of `kind` (`--db` is given here). `stop` ends the program (a
 * stopped one is continued first) and drops the store.
 */
export async function serveOnTempStore(
  kind: StoreKind,
  args: readonly string[],
  workers = 1,
): Promise<Served & { temp: TempStore }> {
  const temp = await tempStore(kind);
  const db = cliDb({ url: temp.url, ...(temp.schema ? { schema: temp.schema } : {}) });
  let s: Served;
  try {
    s = await serve(['--db', db, ...args], workers);
  } catch (err) {
    await temp.drop();
    throw err;
  }
  s.onStop(() => temp.drop());
  return Object.assign(s, { temp });
}

/** The pids that answered the requests whose ids match `ids`, read from the log (waits for the lines). */
export async function pidsOf(s: Served, ids: RegExp, count: number): Promise<Map<string, number>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const byId = new Map<string, number>();
    for (const l of s.logs())
      if (l.msg === 'request completed' && l.reqId !== undefined && ids.test(l.reqId))
        byId.set(l.reqId, l.pid);
    if (byId.size >= count || Date.now() > deadline) return byId;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Requests on connections of their own: the primary hands each new one to the next worker. */
const FRESH = 6;

let batch = 0;
/** FRESH requests, each on a new connection, and the pid that answered each. */
export async function spread(
  s: Served,
  path: string,
  o: { method?: string; headers?: Record<string, string> } = {},
): Promise<{ answers: Answer[]; pids: Set<number> }> {
  const tag = `b${++batch}-`;
  const answers = await Promise.all(
    Array.from({ length: FRESH }, (_, i) =>
      request(s.port, path, { ...o, headers: { ...o.headers, 'x-request-id': `${tag}${i}` } }),
    ),
  );
  const pids = await pidsOf(s, new RegExp(`^${tag}`), FRESH);
  return { answers, pids: new Set(pids.values()) };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
