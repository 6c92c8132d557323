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
import { ceilingAnswer } from './ceiling-answer.ts';

const [sizesFile, workArg] = process.argv.slice(2);
if (!sizesFile) {
  process.stderr.write('usage: ceiling.ts <sizes.json>\n');
  process.exit(2);
}

const sizes = JSON.parse(readFileSync(sizesFile, 'utf8')) as Record<string, number>;
const server = createServer(ceilingAnswer(sizes, Number(workArg ?? 0)));
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`listening ${typeof addr === 'object' && addr ? addr.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
