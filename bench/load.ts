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
  connections: number;
  seconds: number;
  /** a scratch directory for wrk's request list and script */
  scratch: string;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  /** latency percentiles in milliseconds */
  p50: number;
  p99: number;
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
    reqs[n] = wrk.format("GET", path, { ["Authorization"] = "Bearer " .. token })
  end
  i = offset or 0
end

function request()
  i = i + 1
  return reqs[(i % n) + 1]
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"errors":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
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
      env: { ...process.env, BENCH_REQUESTS: list },
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
    p50_us: number;
    p99_us: number;
    errors: number;
  };
  const seconds = s.duration_us / 1e6;
  return {
    requests: s.requests,
    seconds,
    rps: s.requests / seconds,
    p50: s.p50_us / 1000,
    p99: s.p99_us / 1000,
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
    headers: { authorization: `Bearer ${r.token}` },
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
  const here = dirname(fileURLToPath(import.meta.url));
  // From the project's root, where `--import tsx` resolves.
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(here, 'ceiling.ts'), sizesFile, String(workUs)],
    {
      cwd: dirname(here),
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const port = await new Promise<number>((res, rej) => {
    let out = '';
    child.stdout?.on('data', (d) => {
      out += d;
      const m = /listening (\d+)/.exec(out);
      if (m) res(Number(m[1]));
    });
    child.on('exit', (c) => rej(new Error(`the ceiling server exited (${c})`)));
  });
  return { base: `http://127.0.0.1:${port}`, child };
}
