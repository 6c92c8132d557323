// `npm run bench`: helixd under load on a large store, against the ceiling of its platform and the
// leanest program that answers the same listings (bench/leanest.ts), in one run. See bench/README.md for what it measures and the figures it gave.
//
//   npm run bench                        100,000 users (1M clips), 10 s per query kind, SQLite
//   npm run bench -- --quick             2,000 users, 2 s per query kind: checks the harness (~5 min)
//   npm run bench -- --db postgres://... the same against PostgreSQL (seeded when empty)
//   npm run bench -- --workers 2         also helixd under --workers 2, beside one process (reported apart)
//   other flags: --users N --seed N --seconds N --warmup N --connections N --generator wrk|autocannon
//                --only <path> (repeatable) --profile (CPU profile of helixd, summarised at the end)
//                --rounds N (in-process rounds per query kind, 5; --quick 3)
//                --turns N (rounds of two runs in turn: helixd and the leanest program on a kind
//                it serves, a deep kind and its first pages; 3, --quick 1: the budget judges the
//                medians)
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { sizesFor } from '../src/seed/generate.ts';
import { readSeedInfo } from '../src/seed/index.ts';
import { isPostgresUrl, maskPassword, openStore, type Store } from '../src/store/db.ts';
import {
  BIN,
  freePort,
  procStatus,
  ROOT,
  runTimed,
  startHelixd,
  stopChild,
  threadCpuUs,
  waitReady,
} from './child.ts';
import { compareData, leanRequests } from './floor.ts';
import { benchTokens, median, printHelp } from './harness.ts';
import { measureInProcess } from './inprocess.ts';
import {
  type BenchRequest,
  chooseGenerator,
  type LoadResult,
  runLoad,
  startCeiling,
  startLeanest,
} from './load.ts';
import { mainProfile, summariseProfile } from './profile.ts';
import { getJson, type MixContext, OPERATIONS, type QueryKind } from './queries.ts';
import {
  budgetLines,
  budgetText,
  deepVsFirst,
  floorTable,
  loadTable,
  mb,
  type Row,
  workersTable,
  workTable,
} from './tables.ts';

/** Bench data is generated relative to a fixed day, so a kept store stays the same store. */
const ANCHOR_ISO = '2026-11-21T00:00:00Z';
/** helixd's default site URL (src/config.ts), for the leanest program's links when none is set */
const SITE_URL = 'https://streams.example.com';

// ---- options -------------------------------------------------------------------------------------

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    db: { type: 'string' },
    users: { type: 'string' },
    seed: { type: 'string', default: '1' },
    seconds: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string', default: '64' },
    generator: { type: 'string' },
    only: { type: 'string', multiple: true },
    profile: { type: 'boolean', default: false },
    workers: { type: 'string', default: '1' },
    rounds: { type: 'string' },
    turns: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});

if (args.help) printHelp(import.meta.url);

const quick = args.quick;
const users = Number(args.users ?? (quick ? 2000 : 100_000));
const seed = Number(args.seed);
const seconds = Number(args.seconds ?? (quick ? 2 : 10));
const warmup = Number(args.warmup ?? 1);
const connections = Number(args.connections);
const walkPages = quick ? 60 : 500;
const spread = quick ? 200 : 1000;
/** `--workers N`: helixd under `serve --workers N` too, run beside one process (N = 1: not run). */
const workers = Number(args.workers);
/** In process (bench/inprocess.ts): rounds per query kind, and requests per round. */
const rounds = Number(args.rounds ?? (quick ? 3 : 5));
const perRound = quick ? 50 : 200;
/**
 * Two runs compared are taken in turn, in rounds of `seconds` each, the order turning each round
 * (A B, B A, A B ...): helixd and the leanest program on a kind it serves, and helixd on a deep
 * kind and on the first pages of the same listing. One pair of runs moves by 10-40% with the
 * machine's load between them (a kind came out at 0.90 x the leanest program's CPU in one run and
 * 1.79 x in the next; a deep kind at 0.79 x its first pages in one run and 1.75 x in another,
 * minutes apart); the budget's lines judge the rounds' medians, and the tables print each round.
 */
const turns = Number(args.turns ?? (quick ? 1 : 3));
for (const [k, v] of Object.entries({
  users,
  seed,
  seconds,
  warmup,
  connections,
  workers,
  rounds,
  turns,
}))
  if (!Number.isInteger(v) || v < 0) throw new Error(`--${k}: a whole number is needed`);
if (workers < 1 || rounds < 1 || turns < 1) throw new Error('--workers, --rounds and --turns: 1 or more');

/** One load run of a server, with the CPU its main thread used for it, µs per request. */
interface Timed {
  r: LoadResult;
  cpu: number | undefined;
}

/** `turns` rounds of runs `a` and `b` in turn (A B, B A, A B ...): each one's runs, in order. */
async function inTurn(a: () => Promise<Timed>, b: () => Promise<Timed>): Promise<[Timed[], Timed[]]> {
  const as: Timed[] = [];
  const bs: Timed[] = [];
  for (let i = 0; i < turns; i++) {
    if (i % 2 === 0) {
      as.push(await a());
      bs.push(await b());
    } else {
      bs.push(await b());
      as.push(await a());
    }
  }
  return [as, bs];
}

/** Round by round, the CPU per request of `as` over that of `bs`. */
const cpuByRound = (as: readonly Timed[], bs: readonly Timed[]) =>
  as.flatMap((x, i) => {
    const y = bs[i]?.cpu;
    return x.cpu !== undefined && y ? [x.cpu / y] : [];
  });

/** Of rounds taken in turn: the run of median req/s, with the median CPU per request of them all. */
function medianRound(runs: readonly Timed[]): Timed {
  const byRps = [...runs].sort((a, b) => a.r.rps - b.r.rps);
  const mid = byRps[Math.floor((byRps.length - 1) / 2)] as Timed;
  const cpus = runs.flatMap((x) => (x.cpu === undefined ? [] : [x.cpu]));
  return { r: mid.r, cpu: cpus.length ? median(cpus) : undefined };
}

const say = (line = '') => process.stdout.write(`${line}\n`);
const fmt = (n: number, digits = 1) => n.toFixed(digits);

// ---- the store -----------------------------------------------------------------------------------

interface SeedRecord {
  seconds: number;
  /** CPU time (user + system) of the seed process, last sampled just before it exited */
  cpuSeconds?: number;
  /** load average of the machine while seeding (other work slows a wall-clock figure) */
  loadavg?: number[];
  peakRss?: number;
  date: string;
  users: number;
  seed: number;
}

async function prepareStore(): Promise<{ url: string; seedRun: SeedRecord | undefined; reused: boolean }> {
  const pg = args.db !== undefined && isPostgresUrl(args.db);
  const url = args.db ?? join(ROOT, 'bench', 'data', `sqlite-u${users}-s${seed}.db`);
  const record = pg ? undefined : `${url}.seed.json`;
  if (!pg) await mkdir(dirname(url), { recursive: true });

  const seedArgs = [BIN, 'seed', '--db', url, '--users', String(users), '--seed', String(seed)];
  seedArgs.push('--now', ANCHOR_ISO);
  const store = openStore({ url });
  let info: Awaited<ReturnType<typeof readSeedInfo>>;
  try {
    await runTimed(process.execPath, [BIN, 'migrate', '--db', url]);
    info = await readSeedInfo(store);
  } finally {
    await store.close();
  }
  if (info && (pg || (info.users === users && info.seed === seed && record && existsSync(record)))) {
    if (info.users !== users || info.seed !== seed)
      say(`note: the store holds seed ${info.seed} with ${info.users} users; using it as it is`);
    const kept = record ? (JSON.parse(await readFile(record, 'utf8')) as SeedRecord) : undefined;
    return { url, seedRun: kept, reused: true };
  }
  if (!pg) for (const f of [url, `${url}-wal`, `${url}-shm`]) rmSync(f, { force: true });
  say(`seeding ${pg ? maskPassword(url) : url}: ${users} users, seed ${seed} ...`);
  const run = await runTimed(process.execPath, seedArgs);
  const rec: SeedRecord = {
    seconds: run.seconds,
    ...(run.cpuSeconds !== undefined ? { cpuSeconds: run.cpuSeconds } : {}),
    loadavg: loadavg(),
    ...(run.peakRss !== undefined ? { peakRss: run.peakRss } : {}),
    date: new Date().toISOString(),
    users,
    seed,
  };
  if (record) await writeFile(record, `${JSON.stringify(rec, null, 2)}\n`);
  say(run.output.trim().split('\n')[0] ?? '');
  return { url, seedRun: rec, reused: false };
}

// ---- main ----------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const stamp = new Date()
    .toISOString()
    .replace(/:\d\d\.\d+Z$/, 'Z')
    .replace(':', '');
  const generator = chooseGenerator(args.generator);
  const resultsDir = join(ROOT, 'bench', 'results');
  await mkdir(resultsDir, { recursive: true });
  const scratch = await mkdtemp(join(tmpdir(), 'helixd-bench-'));
  say(
    `helixd bench ${quick ? '(quick) ' : ''}- ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), node ${process.version}`,
  );
  const loadAtStart = loadavg();
  say(
    `load average at start: ${loadAtStart.map((l) => fmt(l, 2)).join(' ')} (other work on the machine skews every figure)`,
  );
  say(
    `load generator: ${generator}${generator === 'wrk' ? '' : ' (wrk is not installed)'}; ${connections} connections, ${seconds} s per query kind, ${warmup} s warm-up`,
  );

  // 1. the store
  const { url, seedRun, reused } = await prepareStore();
  const store: Store = openStore({ url });
  const counts: Record<string, number> = {};
  for (const t of ['users', 'games', 'clips', 'videos', 'subscriptions', 'markers'] as const) {
    const r = await store.db
      .selectFrom(t)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    counts[t] = Number(r.n);
  }
  const live = await store.db
    .selectFrom('games')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('stream_count', '>', 0)
    .executeTakeFirstOrThrow();
  counts.games_live = Number(live.n);
  const info = await readSeedInfo(store);
  if (!info) throw new Error('the store holds no seed information');
  say(`store: ${store.location} (${store.dialect})`);
  say(
    `  ${Object.entries(counts)
      .map(([k, v]) => `${k} ${v.toLocaleString('en')}`)
      .join(', ')}`,
  );
  if (seedRun)
    say(
      `  seeding: ${fmt(seedRun.seconds)} s (CPU ${seedRun.cpuSeconds === undefined ? '?' : fmt(seedRun.cpuSeconds)} s), peak RSS ${mb(seedRun.peakRss)}${reused ? ` (kept store, seeded ${seedRun.date})` : ''}`,
    );
  else if (reused) say('  seeding: not measured (the store was already seeded)');

  // 2. tokens, minted straight into the store (the token command would start a process per user)
  const { appToken, tokenFor } = await benchTokens(store.db, info.demoClientId);

  // 3. helixd, timed from spawn to the first 200 from /readyz
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const profileDir = join(resultsDir, `profile-${stamp}`);
  const nodeFlags = args.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const serveArgs = [BIN, 'serve', '--db', url, '--port', String(port), '--host', '127.0.0.1'];
  serveArgs.push('--log-level', 'warn', '--rate-limit', '0', '--skip-seed');
  const spawnedAt = performance.now();
  const helixd = spawn(process.execPath, [...nodeFlags, ...serveArgs], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let helixdLog = '';
  const keepLog = (d: Buffer) => {
    helixdLog = (helixdLog + d.toString()).slice(-20_000);
  };
  helixd.stdout?.on('data', keepLog);
  helixd.stderr?.on('data', keepLog);
  let ceiling: ChildProcess | undefined;
  let leanest: ChildProcess | undefined;
  let helixdN: ChildProcess | undefined;
  let baseN: string | undefined;
  try {
    await waitReady(base, helixd, 60_000);
    const startupMs = performance.now() - spawnedAt;
    say(`helixd ready in ${fmt(startupMs, 0)} ms (pid ${helixd.pid}, ${base})`);
    const pid = helixd.pid as number;
    const rssSamples: number[] = [];
    const rssTimer = setInterval(() => {
      const v = procStatus(pid, 'VmRSS');
      if (v !== undefined) rssSamples.push(v);
    }, 1000);

    // 4. which operations exist, and their query mixes
    const ctx: MixContext = {
      base,
      db: store.db,
      anchor: info.anchor,
      appToken,
      clientId: info.demoClientId,
      tokenFor,
      walkPages,
      spread,
      log: say,
    };
    const kinds: QueryKind[] = [];
    const skipped: string[] = [];
    for (const op of OPERATIONS) {
      if (args.only && !args.only.includes(op.path)) continue;
      const probe = await getJson(base, await op.probe(ctx), info.demoClientId);
      // The unknown-path body says just "Not Found"; a 404 about a resource names it.
      if (probe.status === 404 && (probe.body as { message?: string }).message === 'Not Found') {
        say(`skip ${op.path}: not there yet (404)`);
        skipped.push(op.path);
        continue;
      }
      const started = performance.now();
      try {
        const built = await op.build(ctx);
        kinds.push(...built);
        say(`mix ${op.path}: ${built.length} query kinds in ${fmt((performance.now() - started) / 1000)} s`);
      } catch (err) {
        say(`skip ${op.path}: its mix could not be built: ${(err as Error).message}`);
        skipped.push(op.path);
      }
    }

    // 5. every request once: it must answer 200; its size is what the ceiling sends back
    const sizes: Record<string, number> = {};
    const rejected: string[] = [];
    for (const k of kinds) {
      const ok: BenchRequest[] = [];
      let bytes = 0;
      const queue = [...k.requests];
      const worker = async () => {
        for (let r = queue.shift(); r; r = queue.shift()) {
          const res = await getJson(base, r, info.demoClientId);
          if (res.status === 200) {
            ok.push(r);
            sizes[r.path] = res.bytes;
            bytes += res.bytes;
          } else if (rejected.length < 20 || !rejected.some((x) => x.startsWith(`${k.op} ${k.kind}`)))
            rejected.push(`${k.op} ${k.kind}: ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`);
        }
      };
      await Promise.all(Array.from({ length: 8 }, worker));
      if (ok.length < k.requests.length)
        say(
          `  ${k.op} ${k.kind}: ${k.requests.length - ok.length} of ${k.requests.length} requests not 200, left out`,
        );
      // keep the mix's order (the workers finish out of order)
      const okSet = new Set(ok);
      k.requests = k.requests.filter((r) => okSet.has(r));
      Object.assign(k, { meanBytes: ok.length ? bytes / ok.length : 0 });
    }
    for (const r of rejected.slice(0, 10)) say(`  rejected: ${r}`);
    const runnable = kinds.filter((k) => k.requests.length > 0);

    // 6. the ceiling, in its own process like helixd
    const sizesFile = join(scratch, 'sizes.json');
    await writeFile(sizesFile, JSON.stringify(sizes));
    const started = await startCeiling(sizesFile);
    ceiling = started.child;
    const ceilingBase = started.base;

    // 6b. the leanest program (bench/leanest.ts; SQLite only), on the kinds it serves, its data
    // checked byte for byte against helixd's on every page it is measured on
    const leanFor = new Map<QueryKind, BenchRequest[]>();
    let leanBase: string | undefined;
    if (store.dialect === 'sqlite') {
      const lean = await startLeanest(url, process.env.HELIXD_SITE_URL ?? SITE_URL);
      leanest = lean.child;
      leanBase = lean.base;
      let pages = 0;
      for (const k of runnable) {
        const lr = await leanRequests(k, lean.base, info.demoClientId);
        if (!lr) continue;
        pages += await compareData(
          `${k.op} ${k.kind}`,
          { base, requests: k.requests },
          { base: lean.base, requests: lr },
          info.demoClientId,
        );
        leanFor.set(k, lr);
      }
      say(
        `the leanest program (${lean.base.replace(/^http:\/\//, '')}): ${leanFor.size} query kinds, its data byte-identical to helixd's on all ${pages} pages`,
      );
    } else say('the leanest program: SQLite only, not run against this store');

    // 7. the load: per query kind, helixd (after a warm-up), the leanest program when it serves the
    // kind (after its own), and then the ceiling, interleaved; with --workers N, helixd under
    // --workers N after one process, against the same ceiling run
    if (workers > 1) {
      const w = await startHelixd(url, workers);
      helixdN = w.child;
      say(`helixd --workers ${workers} ready (${w.base})`);
      baseN = w.base;
    }
    say();
    say(`running ${runnable.length} query kinds ...`);
    const rows: Row[] = [];
    for (const k of runnable) {
      /** A load run of `requests` against `b`, for `s` seconds. */
      const loadOf = (b: string, requests: readonly BenchRequest[], s: number) =>
        runLoad(generator, {
          base: b,
          requests,
          clientId: info.demoClientId,
          connections,
          seconds: s,
          scratch,
        });
      const load = (b: string, s: number) => loadOf(b, k.requests, s);
      /** A load run, with the CPU its server's main thread used for it, µs per request. */
      const timedOf = async (
        b: string,
        requests: readonly BenchRequest[],
        serverPid: number | undefined,
      ): Promise<Timed> => {
        const c0 = serverPid === undefined ? undefined : threadCpuUs(serverPid);
        const r = await loadOf(b, requests, seconds);
        const c1 = serverPid === undefined ? undefined : threadCpuUs(serverPid);
        const cpu = c0 !== undefined && c1 !== undefined && r.requests ? (c1 - c0) / r.requests : undefined;
        return { r, cpu };
      };
      const timed = (b: string, serverPid: number | undefined) => timedOf(b, k.requests, serverPid);
      // Quick mode warms up once per operation, to stay within its time.
      const firstOfOp = rows.at(-1)?.op !== k.op;
      const warm = warmup > 0 && (!quick || firstOfOp);
      if (warm) await load(base, warmup);
      const leanReqs = leanFor.get(k);
      let h: Timed;
      let l: Timed | undefined;
      /** helixd's CPU per request over the leanest program's, round by round */
      let byRound: number[] | undefined;
      let rpsByRound: number[] | undefined;
      if (leanReqs && leanBase && leanest) {
        const lb = leanBase;
        const leanPid = leanest.pid;
        if (warm) await loadOf(lb, leanReqs, warmup);
        const [hs, ls] = await inTurn(
          () => timed(base, pid),
          () => timedOf(lb, leanReqs, leanPid),
        );
        h = medianRound(hs);
        l = medianRound(ls);
        byRound = cpuByRound(hs, ls);
        rpsByRound = hs.flatMap((x, i) => {
          const y = ls[i]?.r.rps;
          return y ? [x.r.rps / y] : [];
        });
      } else h = await timed(base, pid);
      // A deep kind and the first pages of its listing, helixd's, in turn (the deep-page lines).
      const first =
        k.cls === 'deep' ? runnable.find((x) => x.op === k.op && x.kind === k.baseline) : undefined;
      let deepPair: Row['deepPair'];
      if (first) {
        const [ds, fs] = await inTurn(
          () => timed(base, pid),
          () => timedOf(base, first.requests, pid),
        );
        const d = medianRound(ds);
        const f = medianRound(fs);
        deepPair = {
          first: first.kind,
          deep: d.r,
          firstPages: f.r,
          ...(d.cpu !== undefined ? { deepCpu: d.cpu } : {}),
          ...(f.cpu !== undefined ? { firstCpu: f.cpu } : {}),
          cpuByRound: cpuByRound(ds, fs),
        };
      }
      let n: LoadResult | undefined;
      if (baseN) {
        if (warm) await load(baseN, warmup);
        n = await load(baseN, seconds);
      }
      const c = await timed(ceilingBase, ceiling.pid);
      const row: Row = {
        op: k.op,
        kind: k.kind,
        cls: k.cls,
        ...(k.baseline ? { baseline: k.baseline } : {}),
        ...(k.note ? { note: k.note } : {}),
        urls: k.requests.length,
        meanBytes: (k as QueryKind & { meanBytes: number }).meanBytes,
        helixd: h.r,
        ceiling: c.r,
        ratio: h.r.rps / c.r.rps,
        ...(h.cpu !== undefined ? { helixdCpu: h.cpu } : {}),
        ...(c.cpu !== undefined ? { ceilingCpu: c.cpu } : {}),
        ...(n ? { workers: { n: workers, helixd: n, ratio: n.rps / c.r.rps } } : {}),
        ...(l ? { leanest: l.r, ...(l.cpu !== undefined ? { leanestCpu: l.cpu } : {}) } : {}),
        ...(byRound?.length ? { leanestCpuByRound: byRound } : {}),
        ...(rpsByRound?.length ? { leanestRpsByRound: rpsByRound } : {}),
        ...(deepPair ? { deepPair } : {}),
      };
      rows.push(row);
      say(
        `  ${k.op} ${k.kind}: ${fmt(h.r.rps, 0)} req/s, p50 ${fmt(h.r.p50, 2)} ms, p99 ${fmt(h.r.p99, 2)} ms${h.r.errors ? `, ${h.r.errors} errors` : ''}${n ? `; --workers ${workers} ${fmt(n.rps, 0)} req/s` : ''}${l ? `; leanest ${fmt(l.r.rps, 0)} req/s (${fmt((h.r.rps / l.r.rps) * 100, 0)}%), p99 ${fmt(l.r.p99, 2)} ms` : ''}; ceiling ${fmt(c.r.rps, 0)} req/s (${fmt(row.ratio * 100, 0)}%)`,
      );
      if (deepPair?.deepCpu && deepPair.firstCpu)
        say(
          `    in turn with ${deepPair.first}: ${fmt(deepPair.deepCpu, 0)} µs against ${fmt(deepPair.firstCpu, 0)} µs a request (${fmt(median(deepPair.cpuByRound), 2)} x, the rounds' median; by round ${deepPair.cpuByRound.map((x) => fmt(x, 2)).join(' ')}), p50 ${fmt(deepPair.deep.p50, 2)} against ${fmt(deepPair.firstPages.p50, 2)} ms`,
        );
    }
    clearInterval(rssTimer);
    const peakRss = procStatus(pid, 'VmHWM');
    await stopChild(helixd);
    if (helixdN) await stopChild(helixdN);
    await stopChild(ceiling);
    if (leanest) await stopChild(leanest);

    // 8. the work per request, in process, without HTTP, once the servers are stopped
    say();
    say(`in process: ${rounds} rounds of ${perRound} requests per query kind, ${connections} at a time ...`);
    const inProcessStarted = performance.now();
    const figures = await measureInProcess({
      url,
      clientId: info.demoClientId,
      kinds: runnable.map((k) => ({ key: `${k.op} ${k.kind}`, requests: k.requests })),
      sizes,
      rounds,
      perRound,
      inFlight: connections,
      log: say,
    });
    for (const r of rows) {
      const f = figures.get(`${r.op} ${r.kind}`);
      if (f) r.inProcess = f;
    }
    say(`  done in ${fmt((performance.now() - inProcessStarted) / 1000)} s`);

    // 9. the report
    const dvf = deepVsFirst(rows);
    const budget = budgetLines({
      rows,
      connections,
      peakRss,
      clips: counts.clips ?? 0,
      seed: seedRun ? { ...seedRun, reused } : undefined,
    });

    say();
    say(`helixd, one process (${base.replace(/^http:\/\//, '')}), against the ceiling:`);
    say(loadTable(rows));
    if (generator === 'wrk')
      say(
        "p50/p99/max: the latencies the requests had; wrk p99: wrk's own figure, after its coordinated-omission correction (bench/README.md)",
      );
    if (rows.some((r) => r.leanest)) {
      say();
      say(
        'helixd against the leanest program (bench/leanest.ts: the same rows and data bytes, run in turn with helixd):',
      );
      say(floorTable(rows));
      say(
        `req/s, p50, p99: of each one's round of median req/s, of ${turns} rounds of the two in turn; CPU µs (of the main thread under the load, per request): the rounds' median; ratio, CPU ratio: helixd over the leanest program, the median of the rounds' own ratios; by round: the CPU ratio of each round`,
      );
    }
    say();
    say('the work per request (µs of CPU; bench/README.md, "The work per request"):');
    say(workTable(rows));
    say(
      `CPU µs / ceil CPU µs: of helixd's / the ceiling's main thread under the load above, per request; inject µs: helixd's app in this process, without HTTP; transport µs: the ceiling's handler the same way; inject min-max: its rounds; work µs = inject - transport (medians of ${rounds} rounds); ${'25%'} allows: 1e6 / (0.25 x ceiling req/s) - ceil CPU µs; bound: the highest ratio one process could reach with this work; CPU bound: the same at the CPU µs it had${store.dialect === 'postgres' ? "; PostgreSQL: the server's CPU is not in inject µs" : ''}`,
    );
    say();
    say(
      'cache on: helixd has no response cache, so there is no table with one (src/store/cache.ts keeps tokens and user names only; they are on in every figure here); the budget is measured cold',
    );
    if (workers > 1) {
      say();
      say(
        `helixd --workers ${workers}, run between one process and the ceiling (reported apart: the budget lines are one process's):`,
      );
      say(workersTable(rows));
    }
    say();
    if (dvf.length) {
      say(
        `deep pages against the first pages of the same listing (p50: of ${turns} rounds of the two in turn; the work in process):`,
      );
      for (const d of dvf)
        say(
          `  ${d.op} ${d.deep} ${fmt(d.deepP50, 2)} ms vs ${d.first} ${fmt(d.firstP50, 2)} ms: ${fmt(d.factor, 2)} x${d.deepWork !== undefined && d.firstWork !== undefined ? `; in process ${fmt(d.deepWork, 0)} µs vs ${fmt(d.firstWork, 0)} µs: ${fmt(d.deepWork / d.firstWork, 2)} x` : ''}`,
        );
      say();
    }
    say(`peak RSS of helixd: ${mb(peakRss)}; start-up to ready: ${fmt(startupMs, 0)} ms`);
    say(
      `load average at the end: ${loadavg()
        .map((l) => fmt(l, 2))
        .join(' ')}`,
    );
    for (const s of skipped) say(`not measured: ${s} (not there yet or its mix failed)`);
    say();
    say(`budget (one helixd process, ${store.dialect}, cold: no response cache; distinct keys):`);
    for (const l of budgetText(budget)) say(l);

    const report = {
      date: new Date().toISOString(),
      quick,
      machine: {
        cpus: cpus().length,
        model: cpus()[0]?.model,
        node: process.version,
        loadavgAtStart: loadAtStart,
        loadavgAtEnd: loadavg(),
      },
      generator,
      connections,
      secondsPerKind: seconds,
      workers,
      inProcess: { rounds, perRound },
      turns,
      store: {
        dialect: store.dialect,
        location: store.location,
        seed: info.seed,
        users: info.users,
        counts,
        expected: sizesFor(info.users),
      },
      seeding: seedRun ? { ...seedRun, reused } : null,
      startupMs,
      peakRssBytes: peakRss ?? null,
      rssSamplesBytes: rssSamples,
      skipped,
      results: rows,
      deepVsFirst: dvf,
      budget,
    };
    const out = join(
      resultsDir,
      `${stamp}${quick ? '-quick' : ''}-${store.dialect}.json`.replace(/[^\w.-]/g, '-'),
    );
    await writeFile(out, `${JSON.stringify(report, null, 2)}\n`);
    say();
    say(`written: ${out.replace(`${ROOT}/`, '')}`);

    if (args.profile) {
      const main = mainProfile(profileDir);
      if (main) {
        say();
        for (const l of summariseProfile(main)) say(l);
      } else say('no CPU profile was written');
    }
  } catch (err) {
    if (helixdLog) process.stderr.write(`helixd's last output:\n${helixdLog}\n`);
    throw err;
  } finally {
    await stopChild(helixd);
    if (helixdN) await stopChild(helixdN);
    if (ceiling) await stopChild(ceiling);
    if (leanest) await stopChild(leanest);
    await store.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
