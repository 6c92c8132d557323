// What the benchmark scripts share besides their child processes (child.ts): tokens minted into
// the store, `--help` from a script's opening comment, and a median.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import { SPEC_SCOPES } from '../src/auth/scopes.ts';
import { mintToken } from '../src/auth/tokens.ts';
import type { Database } from '../src/store/schema.ts';

/** The median of `xs` (the mean of the two middle values when their count is even). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/** Prints the opening comment of the script at `url` (its usage) and exits. */
export function printHelp(url: string): never {
  const lines = readFileSync(fileURLToPath(url), 'utf8').split('\n');
  const head = lines.slice(
    0,
    lines.findIndex((l) => !l.startsWith('//')),
  );
  process.stdout.write(`${head.map((l) => l.replace(/^\/\/ ?/, '')).join('\n')}\n`);
  process.exit(0);
}

/**
 * The scopes of the bench's user tokens: those of the operations it measures (SPEC_SCOPES), and
 * GET /streams/followed's.
 */
const BENCH_SCOPES = [...SPEC_SCOPES, 'user:read:follows'];

/**
 * An app token of `clientId` and, on demand, a user token per user carrying every scope the
 * operations need (BENCH_SCOPES), minted straight into the store (the token command would start a process per
 * user), each living a day.
 */
export async function benchTokens(
  db: Kysely<Database>,
  clientId: string,
): Promise<{ appToken: string; tokenFor(userId: number): Promise<string> }> {
  const now = Math.floor(Date.now() / 1000);
  const ttl = 24 * 3600;
  const app = await mintToken(db, { kind: 'app', clientId, scopes: [], ttl, now });
  const userTokens = new Map<number, Promise<string>>();
  return {
    appToken: app.access_token,
    tokenFor(userId) {
      let t = userTokens.get(userId);
      if (!t) {
        t = mintToken(db, { kind: 'user', clientId, userId, scopes: BENCH_SCOPES, ttl, now }).then(
          (m) => m.access_token,
        );
        userTokens.set(userId, t);
      }
      return t;
    },
  };
}
