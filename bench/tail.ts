// `npm run bench:tail`: the latency tail of the platform itself under the bench's closed loop.
// The ceiling server (bench/ceiling.ts) answers one path with a 3,000-byte body after spinning the
// CPU for W microseconds per request, for W from 0 (the ceiling) up to what a helixd request costs;
// for each, 64 connections for 5 s with the bench's load generator. A Node server that spends W us
// per request and nothing else shows here the p99 that no code inside it can beat on this machine
// (bench/README.md, "The 64-connection tail").
//
//   npm run bench:tail                      W = 0 25 50 100 200 400
//   npm run bench:tail -- --work 0,150      chosen values of W
//   other flags: --connections N --seconds N --generator wrk|autocannon
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chooseGenerator, runLoad } from './load.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    work: { type: 'string', default: '0,25,50,100,200,400' },
    connections: { type: 'string', default: '64' },
    seconds: { type: 'string', default: '5' },
    generator: { type: 'string' },
  },
});
const works = args.work.split(',').map(Number);
const connections = Number(args.connections);
const seconds = Number(args.seconds);
for (const v of [...works, connections, seconds])
  if (!Number.isFinite(v) || v < 0) throw new Error('--work, --connections, --seconds: numbers >= 0');

const generator = chooseGenerator(args.generator);
const scratch = await mkdtemp(join(tmpdir(), 'helixd-tail-'));
const sizesFile = join(scratch, 'sizes.json');
await writeFile(sizesFile, JSON.stringify({ '/t': 3000 }));
process.stdout.write(
  `tail of a node:http server spending W us per request - ${cpus().length} CPUs, node ${process.version}, ${generator}, ${connections} connections, ${seconds} s each\n`,
);
process.stdout.write('  W us    req/s   p50 ms   p99 ms  p99/p50\n');
for (const w of works) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'bench', 'ceiling.ts'), sizesFile, String(w)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  try {
    const port = await new Promise<number>((res, rej) => {
      child.stdout.on('data', (d: Buffer) => {
        const m = /listening (\d+)/.exec(d.toString());
        if (m) res(Number(m[1]));
      });
      child.on('exit', (c) => rej(new Error(`the server exited (${c})`)));
    });
    const o = {
      base: `http://127.0.0.1:${port}`,
      requests: [{ path: '/t', token: 'x' }],
      connections,
      scratch,
    };
    await runLoad(generator, { ...o, seconds: 1 });
    const r = await runLoad(generator, { ...o, seconds });
    process.stdout.write(
      `${String(w).padStart(6)} ${r.rps.toFixed(0).padStart(8)} ${r.p50.toFixed(2).padStart(8)} ${r.p99.toFixed(2).padStart(8)} ${(r.p99 / r.p50).toFixed(1).padStart(8)}\n`,
    );
  } finally {
    child.kill('SIGTERM');
  }
}
