// Summaries of a helixd CPU profile (`node --cpu-prof`), for `npm run bench -- --profile` and
// `npm run bench:compare -- --profile`: self time by function and by source file, and the busy time
// split by step of the request path.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './child.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const fmt = (n: number, digits = 0) => n.toFixed(digits);

/**
 * The main thread's profile in `dir` (tsx's loader thread writes one too, and the main thread's is
 * the largest); undefined when none was written.
 */
export function mainProfile(dir: string): string | undefined {
  if (!existsSync(dir)) return undefined;
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  const size = (f: string) => statSync(join(dir, f)).size;
  const main = files.sort((a, b) => size(b) - size(a))[0];
  return main === undefined ? undefined : join(dir, main);
}

const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Profile;

/** Self time by function and by package or source file, the `top` of each. */
export function summariseProfile(file: string, top = 25): string[] {
  const prof = read(file);
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

/**
 * The steps of a request, each known by the functions that do it (their names in helixd, Fastify,
 * Node and the drivers; the bundle keeps them), and for one the name of its caller. A busy sample
 * counts for the innermost step on its stack: the cursor signed inside the handler is the cursor's,
 * the rest of the handler the handler's.
 */
const STEPS: [string, (name: string, caller: string) => boolean][] = [
  ['the store: running the statements', (f) => f === '#run' || f === 'handleDataRow' || f === 'parseRow'],
  ['the socket: writing the answer', (f) => f === 'writeGeneric' || f === 'writevGeneric'],
  ['serializing the answer', (f) => f === 'serialize'],
  ["the cursor's HMAC", (f) => f === 'signText' || f === 'verifyText'],
  ['user names', (f) => f === 'byIds'],
  ['access (token, Client-Id, scopes)', (f) => f === 'authorize'],
  ["validating the query's parameters", (f) => f === 'validate' || f === 'validateParam'],
  ['CORS', (f) => f === 'handleCors'],
  ['metrics', (f) => f === 'onResponse'],
  // Fastify's own `handler` (called by its `handleRequest`) runs the hooks and the validation
  // before the route's: it is Fastify's machinery, not the operation's handler.
  ['the handler, the rest', (f, caller) => f === 'handler' && caller !== 'handleRequest'],
  ['parsing the request (Node), routing (Fastify)', (f) => f === 'parserOnHeadersComplete'],
  ['garbage collection', (f) => f === '(garbage collector)'],
];
const OTHER = "the rest: Fastify's and Node's request and reply machinery";

/** Busy time (all but idle) by step, as shares of it: [step, share] in STEPS' order, then the rest. */
export function profileSteps(file: string): { busyShare: number; steps: [string, number][] } {
  const prof = read(file);
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stepOf = new Map<number, string>();
  const stepOfNode = (id: number): string => {
    const known = stepOf.get(id);
    if (known !== undefined) return known;
    let step = OTHER;
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const name = byId.get(cur)?.callFrame.functionName ?? '';
      const up = parent.get(cur);
      const caller = up === undefined ? '' : (byId.get(up)?.callFrame.functionName ?? '');
      const hit = STEPS.find(([, is]) => is(name, caller));
      if (hit) {
        step = hit[0];
        break;
      }
    }
    stepOf.set(id, step);
    return step;
  };
  const time = new Map<string, number>();
  let total = 0;
  let busy = 0;
  prof.samples.forEach((id, i) => {
    const dt = prof.timeDeltas[i] ?? 0;
    total += dt;
    if (byId.get(id)?.callFrame.functionName === '(idle)') return;
    busy += dt;
    const step = stepOfNode(id);
    time.set(step, (time.get(step) ?? 0) + dt);
  });
  return {
    busyShare: busy / total,
    steps: [...STEPS.map(([s]) => s), OTHER].map((s) => [s, (time.get(s) ?? 0) / busy]),
  };
}
