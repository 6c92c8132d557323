// The report of `npm run bench` (bench/run.ts): its tables and the budget lines, from the figures of
// one run. bench/README.md says what each column is.
import { median } from './harness.ts';
import type { InProcessFigure } from './inprocess.ts';
import type { LoadResult } from './load.ts';
import type { QueryKind } from './queries.ts';

export interface Row {
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
  /** µs of CPU per request of the helixd process while it was under this kind's load (/proc) */
  helixdCpu?: number;
  /** the same for the ceiling's process under its load */
  ceilingCpu?: number;
  /** the work per request in process, without HTTP (bench/inprocess.ts) */
  inProcess?: InProcessFigure;
  /** helixd under `--workers N`, run beside the others (reported apart) */
  workers?: { n: number; helixd: LoadResult; ratio: number };
  /** the leanest program (bench/leanest.ts) on the same pages, when it serves the kind */
  leanest?: LoadResult;
  /** µs of CPU per request of its process under that load */
  leanestCpu?: number;
  /**
   * helixd's CPU per request over the leanest program's in each round of the two in turn (run.ts,
   * --turns); their median is the ratio the table prints and the budget judges (leanRatios)
   */
  leanestCpuByRound?: number[];
  /** the same for req/s */
  leanestRpsByRound?: number[];
  /**
   * A deep kind: helixd on it and on the first pages of its listing (`first`), taken in turn in
   * rounds (run.ts, --turns), the medians (each one's round of median req/s, the median CPU per
   * request); what the deep-page lines judge
   */
  deepPair?: {
    first: string;
    deep: LoadResult;
    firstPages: LoadResult;
    deepCpu?: number;
    firstCpu?: number;
    /** the deep kind's CPU per request over the first pages', round by round */
    cpuByRound: number[];
  };
}

/** The share of the ceiling the work table's "allows" column is figured at (no budget line now). */
export const FIRST_PAGE_SHARE = 0.25;
/** First and deep pages: at least this times the leanest program's req/s. */
export const LEANEST_RPS = 0.8;
/** CPU per request: at most this times the leanest program's. */
export const LEANEST_CPU = 1.25;
/** p99 at most this times p50, for every first-page and deep kind. */
export const P99_OVER_P50 = 3;
/** A deep page's CPU and p50 may be at most this times the first pages', of the same listing (as many pages). */
export const DEEP_FACTOR = 1.1;
export const P99_MS = 50;
export const P99_CONNECTIONS = 64;
export const RSS_BYTES = 512 * 2 ** 20;
export const SEED_CLIPS = 1_000_000;
export const SEED_SECONDS = 60;

const fmt = (n: number, digits = 1) => n.toFixed(digits);
const pct = (r: number) => `${fmt(r * 100, 0)}%`;
export const mb = (bytes: number | undefined) =>
  bytes === undefined ? 'n/a' : `${fmt(bytes / 2 ** 20, 0)} MB`;
const us = (v: number | undefined) => (v === undefined ? '' : fmt(v, 0));

/** Columns padded to their widest cell: the first `left` to the left, the others to the right. */
function columns(head: string[], body: string[][], left = 2): string {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < left ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number)))
      .join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

const kindOf = (r: Row) => r.kind + (r.note ? ` (${r.note})` : '');

/** Per query kind: req/s and latencies of helixd and of the ceiling, and their ratio. */
export function loadTable(rows: Row[]): string {
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
    kindOf(r),
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
    pct(r.ratio),
  ]);
  return columns(head, body);
}

/**
 * helixd over the leanest program, req/s and CPU per request: the median of the rounds' own ratios
 * when the two were run in turn (a round's pair shares the machine's load; the ratio of two medians
 * could pair one's quiet round with the other's busy one), else the ratio of the one run each.
 */
export function leanRatios(r: Row): { rps?: number; cpu?: number } {
  const l = r.leanest;
  if (!l) return {};
  return {
    rps: r.leanestRpsByRound?.length ? median(r.leanestRpsByRound) : r.helixd.rps / l.rps,
    ...(r.leanestCpuByRound?.length
      ? { cpu: median(r.leanestCpuByRound) }
      : r.helixdCpu && r.leanestCpu
        ? { cpu: r.helixdCpu / r.leanestCpu }
        : {}),
  };
}

/** Per query kind the leanest program serves: helixd against it, req/s, CPU per request, p50, p99. */
export function floorTable(rows: Row[]): string {
  const head = [
    'operation',
    'query kind',
    'urls',
    'req/s',
    'leanest req/s',
    'ratio',
    'CPU µs',
    'leanest CPU µs',
    'CPU ratio',
    'by round',
    'p50 ms',
    'p99 ms',
    'leanest p50',
    'leanest p99',
  ];
  const body = rows
    .filter((r) => r.leanest)
    .map((r) => {
      const l = r.leanest as LoadResult;
      const ratio = leanRatios(r);
      return [
        r.op,
        kindOf(r),
        String(r.urls),
        fmt(r.helixd.rps, 0),
        fmt(l.rps, 0),
        `${fmt(ratio.rps as number, 2)} x`,
        us(r.helixdCpu),
        us(r.leanestCpu),
        ratio.cpu !== undefined ? `${fmt(ratio.cpu, 2)} x` : '',
        (r.leanestCpuByRound ?? []).map((x) => fmt(x, 2)).join(' '),
        fmt(r.helixd.p50, 2),
        fmt(r.helixd.p99, 2),
        fmt(l.p50, 2),
        fmt(l.p99, 2),
      ];
    });
  return columns(head, body);
}

/**
 * The µs of one core a request may take, in all, for one helixd process to answer
 * FIRST_PAGE_SHARE of the ceiling's req/s: one process runs every request on one thread (SQLite's
 * queries too), so it has 1,000,000 µs of CPU a second to share among its requests.
 */
export const shareUs = (r: Row) => 1e6 / (FIRST_PAGE_SHARE * r.ceiling.rps);

/**
 * What of `shareUs` is left for the work: the rest goes to what every answer costs over HTTP, the
 * ceiling's own CPU per request under load (helixd's HTTP stack is the same Node's).
 */
export const allowedUs = (r: Row) => Math.max(0, shareUs(r) - (r.ceilingCpu ?? 0));

/**
 * The highest share of the ceiling one helixd process could reach with this much work: one core
 * over (the ceiling's CPU per request + the work), against the ceiling's req/s.
 */
export const boundShare = (r: Row) =>
  r.inProcess ? Math.min(1, 1e6 / ((r.ceilingCpu ?? 0) + r.inProcess.work) / r.ceiling.rps) : undefined;

/** Per query kind: the CPU of a request under load, its work in process, and what 25% allows. */
export function workTable(rows: Row[]): string {
  const head = [
    'operation',
    'query kind',
    'req/s',
    'ceiling req/s',
    'ratio',
    'CPU µs',
    'ceil CPU µs',
    'inject µs',
    'transport µs',
    'inject min-max',
    'work µs',
    `${pct(FIRST_PAGE_SHARE)} allows µs`,
    'work/allowed',
    'bound',
    'CPU bound',
  ];
  const body = rows.map((r) => {
    const w = r.inProcess;
    const allowed = allowedUs(r);
    const bound = boundShare(r);
    return [
      r.op,
      kindOf(r),
      fmt(r.helixd.rps, 0),
      fmt(r.ceiling.rps, 0),
      pct(r.ratio),
      us(r.helixdCpu),
      us(r.ceilingCpu),
      us(w?.helixd),
      us(w?.transport),
      w ? `${us(w.min)}-${us(w.max)}` : '',
      us(w?.work),
      fmt(allowed, 0),
      w && allowed > 0 ? `${fmt(w.work / allowed, 1)} x` : '',
      bound === undefined ? '' : pct(bound),
      r.helixdCpu ? pct(Math.min(1, 1e6 / r.helixdCpu / r.ceiling.rps)) : '',
    ];
  });
  return columns(head, body);
}

/** Per query kind: helixd under `--workers N` beside one process, against the same ceiling run. */
export function workersTable(rows: Row[]): string {
  const n = rows.find((r) => r.workers)?.workers?.n ?? 2;
  const head = [
    'operation',
    'query kind',
    'req/s 1 process',
    `req/s --workers ${n}`,
    `x 1 process`,
    'p50 ms',
    'p99 ms',
    'err',
    'ceiling req/s',
    'ratio',
  ];
  const body = rows
    .filter((r) => r.workers)
    .map((r) => {
      const w = r.workers as NonNullable<Row['workers']>;
      return [
        r.op,
        kindOf(r),
        fmt(r.helixd.rps, 0),
        fmt(w.helixd.rps, 0),
        fmt(w.helixd.rps / r.helixd.rps, 2),
        fmt(w.helixd.p50, 2),
        fmt(w.helixd.p99, 2),
        String(w.helixd.errors),
        fmt(r.ceiling.rps, 0),
        pct(w.ratio),
      ];
    });
  return columns(head, body);
}

export interface DeepVsFirst {
  op: string;
  deep: string;
  first: string;
  deepP50: number;
  firstP50: number;
  factor: number;
  /** the work of each in process, µs */
  deepWork?: number;
  firstWork?: number;
}

export function deepVsFirst(rows: Row[]): DeepVsFirst[] {
  const out: DeepVsFirst[] = [];
  for (const d of rows.filter((r) => r.cls === 'deep')) {
    const f = rows.find((r) => r.op === d.op && r.kind === d.baseline);
    if (!f) continue;
    // Taken in turn when the run did (the pair's medians), else the two kinds' own runs.
    const deepP50 = d.deepPair?.deep.p50 ?? d.helixd.p50;
    const firstP50 = d.deepPair?.firstPages.p50 ?? f.helixd.p50;
    out.push({
      op: d.op,
      deep: d.kind,
      first: f.kind,
      deepP50,
      firstP50,
      factor: deepP50 / firstP50,
      ...(d.inProcess && f.inProcess ? { deepWork: d.inProcess.work, firstWork: f.inProcess.work } : {}),
    });
  }
  return out;
}

export interface BudgetLine {
  line: string;
  value: string;
  /** null: not judged by this run (the reason is in `value`) */
  met: boolean | null;
}

const worst = <T>(items: T[], worse: (a: T, b: T) => boolean) =>
  items.reduce<T | undefined>((w, x) => (w === undefined || worse(x, w) ? x : w), undefined);

export function budgetLines(o: {
  rows: Row[];
  connections: number;
  peakRss: number | undefined;
  clips: number;
  /** the seeding of this store, when the harness made and timed it */
  seed: { seconds: number; date: string; reused: boolean; loadavg?: number[] } | undefined;
}): BudgetLine[] {
  const leaned = o.rows.filter((r) => r.leanest && (r.cls === 'first' || r.cls === 'deep'));
  const rpsRatio = (r: Row) => leanRatios(r).rps as number;
  const lowRps = worst(leaned, (a, b) => rpsRatio(a) < rpsRatio(b));
  const cpuRows = leaned.filter((r) => leanRatios(r).cpu !== undefined);
  const cpuRatio = (r: Row) => leanRatios(r).cpu as number;
  const highCpu = worst(cpuRows, (a, b) => cpuRatio(a) > cpuRatio(b));
  const tailRows = o.rows.filter((r) => r.cls === 'first' || r.cls === 'deep');
  const tail = (r: LoadResult) => r.p99 / r.p50;
  const highTail = worst(tailRows, (a, b) => tail(a.helixd) > tail(b.helixd));
  const leanTails = tailRows.flatMap((r) => (r.leanest ? [tail(r.leanest)] : []));
  const deepCpu = o.rows.flatMap((d) => {
    const f = o.rows.find((r) => r.op === d.op && r.kind === d.baseline);
    // Taken in turn when the run did (the pair's medians), else the two kinds' own runs.
    const deepUs = d.deepPair ? d.deepPair.deepCpu : d.helixdCpu;
    const firstUs = d.deepPair ? d.deepPair.firstCpu : f?.helixdCpu;
    return d.cls === 'deep' && f && deepUs && firstUs
      ? [
          {
            d,
            deepUs,
            firstUs,
            factor: d.deepPair?.cpuByRound.length ? median(d.deepPair.cpuByRound) : deepUs / firstUs,
            byRound: d.deepPair?.cpuByRound,
            lean: d.leanestCpu && f.leanestCpu ? d.leanestCpu / f.leanestCpu : undefined,
          },
        ]
      : [];
  });
  const highDeepCpu = worst(deepCpu, (a, b) => a.factor > b.factor);
  const dvf = deepVsFirst(o.rows);
  const highDeep = worst(dvf, (a, b) => a.factor > b.factor);
  const highP99 = worst(o.rows, (a, b) => a.helixd.p99 > b.helixd.p99);
  const seedLine = `${SEED_CLIPS.toLocaleString('en')} clips seeded in < ${SEED_SECONDS} s`;
  let seed: BudgetLine;
  const clips = o.clips.toLocaleString('en');
  if (!o.seed)
    seed = {
      line: seedLine,
      value: `not measured (the store of ${clips} clips was seeded before)`,
      met: null,
    };
  else {
    const how = `${fmt(o.seed.seconds)} s for a store of ${clips} clips${o.seed.reused ? `, seeded ${o.seed.date}` : ''}${o.seed.loadavg ? ` at load ${fmt(o.seed.loadavg[0] ?? 0, 1)}` : ''}`;
    seed =
      o.clips < SEED_CLIPS
        ? { line: seedLine, value: `not measured at 1M (${how})`, met: null }
        : { line: seedLine, value: how, met: o.seed.seconds < SEED_SECONDS };
  }
  return [
    {
      line: `first and deep pages of every measured listing >= ${LEANEST_RPS} x the leanest program's req/s (same run, medians of rounds in turn)`,
      value: lowRps
        ? `lowest ${fmt(rpsRatio(lowRps), 2)} x (${lowRps.op} ${lowRps.kind}: ${fmt(lowRps.helixd.rps, 0)} against ${fmt((lowRps.leanest as LoadResult).rps, 0)} req/s)`
        : 'not measured (the leanest program serves none of the kinds run)',
      met: lowRps ? leaned.every((r) => rpsRatio(r) >= LEANEST_RPS) : null,
    },
    {
      line: `CPU per request <= ${LEANEST_CPU} x the leanest program's (first and deep pages, medians of rounds in turn)`,
      value: highCpu
        ? `highest ${fmt(cpuRatio(highCpu), 2)} x (${highCpu.op} ${highCpu.kind}: ${fmt(highCpu.helixdCpu as number, 0)} µs against ${fmt(highCpu.leanestCpu as number, 0)} µs)`
        : 'not measured',
      met: highCpu ? cpuRows.every((r) => cpuRatio(r) <= LEANEST_CPU) : null,
    },
    {
      line: `p99 <= ${P99_OVER_P50} x p50 at ${P99_CONNECTIONS} connections (every first-page and deep kind)`,
      value:
        o.connections !== P99_CONNECTIONS
          ? `not measured at ${P99_CONNECTIONS} connections (this run: ${o.connections})`
          : highTail
            ? `highest ${fmt(tail(highTail.helixd), 1)} x (${highTail.op} ${highTail.kind}: p99 ${fmt(highTail.helixd.p99, 2)} ms, p50 ${fmt(highTail.helixd.p50, 2)} ms)${leanTails.length ? `; the leanest program's highest ${fmt(Math.max(...leanTails), 1)} x` : ''}`
            : 'n/a',
      met:
        o.connections === P99_CONNECTIONS && highTail
          ? tailRows.every((r) => tail(r.helixd) <= P99_OVER_P50)
          : null,
    },
    {
      line: `deep page <= ${DEEP_FACTOR} x its page 1 in CPU per request (against the first pages of the same listing, as many, in turn)`,
      value: highDeepCpu
        ? `highest ${fmt(highDeepCpu.factor, 2)} x (${highDeepCpu.d.op} ${highDeepCpu.d.kind}: ${fmt(highDeepCpu.deepUs, 0)} µs against ${fmt(highDeepCpu.firstUs, 0)} µs${highDeepCpu.byRound?.length ? `, in turn, by round ${highDeepCpu.byRound.map((x) => fmt(x, 2)).join(' ')}` : ''})${highDeepCpu.lean !== undefined ? `; the leanest program's ${fmt(highDeepCpu.lean, 2)} x there` : ''}`
        : 'n/a',
      met: highDeepCpu ? deepCpu.every((x) => x.factor <= DEEP_FACTOR) : null,
    },
    {
      line: `deep p50 <= ${DEEP_FACTOR} x page 1's p50 (against the first pages of the same listing, as many, in turn)`,
      value: highDeep
        ? `highest ${fmt(highDeep.factor, 2)} x (${highDeep.op} ${highDeep.deep}: ${fmt(highDeep.deepP50, 2)} ms against ${fmt(highDeep.firstP50, 2)} ms${highDeep.deepWork !== undefined ? `; in process ${fmt(highDeep.deepWork, 0)} µs against ${fmt(highDeep.firstWork ?? 0, 0)} µs` : ''})`
        : 'n/a',
      met: highDeep ? dvf.every((d) => d.factor <= DEEP_FACTOR) : null,
    },
    {
      line: `p99 < ${P99_MS} ms at ${P99_CONNECTIONS} connections (the latencies requests had)`,
      value:
        o.connections !== P99_CONNECTIONS
          ? `not measured at ${P99_CONNECTIONS} connections (this run: ${o.connections})`
          : highP99
            ? `highest ${fmt(highP99.helixd.p99, 1)} ms (${highP99.op} ${highP99.kind})`
            : 'n/a',
      met: o.connections === P99_CONNECTIONS && highP99 ? o.rows.every((r) => r.helixd.p99 < P99_MS) : null,
    },
    {
      line: `peak RSS of helixd < ${mb(RSS_BYTES)}`,
      value: mb(o.peakRss),
      met: o.peakRss === undefined ? null : o.peakRss < RSS_BYTES,
    },
    seed,
  ];
}

export function budgetText(lines: BudgetLine[]): string[] {
  return lines.map(
    (b) => `  [${b.met === null ? 'n/a   ' : b.met ? 'met   ' : 'missed'}] ${b.line}: ${b.value}`,
  );
}
