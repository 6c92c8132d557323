// `npm run bench`: helixd under load on a large store, against the ceiling of its platform, in one
// run. See bench/README.md for what it measures and the figures it gave.
//
//   npm run bench                        100,000 users (1M clips), 10 s per query kind, SQLite
//   npm run bench -- --quick             2,000 users, 2 s per query kind: checks the harness (< 3 min)
//   npm run bench -- --db postgres://... the same against PostgreSQL (seeded when empty)
//   other flags: --users N --seed N --seconds N --warmup N --connections N --generator wrk|autocannon
//                --only <path> (repeatable) --profile (CPU profile of helixd, summarised at the end)
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { sizesFor } from '../src/seed/generate.ts';
import { readSeedInfo } from '../src/seed/index.ts';
import { isPostgresUrl, maskPassword, openStore, type Store } from '../src/store/db.ts';
import { freePort, procStatus, ROOT, runTimed, stopChild, waitReady } from './child.ts';
import { benchTokens, printHelp } from './harness.ts';
import { type BenchRequest, chooseGenerator, type LoadResult, runLoad, startCeiling } from './load.ts';
import { getJson, type MixContext, OPERATIONS, type QueryKind } from './queries.ts';

const BIN = join(ROOT, 'bin', 'helixd.js');
/** Bench data is generated relative to a fixed day, so a kept store stays the same store. */
const ANCHOR_ISO = '2026-11-21T00:00:00Z';

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
for (const [k, v] of Object.entries({ users, seed, seconds, warmup, connections }))
  if (!Number.isInteger(v) || v < 0) throw new Error(`--${k}: a whole number is needed`);

const say = (line = '') => process.stdout.write(`${line}\n`);

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

// ---- the report ----------------------------------------------------------------------------------

interface Row {
  op: string;
  kind: string;
  cls: QueryKind['cls'];
  baseline?: string;
  note?: string;
  urls: number;
  meanBytes: number;
  helixd: LoadResult;
  ceiling: LoadResult;
  /** helixd req/s over the ceiling's */
  ratio: number;
}

const fmt = (n: number, digits = 1) => n.toFixed(digits);
const mb = (bytes: number | undefined) => (bytes === undefined ? 'n/a' : `${fmt(bytes / 2 ** 20, 0)} MB`);

function table(rows: Row[]): string {
  const head = [
    'operation',
    'query kind',
    'urls',
    'bytes',
    'req/s',
    'p50 ms',
    'p99 ms',
    'max ms',
    'wrk p99',
    'err',
    'ceiling req/s',
    'ceil p50',
    'ceil p99',
    'ratio',
  ];
  const body = rows.map((r) => [
    r.op,
    r.kind + (r.note ? ` (${r.note})` : ''),
    String(r.urls),
    String(Math.round(r.meanBytes)),
    fmt(r.helixd.rps, 0),
    fmt(r.helixd.p50, 2),
    fmt(r.helixd.p99, 2),
    r.helixd.max === undefined ? '' : fmt(r.helixd.max, 1),
    r.helixd.corrected === undefined ? '' : fmt(r.helixd.corrected.p99, 2),
    String(r.helixd.errors),
    fmt(r.ceiling.rps, 0),
    fmt(r.ceiling.p50, 2),
    fmt(r.ceiling.p99, 2),
    `${fmt(r.ratio * 100, 0)}%`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] as string).length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

interface DeepVsFirst {
  op: string;
  deep: string;
  first: string;
  deepP50: number;
  firstP50: number;
  factor: number;
}

function deepVsFirst(rows: Row[]): DeepVsFirst[] {
  const out: DeepVsFirst[] = [];
  for (const d of rows.filter((r) => r.cls === 'deep')) {
    const f = rows.find((r) => r.op === d.op && r.kind === d.baseline);
    if (!f) continue;
    out.push({
      op: d.op,
      deep: d.kind,
      first: f.kind,
      deepP50: d.helixd.p50,
      firstP50: f.helixd.p50,
      factor: d.helixd.p50 / f.helixd.p50,
    });
  }
  return out;
}

interface BudgetLine {
  line: string;
  value: string;
  met: boolean | null;
}

// ---- CPU profile summary -----------------------------------------------------------------------

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

function summariseProfile(file: string, top = 25): string[] {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: ProfileNode[];
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  const byPackage = new Map<string, number>();
  let total = 0;
  prof.samples.forEach((id, i) => {
    const dt = prof.timeDeltas[i] ?? 0;
    const n = byId.get(id);
    if (!n) return;
    total += dt;
    const { functionName, url, lineNumber } = n.callFrame;
    const where = url.replace(/^file:\/\//, '').replace(`${ROOT}/`, '');
    const key = `${functionName || '(anonymous)'} ${where ? `${where}:${lineNumber + 1}` : ''}`.trim();
    self.set(key, (self.get(key) ?? 0) + dt);
    const pkg =
      /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(where)?.[1] ??
      (where.startsWith('src/')
        ? where
        : where.startsWith('node:')
          ? 'node internals'
          : where || functionName);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + dt);
  });
  const pct = (v: number) => `${fmt((v / total) * 100, 1).padStart(5)}%`;
  const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  return [
    `CPU profile of helixd (${fmt(total / 1e6, 1)} s sampled), self time by function:`,
    ...sorted(self).map(([k, v]) => `  ${pct(v)}  ${k}`),
    'self time by package / source file:',
    ...sorted(byPackage).map(([k, v]) => `  ${pct(v)}  ${k}`),
  ];
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

    // 7. the load: per query kind, helixd (after a warm-up) and then the ceiling, interleaved
    say();
    say(`running ${runnable.length} query kinds ...`);
    const rows: Row[] = [];
    for (const k of runnable) {
      const load = (b: string, s: number) =>
        runLoad(generator, {
          base: b,
          requests: k.requests,
          clientId: info.demoClientId,
          connections,
          seconds: s,
          scratch,
        });
      // Quick mode warms up once per operation, to stay within its time.
      const firstOfOp = rows.at(-1)?.op !== k.op;
      if (warmup > 0 && (!quick || firstOfOp)) await load(base, warmup);
      const h = await load(base, seconds);
      const c = await load(ceilingBase, seconds);
      const row: Row = {
        op: k.op,
        kind: k.kind,
        cls: k.cls,
        ...(k.baseline ? { baseline: k.baseline } : {}),
        ...(k.note ? { note: k.note } : {}),
        urls: k.requests.length,
        meanBytes: (k as QueryKind & { meanBytes: number }).meanBytes,
        helixd: h,
        ceiling: c,
        ratio: h.rps / c.rps,
      };
      rows.push(row);
      say(
        `  ${k.op} ${k.kind}: ${fmt(h.rps, 0)} req/s, p50 ${fmt(h.p50, 2)} ms, p99 ${fmt(h.p99, 2)} ms${h.errors ? `, ${h.errors} errors` : ''}; ceiling ${fmt(c.rps, 0)} req/s (${fmt(row.ratio * 100, 0)}%)`,
      );
    }
    clearInterval(rssTimer);
    const peakRss = procStatus(pid, 'VmHWM');

    // 8. the report
    await stopChild(helixd);
    const dvf = deepVsFirst(rows);
    const firstRows = rows.filter((r) => r.cls === 'first');
    const worstFirst = firstRows.reduce<Row | undefined>(
      (w, r) => (!w || r.ratio < w.ratio ? r : w),
      undefined,
    );
    const worstP99 = rows.reduce<Row | undefined>(
      (w, r) => (!w || r.helixd.p99 > w.helixd.p99 ? r : w),
      undefined,
    );
    const worstDeep = dvf.reduce<DeepVsFirst | undefined>(
      (w, d) => (!w || d.factor > w.factor ? d : w),
      undefined,
    );
    const bigStore = (counts.clips ?? 0) >= 1_000_000;
    const budget: BudgetLine[] = [
      {
        line: "every operation's first-page queries >= 25% of the ceiling's req/s",
        value: worstFirst
          ? `lowest ${fmt(worstFirst.ratio * 100, 0)}% (${worstFirst.op} ${worstFirst.kind})`
          : 'n/a',
        met: worstFirst ? firstRows.every((r) => r.ratio >= 0.25) : null,
      },
      {
        line: 'deep-page p50 <= 1.25 x first-page p50',
        value: worstDeep
          ? `highest ${fmt(worstDeep.factor, 2)} x (${worstDeep.op} ${worstDeep.deep})`
          : 'n/a',
        met: worstDeep ? dvf.every((d) => d.factor <= 1.25) : null,
      },
      {
        line: `p99 < 20 ms at ${connections} connections`,
        value: worstP99
          ? `highest ${fmt(worstP99.helixd.p99, 1)} ms (${worstP99.op} ${worstP99.kind})`
          : 'n/a',
        met: worstP99 ? rows.every((r) => r.helixd.p99 < 20) && connections >= 64 : null,
      },
      {
        line: 'peak RSS of helixd < 512 MB',
        value: mb(peakRss),
        met: peakRss === undefined ? null : peakRss < 512 * 2 ** 20,
      },
      {
        line: '1,000,000 clips seed in < 2 min',
        value: seedRun
          ? `${fmt(seedRun.seconds)} s for ${counts.clips?.toLocaleString('en')} clips (whole store)`
          : 'not measured',
        met: seedRun && bigStore ? seedRun.seconds < 120 : null,
      },
      {
        line: 'start-up on the large store < 2 s',
        value: `${fmt(startupMs / 1000, 2)} s`,
        met: bigStore ? startupMs < 2000 : null,
      },
    ];

    say();
    say(table(rows));
    if (generator === 'wrk')
      say(
        "p50/p99/max: the latencies the requests had; wrk p99: wrk's own figure, after its coordinated-omission correction (bench/README.md)",
      );
    say();
    if (dvf.length) {
      say('deep pages against first pages (p50):');
      for (const d of dvf)
        say(
          `  ${d.op} ${d.deep} ${fmt(d.deepP50, 2)} ms vs ${d.first} ${fmt(d.firstP50, 2)} ms: ${fmt(d.factor, 2)} x`,
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
    say(`budget${bigStore ? '' : ' (small store: the size-bound lines are not judged)'}:`);
    for (const b of budget)
      say(`  [${b.met === null ? 'n/a   ' : b.met ? 'met   ' : 'missed'}] ${b.line}: ${b.value}`);

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
      const files = existsSync(profileDir)
        ? readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'))
        : [];
      // tsx's loader thread writes a profile too; the main thread's is the largest.
      const size = (f: string) => statSync(join(profileDir, f)).size;
      const main = files.sort((a, b) => size(b) - size(a))[0];
      if (main) {
        say();
        for (const l of summariseProfile(join(profileDir, main))) say(l);
      } else say('no CPU profile was written');
    }
  } catch (err) {
    if (helixdLog) process.stderr.write(`helixd's last output:\n${helixdLog}\n`);
    throw err;
  } finally {
    await stopChild(helixd);
    if (ceiling) await stopChild(ceiling);
    await store.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
