// The real program for the reliability tests: `helixd serve` as a child process, its banner and
// its JSON log lines read back, and plain HTTP/1.1 requests whose connection handling the test
// chooses (a keep-alive agent, or a connection of its own).
import { type ChildProcess, spawn } from 'node:child_process';
import { type Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { cliDb, HELIXD_DEV_BIN, type StoreKind, type TempStore, tempStore } from '../helpers.ts';

/** Starting under a loaded machine compiles the sources first: generous, never a measurement. */
const START_TIMEOUT_MS = 60_000;

export interface LogLine {
  pid: number;
  reqId?: string;
  msg: string;
  res?: { statusCode: number };
}

export interface Served {
  child: ChildProcess;
  port: number;
  /** everything printed so far, stdout and stderr */
  out(): string;
  /** the JSON log lines printed so far */
  logs(): LogLine[];
  /** what the banner printed */
  clientId: string;
  clientSecret: string;
  appToken: string;
  /** the workers' pids under --workers (in the order printed) */
  workerPids: number[];
  /** the exit code (or signal) and when it came */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  /** resolves when `out()` matches `pattern` (rejects after `ms`) */
  waitFor(pattern: RegExp, ms?: number): Promise<RegExpExecArray>;
}

/** `helixd serve <args> --port 0 --log-level info` on a seeded store; resolves once it serves. */
export async function serve(args: readonly string[], workers = 1): Promise<Served> {
  const child = spawn(
    process.execPath,
    [HELIXD_DEV_BIN, 'serve', '--port', '0', '--log-level', 'info', '--users', '10', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  const waiters = new Set<() => void>();
  const take = (d: Buffer) => {
    out += d;
    for (const w of waiters) w();
  };
  child.stdout?.on('data', take);
  child.stderr?.on('data', take);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  const waitFor = (pattern: RegExp, ms = START_TIMEOUT_MS) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const m = pattern.exec(out);
        if (!m) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(m);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`no ${pattern} within ${ms} ms:\n${out}`));
      }, ms);
      waiters.add(check);
      exited.then(() => setImmediate(() => waiters.has(check) && reject(new Error(`exited:\n${out}`))));
      check();
    });
  const started = await waitFor(workers > 1 ? /worker processes \(pids ([\d, ]+)\)/ : /curl .*'\n/);
  const field = (name: string) => new RegExp(`${name}\\s+(\\w+)`).exec(out)?.[1] ?? '';
  return {
    child,
    port: Number(/serving http:\/\/[^:]+:(\d+)/.exec(out)?.[1]),
    out: () => out,
    logs: () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as LogLine),
    clientId: field('demo client id'),
    clientSecret: field('demo client secret'),
    appToken: field('app token'),
    workerPids: workers > 1 ? (started[1] as string).split(', ').map(Number) : [],
    exited,
    waitFor,
  };
}

/**
 * `serve(args)` on a fresh store of `kind` (`--db` is given here). `stop` ends the program (a
 * stopped one is continued first) and drops the store.
 */
export async function serveOnTempStore(
  kind: StoreKind,
  args: readonly string[],
  workers = 1,
): Promise<Served & { temp: TempStore; stop(): Promise<void> }> {
  const temp = await tempStore(kind);
  const db = cliDb({ url: temp.url, ...(temp.schema ? { schema: temp.schema } : {}) });
  let s: Served;
  try {
    s = await serve(['--db', db, ...args], workers);
  } catch (err) {
    await temp.drop();
    throw err;
  }
  return {
    ...s,
    temp,
    async stop() {
      if (s.child.exitCode === null && s.child.signalCode === null) {
        s.child.kill('SIGCONT');
        s.child.kill('SIGTERM');
        await s.exited;
      }
      await temp.drop();
    },
  };
}

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * One request to 127.0.0.1:`port`. `agent`: false (the default) opens a connection of its own,
 * closed after the answer; a keep-alive agent reuses its connections. Rejects with the socket
 * error (its `code`, and `reusedSocket`: whether the request went on a connection that had
 * already carried one) when no answer came.
 */
export function request(
  port: number,
  path: string,
  o: { method?: string; headers?: Record<string, string>; agent?: Agent | false; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: o.method ?? 'GET',
        headers: o.headers,
        agent: o.agent ?? false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('error', (err) => reject(Object.assign(err, { reusedSocket: req.reusedSocket })));
    req.end(o.body);
  });
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
