// The ceiling's answer, apart from its server: bench/ceiling.ts serves it over node:http, and
// bench/inprocess.ts calls it without HTTP, beside helixd's app, to take out of helixd's in-process
// figure what any answer of the same size costs there.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** A JSON document of exactly `n` bytes (n >= 2), so that clients parsing it see valid JSON. */
function bodyOf(n: number): Buffer {
  if (n < 12) return Buffer.from(`${' '.repeat(Math.max(0, n - 2))}{}`);
  return Buffer.from(`{"data":"${'x'.repeat(n - 11)}"}`);
}

/**
 * The ceiling's request handler: each path of `sizes` ({ "<path?query>": <body bytes> }) gets a
 * precomputed body of its size, after `workUs` microseconds of busy CPU (bench/tail.ts); any other
 * path a 404.
 */
export function ceilingAnswer(
  sizes: Record<string, number>,
  workUs = 0,
): (req: IncomingMessage, res: ServerResponse) => void {
  const workNs = BigInt(Math.round(workUs * 1000));
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
  return (req, res) => {
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
  };
}
