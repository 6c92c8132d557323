// The load generator: closed-loop, fixed concurrency, fixed time, rotating through a list of
// requests. wrk (C, its own threads) when installed, so that the generator costs the machine as
// little as possible; autocannon (Node) otherwise.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One request of a mix: a path with its query string and the bearer token to send. */
export interface BenchRequest {
  path: string;
  token: string;
}

export interface LoadOptions {
  /** http://127.0.0.1:port */
  base: string;
  requests: readonly BenchRequest[];
  /** the Client-Id every request sends: every token of a run is the demo client's */
  clientId: string;
  connections: number;
  seconds: number;
  /** a scratch directory for wrk's request list and script */
  scratch: string;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  /** latency percentiles in milliseconds, as the requests had them */
  p50: number;
  p99: number;
  /** wrk only: its percentiles after its coordinated-omission correction (see WRK_SCRIPT) */
  corrected?: { p50: number; p99: number };
  /** the slowest request, in milliseconds (wrk only) */
  max?: number;
  /** responses that were not 2xx, plus socket errors and timeouts */
  errors: number;
}

export type Generator = 'wrk' | 'autocannon';

const WRK_PATHS = ['/usr/bin/wrk', '/usr/local/bin/wrk'];

export function wrkPath(): string | undefined {
  return WRK_PATHS.find((p) => existsSync(p));
}

export function chooseGenerator(forced?: string): Generator {
  if (forced === 'autocannon') return 'autocannon';
  if (forced === 'wrk' && !wrkPath()) throw new Error('--generator wrk: wrk is not installed');
  return wrkPath() ? 'wrk' : 'autocannon';
}

export function runLoad(gen: Generator, o: LoadOptions): Promise<LoadResult> {
  return gen === 'wrk' ? runWrk(o) : runAutocannon(o);
}

// Each wrk thread reads the request list once and walks it from its own offset, so the threads do
// not send the same URL at the same moment. done() prints one JSON line the harness parses.
const WRK_SCRIPT = `
local list = os.getenv("BENCH_REQUESTS")
local connections = tonumber(os.getenv("BENCH_CONNECTIONS"))
local client_id = os.getenv("BENCH_CLIENT_ID")
local reqs = {}
local n = 0
local threads = {}
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("offset", counter * 7919)
  table.insert(threads, thread)
end

function init(args)
  for line in io.lines(list) do
    local tab = string.find(line, "\\t", 1, true)
    local path = string.sub(line, 1, tab - 1)
    local token = string.sub(line, tab + 1)
    n = n + 1
    reqs[n] = wrk.format("GET", path, { ["Authorization"] = "Bearer " .. token, ["Client-Id"] = client_id })
  end
  i = offset or 0
end

function request()
  i = i + 1
  return reqs[(i % n) + 1]
end

-- wrk "corrects" its latency histogram for coordinated omission before done() sees it
-- (stats_correct in wrk's src/stats.c): with E = duration / (requests per connection), every
-- sample of L >= 2E adds one synthetic sample at each of L-E, L-2E, ... while above E. That models
-- an open-loop client at a fixed rate; this load is a closed loop, and a few slow requests (the
-- first one of each connection, docs/perf/2026-11-22-third-session.md) became a p99 of hundreds of
-- ms that no request had: a packet capture of the same runs agrees with the undone figures, not
-- with wrk's. The correction is undone exactly: above E, corrected[m] = raw[m] + raw[m+E] +
-- raw[m+2E] + ..., so
-- raw[m] = corrected[m] - corrected[m+E]. Both forms are reported.
function raw_latency(summary, latency)
  -- latency(i): the i-th non-empty bucket of the histogram, lowest first, as its value (us) and
  -- its count
  local values, count = {}, {}
  for i = 1, #latency do
    local v, c = latency(i)
    values[i] = v
    count[v] = c
  end
  local per = math.floor(summary.requests / connections)
  local e = per > 0 and math.floor(summary.duration / per) or math.huge
  local total = 0
  -- lowest first, so count[v + e] is still the corrected count when count[v] is undone
  for _, v in ipairs(values) do
    if v > e then count[v] = count[v] - (count[v + e] or 0) end
  end
  for _, v in ipairs(values) do total = total + count[v] end
  local function percentile(p)
    -- the rank rule of wrk's stats_percentile
    local rank = math.floor((p / 100) * total + 0.5 + 0.5)
    local seen = 0
    for _, v in ipairs(values) do
      seen = seen + count[v]
      if seen >= rank then return v end
    end
    return values[#values] or 0
  end
  return total, percentile(50), percentile(99)
end

function done(summary, latency, requests)
  local e = summary.errors
  local samples, p50, p99 = raw_latency(summary, latency)
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"samples":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,"p50_corrected_us":%d,"p99_corrected_us":%d,"errors":%d}\\n',
    summary.requests, summary.duration, samples, p50, p99, latency.max,
    latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.status + e.timeout))
end
`;

async function runWrk(o: LoadOptions): Promise<LoadResult> {
  const list = join(o.scratch, 'requests.tsv');
  const script = join(o.scratch, 'rotate.lua');
  await writeFile(list, o.requests.map((r) => `${r.path}\t${r.token}\n`).join(''));
  await writeFile(script, WRK_SCRIPT);
  const args = [
    '-t',
    String(Math.min(2, o.connections)),
    '-c',
    String(o.connections),
    '-d',
    `${o.seconds}s`,
    '--timeout',
    '5s',
    '-s',
    script,
    o.base,
  ];
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(wrkPath() as string, args, {
      env: {
        ...process.env,
        BENCH_REQUESTS: list,
        BENCH_CONNECTIONS: String(o.connections),
        BENCH_CLIENT_ID: o.clientId,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`wrk exited ${code}: ${stderr.trim()}`)),
    );
  });
  const line = out
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{"requests"'));
  if (!line) throw new Error(`wrk printed no summary:\n${out}`);
  const s = JSON.parse(line) as {
    requests: number;
    duration_us: number;
    samples: number;
    p50_us: number;
    p99_us: number;
    max_us: number;
    p50_corrected_us: number;
    p99_corrected_us: number;
    errors: number;
  };
  // Undoing the correction must give back one sample per request that finished in time; anything
  // else means this wrk corrects differently, and its raw figures would be wrong.
  if (s.requests > 0 && Math.abs(s.samples - s.requests) > s.errors)
    throw new Error(
      `wrk: ${s.samples} latency samples for ${s.requests} requests; cannot undo its correction`,
    );
  const seconds = s.duration_us / 1e6;
  return {
    requests: s.requests,
    seconds,
    rps: s.requests / seconds,
    p50: s.p50_us / 1000,
    p99: s.p99_us / 1000,
    corrected: { p50: s.p50_corrected_us / 1000, p99: s.p99_corrected_us / 1000 },
    max: s.max_us / 1000,
    errors: s.errors,
  };
}

type Autocannon = (o: {
  url: string;
  connections: number;
  duration: number;
  timeout: number;
  requests: { method: 'GET'; path: string; headers: Record<string, string> }[];
}) => Promise<{
  duration: number;
  requests: { total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}>;

async function runAutocannon(o: LoadOptions): Promise<LoadResult> {
  // autocannon ships no types; the little of its API used here is declared below.
  const name = 'autocannon';
  const { default: autocannon } = (await import(name)) as { default: Autocannon };
  // Each connection walks the list from the start; a shuffled, long list keeps them apart.
  const requests = o.requests.map((r) => ({
    method: 'GET' as const,
    path: r.path,
    headers: { authorization: `Bearer ${r.token}`, 'client-id': o.clientId },
  }));
  const result = await autocannon({
    url: o.base,
    connections: o.connections,
    duration: o.seconds,
    requests,
    timeout: 5,
  });
  const seconds = result.duration;
  return {
    requests: result.requests.total,
    seconds,
    rps: result.requests.total / seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors + result.timeouts,
  };
}

export interface Ceiling {
  /** http://127.0.0.1:port */
  base: string;
  child: ChildProcess;
}

/**
 * Starts the ceiling server (bench/ceiling.ts) in its own process, answering the paths of
 * `sizesFile`, each after `workUs` microseconds of busy CPU (bench/tail.ts); resolves once it listens.
 */
export async function startCeiling(sizesFile: string, workUs = 0): Promise<Ceiling> {
  return startScript('ceiling.ts', [sizesFile, String(workUs)], 'the ceiling server');
}

/**
 * The leanest program (bench/leanest.ts) over the SQLite file `file`, writing links under `siteUrl`
 * as helixd does: its own process, like the ceiling's.
 */
export async function startLeanest(file: string, siteUrl: string): Promise<Ceiling> {
  return startScript('leanest.ts', [file, siteUrl], 'the leanest program');
}

/** A bench/ script that prints `listening <port>` once it serves. */
async function startScript(script: string, scriptArgs: string[], what: string): Promise<Ceiling> {
  const here = dirname(fileURLToPath(import.meta.url));
  // From the project's root, where `--import tsx` resolves.
  const child = spawn(process.execPath, ['--import', 'tsx', join(here, script), ...scriptArgs], {
    cwd: dirname(here),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((res, rej) => {
    let out = '';
    child.stdout?.on('data', (d) => {
      out += d;
      const m = /listening (\d+)/.exec(out);
      if (m) res(Number(m[1]));
    });
    child.on('exit', (c) => rej(new Error(`${what} exited (${c})`)));
  });
  return { base: `http://127.0.0.1:${port}`, child };
}
