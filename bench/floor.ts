// The leanest program (bench/leanest.ts) beside helixd: which of the bench's query kinds it serves,
// its requests for them (the same URLs for first pages; for deep pages the same pages reached
// through its own cursors), and the check that its `data` is helixd's, byte for byte.
import type { BenchRequest } from './load.ts';
import type { QueryKind } from './queries.ts';

/** What the leanest program serves: per path, the selectors it takes (with `first` and `after`). */
const SERVED: Record<string, readonly string[]> = {
  '/clips': ['broadcaster_id', 'game_id'],
  '/videos': ['user_id', 'game_id'],
};

/** The leanest program serves this request as it is: one selector of its path, `first` at most. */
function servedAsIs(op: string, r: BenchRequest): boolean {
  const selectors = SERVED[op];
  if (!selectors) return false;
  const q = r.path.indexOf('?');
  const keys = [...new URLSearchParams(q < 0 ? '' : r.path.slice(q + 1)).keys()];
  return (
    keys.filter((k) => selectors.includes(k)).length === 1 &&
    keys.every((k) => k === 'first' || selectors.includes(k))
  );
}

interface Fetched {
  status: number;
  text: string;
}

async function fetchText(base: string, r: BenchRequest, clientId: string): Promise<Fetched> {
  const res = await fetch(base + r.path, {
    headers: { authorization: `Bearer ${r.token}`, 'client-id': clientId },
  });
  return { status: res.status, text: await res.text() };
}

/**
 * The bytes of `data` in an answer `{"data":[...],"pagination":{...}}`: all before `pagination`,
 * which comes last and whose cursor (helixd's signed, the leanest program's not) differs.
 */
function dataBytes(text: string): string {
  const i = text.lastIndexOf(',"pagination":');
  if (!text.startsWith('{"data":') || i < 0) throw new Error(`not a listing: ${text.slice(0, 120)}`);
  return text.slice(0, i);
}

/**
 * The leanest program's requests for kind `k`, or undefined when it does not serve the kind (other
 * operations, ids, filters). First pages: the same requests. Pages reached by a walk (a listing's
 * first and deep pages): its own walk from the same page 1, to the same pages.
 */
export async function leanRequests(
  k: QueryKind,
  leanBase: string,
  clientId: string,
): Promise<BenchRequest[] | undefined> {
  if (!k.walk) {
    if (k.cls !== 'first') return undefined;
    return k.requests.every((r) => servedAsIs(k.op, r)) ? k.requests : undefined;
  }
  if (!servedAsIs(k.op, k.walk.first)) return undefined;
  const { first, from, to } = k.walk;
  const out: BenchRequest[] = [];
  let r = first;
  for (let page = 1; page <= to; page++) {
    if (page >= from) out.push(r);
    if (page === to) break;
    const res = await fetchText(leanBase, r, clientId);
    if (res.status !== 200) throw new Error(`the leanest program's walk: ${r.path} answered ${res.status}`);
    const cursor = (JSON.parse(res.text) as { pagination: { cursor?: string } }).pagination.cursor;
    if (!cursor)
      throw new Error(`the leanest program's walk of ${first.path} ended at page ${page} of ${to}`);
    r = { path: `${first.path}&after=${encodeURIComponent(cursor)}`, token: first.token };
  }
  return out;
}

/**
 * Fetches every request of `helixd` and its counterpart in `lean` from both servers and throws,
 * naming the URL, on the first whose status or `data` bytes differ. Returns the pages compared.
 */
export async function compareData(
  kind: string,
  helixd: { base: string; requests: BenchRequest[] },
  lean: { base: string; requests: BenchRequest[] },
  clientId: string,
): Promise<number> {
  if (helixd.requests.length !== lean.requests.length)
    throw new Error(
      `${kind}: ${helixd.requests.length} helixd requests against ${lean.requests.length} of the leanest program`,
    );
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < helixd.requests.length; i = next++) {
      const hr = helixd.requests[i] as BenchRequest;
      const lr = lean.requests[i] as BenchRequest;
      const [h, l] = await Promise.all([
        fetchText(helixd.base, hr, clientId),
        fetchText(lean.base, lr, clientId),
      ]);
      const where = hr.path === lr.path ? hr.path : `${hr.path} (the leanest program: ${lr.path})`;
      if (h.status !== 200 || l.status !== 200)
        throw new Error(`${kind}: ${where}: helixd answered ${h.status}, the leanest program ${l.status}`);
      const hd = dataBytes(h.text);
      const ld = dataBytes(l.text);
      if (hd !== ld) {
        let at = 0;
        while (at < hd.length && hd[at] === ld[at]) at++;
        throw new Error(
          `${kind}: ${where}: the leanest program's data differs from helixd's at byte ${at}: helixd ...${hd.slice(Math.max(0, at - 60), at + 60)}... against ...${ld.slice(Math.max(0, at - 60), at + 60)}...`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return helixd.requests.length;
}
