// The ceiling: the fastest answer this machine's Node can give to the same requests. A plain
// node:http server in its own process that looks the request's path up in a table and writes a
// precomputed body of the size helixd answered with. No token check, no SQL, no serialisation: what
// is left is Node's HTTP stack, the kernel and the load generator, the part helixd cannot go under.
//
// Run as a child: `node --import tsx bench/ceiling.ts <sizes.json> [work-us]`; it prints
// `listening <port>`. sizes.json: { "<path?query>": <body bytes>, ... }. With work-us, each answer
// first spins the CPU for that many microseconds (bench/tail.ts: the tail of a server that costs
// what helixd costs, and does nothing else).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [sizesFile, workArg] = process.argv.slice(2);
const workNs = BigInt(Math.round(Number(workArg ?? 0) * 1000));
if (!sizesFile) {
  process.stderr.write('usage: ceiling.ts <sizes.json>\n');
  process.exit(2);
}

const sizes = JSON.parse(readFileSync(sizesFile, 'utf8')) as Record<string, number>;

/** A JSON document of exactly `n` bytes (n >= 2), so that clients parsing it see valid JSON. */
function bodyOf(n: number): Buffer {
  if (n < 12) return Buffer.from(`${' '.repeat(Math.max(0, n - 2))}{}`);
  return Buffer.from(`{"data":"${'x'.repeat(n - 11)}"}`);
}

const bodies = new Map<string, Buffer>();
const bySize = new Map<number, Buffer>();
for (const [path, n] of Object.entries(sizes)) {
  let b = bySize.get(n);
  if (!b) {
    b = bodyOf(n);
    bySize.set(n, b);
  }
  bodies.set(path, b);
}
const notFound = Buffer.from('{"error":"Not Found","status":404,"message":"Not Found"}');

const server = createServer((req, res) => {
  if (workNs > 0n) {
    const until = process.hrtime.bigint() + workNs;
    while (process.hrtime.bigint() < until);
  }
  const body = bodies.get(req.url ?? '');
  res.writeHead(body ? 200 : 404, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': (body ?? notFound).length,
  });
  res.end(body ?? notFound);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`listening ${typeof addr === 'object' && addr ? addr.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
