// `npm run bench:tail`: the latency tail of the platform itself under the bench's closed loop.
// The ceiling server (bench/ceiling.ts) answers one path with a body of B bytes (default 3,000)
// after spinning the CPU for W microseconds per request, for W from 0 (the ceiling) up to what a helixd request costs;
// for each, 64 connections for 5 s with the bench's load generator. A Node server that spends W us
// per request and nothing else shows here the latencies that no code inside it can beat on this
// machine (docs/perf/2026-11-22-third-session.md, "What the p99 was"). `max` is the
// slowest request, in practice the first one on a connection opened while the server is busy;
// `wrk p99` is wrk's own figure, after its coordinated-omission correction (bench/load.ts).
//
//   npm run bench:tail                      W = 0 25 50 100 200 400
//   npm run bench:tail -- --work 0,150      chosen values of W
//   npm run bench:tail -- --work 2300 --bytes 64000   a lookup of 100 clips by id, as the bench's
//                                                     work table measures one (bench/README.md)
//   other flags: --connections N --seconds N --generator wrk|autocannon
import { mkdtemp, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chooseGenerator, runLoad, startCeiling } from './load.ts';

const { values: args } = parseArgs({
  options: {
    work: { type: 'string', default: '0,25,50,100,200,400' },
    connections: { type: 'string', default: '64' },
    seconds: { type: 'string', default: '5' },
    bytes: { type: 'string', default: '3000' },
    generator: { type: 'string' },
  },
});
const works = args.work.split(',').map(Number);
const connections = Number(args.connections);
const seconds = Number(args.seconds);
const bytes = Number(args.bytes);
for (const v of [...works, connections, seconds])
  if (!Number.isFinite(v) || v < 0) throw new Error('--work, --connections, --seconds: numbers >= 0');
if (!Number.isInteger(bytes) || bytes < 2) throw new Error('--bytes: a whole number of 2 or more');

const generator = chooseGenerator(args.generator);
const scratch = await mkdtemp(join(tmpdir(), 'helixd-tail-'));
const sizesFile = join(scratch, 'sizes.json');
await writeFile(sizesFile, JSON.stringify({ '/t': bytes }));
process.stdout.write(
  `tail of a node:http server spending W us per request, ${bytes}-byte answers - ${cpus().length} CPUs, node ${process.version}, ${generator}, ${connections} connections, ${seconds} s each\n`,
);
process.stdout.write('  W us    req/s   p50 ms   p99 ms  p99/p50   max ms  wrk p99\n');
for (const w of works) {
  const ceiling = await startCeiling(sizesFile, w);
  try {
    const o = {
      base: ceiling.base,
      requests: [{ path: '/t', token: 'x' }],
      clientId: 'x',
      connections,
      scratch,
    };
    await runLoad(generator, { ...o, seconds: 1 });
    const r = await runLoad(generator, { ...o, seconds });
    process.stdout.write(
      `${String(w).padStart(6)} ${r.rps.toFixed(0).padStart(8)} ${r.p50.toFixed(2).padStart(8)} ${r.p99.toFixed(2).padStart(8)} ${(r.p99 / r.p50).toFixed(1).padStart(8)} ${(r.max === undefined ? '' : r.max.toFixed(1)).padStart(8)} ${(r.corrected === undefined ? '' : r.corrected.p99.toFixed(2)).padStart(8)}\n`,
    );
  } finally {
    ceiling.child.kill('SIGTERM');
  }
}
