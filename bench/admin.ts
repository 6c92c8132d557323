// `npm run bench:admin`: the latency of single admin writes (docs/admin.md), one at a time, on a
// seeded SQLite file and a fresh PostgreSQL schema: create a clip (POST /admin/clips), set a
// stream's viewer count (PATCH /admin/streams/<id>, which moves its game in /games/top through the
// triggers of migration 008) and replace a user (PUT /admin/users/<id>). Requests go through the
// whole app (routing, admin token, write path, store) with Fastify's inject, without a socket.
//
//   npm run bench:admin                        200 users, 2,000 writes of each kind
//   npm run bench:admin -- --users 2000 --writes 5000 --pg postgres://... (or --pg none)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { ManualClock } from '../src/clock.ts';
import { loadConfig } from '../src/config.ts';
import { dayStart } from '../src/seed/generate.ts';
import { seedStore } from '../src/seed/index.ts';
import { openStore, type Store } from '../src/store/db.ts';
import { migrateOrThrow } from '../src/store/migrate.ts';

const { values: args } = parseArgs({
  options: {
    users: { type: 'string', default: '200' },
    writes: { type: 'string', default: '2000' },
    pg: {
      type: 'string',
      default: process.env.HELIXD_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    },
  },
});
const users = Number(args.users);
const writes = Number(args.writes);
const TOKEN = 'bench-admin-token-0123456789-0123456789';
const NOW = Date.UTC(2026, 5, 15, 12);

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

async function measure(label: string, store: Store, url: string): Promise<void> {
  await migrateOrThrow(store);
  const clock = new ManualClock(NOW);
  await seedStore(store, { seed: 1, users, anchor: dayStart(NOW) });
  const config = loadConfig(
    { db: url, secret: 'bench-secret-0123456789', rateLimit: 0, adminToken: TOKEN },
    {},
  );
  const app = await buildApp({ config, store, clock, secret: config.secret as string, logger: false });
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const user = await store.db.selectFrom('users').selectAll().orderBy('id').executeTakeFirstOrThrow();
  const stream = await store.db.selectFrom('streams').selectAll().orderBy('id').executeTakeFirstOrThrow();
  const write = async (method: 'POST' | 'PATCH' | 'PUT', path: string, body: unknown) => {
    const t0 = process.hrtime.bigint();
    const res = await app.inject({ method, url: path, headers, payload: JSON.stringify(body) });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${res.body}`);
    return ms;
  };
  const kinds: [string, (i: number) => Promise<number>][] = [
    [
      'POST /admin/clips (one clip)',
      (i) =>
        write('POST', '/admin/clips', {
          id: `BenchClip-${i}`,
          broadcaster_id: String(user.id),
          creator_id: String(user.id),
          video_id: '',
          game_id: String(stream.game_id),
          language: 'en',
          title: 'bench',
          view_count: i,
          created_at: '2026-06-01T00:00:00Z',
          duration: 30,
          vod_offset: null,
          is_featured: false,
        }),
    ],
    [
      'PATCH /admin/streams/<id> viewer_count',
      (i) => write('PATCH', `/admin/streams/${stream.id}`, { viewer_count: i }),
    ],
    [
      'PUT /admin/users/<id>',
      (i) =>
        write('PUT', `/admin/users/${user.id}`, {
          login: user.login,
          display_name: user.display_name,
          broadcaster_type: user.broadcaster_type,
          description: `bench ${i}`,
          email: user.email,
          created_at: new Date(user.created_at * 1000).toISOString().replace('.000Z', 'Z'),
        }),
    ],
  ];
  for (const [name, fn] of kinds) {
    for (let i = 0; i < 50; i++) await fn(-1 - i).catch(() => undefined); // warm-up (clip ids apart)
    const times: number[] = [];
    for (let i = 0; i < writes; i++) times.push(await fn(i));
    times.sort((a, b) => a - b);
    process.stdout.write(
      `${label.padEnd(10)} ${name.padEnd(40)} p50 ${quantile(times, 0.5).toFixed(2).padStart(6)} ms  p99 ${quantile(times, 0.99).toFixed(2).padStart(6)} ms\n`,
    );
  }
  await app.close();
}

process.stdout.write(`single admin writes, one at a time: ${users} users seeded, ${writes} writes each\n`);
const dir = mkdtempSync(join(tmpdir(), 'helixd-bench-admin-'));
const file = join(dir, 'helixd.db');
const sqlite = openStore({ url: file });
try {
  await measure('sqlite', sqlite, file);
} finally {
  await sqlite.close();
  rmSync(dir, { recursive: true, force: true });
}

if (args.pg !== 'none') {
  const schema = `bench_admin_${process.pid}`;
  const admin = new pg.Client({ connectionString: args.pg });
  try {
    await admin.connect();
  } catch (err) {
    process.stdout.write(`postgres   unreachable at ${args.pg} (${(err as Error).message}): skipped\n`);
    process.exit(0);
  }
  await admin.query(`create schema ${schema}`);
  const store = openStore({ url: args.pg, schema });
  try {
    await measure('postgres', store, args.pg);
  } finally {
    await store.close();
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  }
}
