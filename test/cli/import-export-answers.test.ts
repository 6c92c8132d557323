// `helixd export` of a seeded store of 2,000 users, then `helixd import` into an empty store: every
// public read (the 20 of docs/api.md, the report downloads and the two legacy operations
// included) answers byte for byte the same on both, page after page, on both stores.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { OPERATION_SCOPES } from '../../src/auth/scopes.ts';
import { mintToken } from '../../src/auth/tokens.ts';
import { forEachStore, startTestApp, TEST_NOW, type TestApp } from '../support/apps.ts';
import { helixd } from '../support/cli.ts';
import { cliDb, type StoreKind } from '../support/stores.ts';

interface Answer {
  url: string;
  headers: Record<string, string>;
  status: number;
  body: string;
}

/** GET `url` and the pages after it (up to `pages`), following each answer's cursor. */
async function walk(
  t: TestApp,
  url: string,
  headers: Record<string, string>,
  pages = 1000,
): Promise<Answer[]> {
  const answers: Answer[] = [];
  let next: string | undefined = url;
  while (next && answers.length < pages) {
    const res = await t.app.inject({ method: 'GET', url: next, headers });
    answers.push({ url: next, headers, status: res.statusCode, body: res.body });
    const cursor: unknown = res.statusCode === 200 ? res.json().pagination?.cursor : undefined;
    const base: string = next;
    next =
      typeof cursor === 'string'
        ? `${base.replace(/[?&]after=[^&]*/, '')}${base.includes('?') ? '&' : '?'}after=${encodeURIComponent(cursor)}`
        : undefined;
  }
  return answers;
}

forEachStore(
  'helixd export then helixd import: identical answers from every operation (2,000 users)',
  (kind: StoreKind) => {
    let a: TestApp;
    let b: TestApp;
    const dir = mkdtempSync(join(tmpdir(), 'helixd-answers-'));

    before(async () => {
      const options = { config: { legacy: true } };
      a = await startTestApp(kind, { users: 2000, ...options });
      b = await startTestApp(kind, { empty: true, ...options });
      const exported = await helixd(['export', '--db', cliDb(a.storeOptions)]);
      assert.equal(exported.code, 0, exported.stderr);
      const file = join(dir, 'world.ndjson');
      writeFileSync(file, exported.stdout);
      const imported = await helixd(['import', file, '--db', cliDb(b.storeOptions)]);
      assert.equal(imported.code, 0, imported.stderr);
    });
    after(async () => {
      await a?.close();
      await b?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('answers every request of the source store byte for byte the same', async () => {
      const seed = a.seed;
      assert.ok(seed);
      const db = a.store.db;
      const now = Math.floor(TEST_NOW / 1000);
      // The same token in both stores: minted into each, for the same client, user and scopes.
      const tokenFor = async (userId?: number) => {
        const minted = await Promise.all(
          [a, b].map((t) =>
            mintToken(t.store.db, {
              kind: userId === undefined ? 'app' : 'user',
              clientId: seed.demoClientId,
              userId: userId ?? null,
              scopes: userId === undefined ? [] : OPERATION_SCOPES,
              ttl: 3600,
              now,
            }),
          ),
        );
        return minted.map((m) => ({
          authorization: `Bearer ${m.access_token}`,
          'client-id': seed.demoClientId,
        }));
      };
      // Each request is sent to both stores, with that store's token (same user, client and scopes).
      const requests: { url: string; user?: number; pages?: number }[] = [];

      const users = await db.selectFrom('users').select(['id', 'login']).orderBy('id').execute();
      const games = await db.selectFrom('games').select(['id', 'name']).orderBy('id').execute();
      const clips = await db.selectFrom('clips').select('id').orderBy('id').limit(100).execute();
      const videos = await db.selectFrom('videos').select('id').orderBy('id').limit(100).execute();
      const sample = [seed.demoUserId, ...users.filter((_, i) => i % 100 === 7).map((u) => u.id)];
      const subscriptions = await db
        .selectFrom('subscriptions')
        .select(['broadcaster_id', 'user_id'])
        .execute();
      /** Two channels the user subscribes to, if any, and one it does not (its own). */
      const subscribedTo = (u: number) => [
        ...subscriptions
          .filter((s) => s.user_id === u)
          .slice(0, 2)
          .map((s) => s.broadcaster_id),
        u,
      ];
      const q = (name: string, values: readonly (string | number)[]) =>
        values.map((v) => `${name}=${encodeURIComponent(String(v))}`).join('&');

      // Lookups by lists of ids, logins and names.
      const lookups: [string, string, (string | number)[]][] = [
        ['users', 'id', users.slice(0, 100).map((u) => u.id)],
        ['users', 'login', users.slice(-100).map((u) => u.login)],
        ['games', 'id', games.slice(0, 100).map((g) => g.id)],
        ['games', 'name', games.slice(-50).map((g) => g.name)],
        ['clips', 'id', clips.map((c) => c.id)],
        ['videos', 'id', videos.map((v) => v.id)],
      ];
      for (const [path, name, values] of lookups) requests.push({ url: `/helix/${path}?${q(name, values)}` });
      requests.push({ url: '/helix/games/top?first=100' }, { url: '/helix/streams?first=100' });
      // The searches read keys the triggers wrote as the import's rows went in (migration 018).
      for (const letter of ['a', 'b', 'd', 's']) {
        requests.push(
          { url: `/helix/search/categories?query=${letter}&first=100`, pages: 3 },
          { url: `/helix/search/channels?query=${letter}&first=100`, pages: 3 },
          { url: `/helix/search/channels?query=${letter}&live_only=true&first=100`, pages: 3 },
        );
      }
      for (const u of users.filter((_, i) => i % 150 === 3))
        requests.push({ url: `/helix/search/channels?query=${encodeURIComponent(u.login)}` });
      for (const g of games.filter((_, i) => i % 10 === 0)) {
        requests.push(
          { url: `/helix/clips?game_id=${g.id}&first=100`, pages: 3 },
          { url: `/helix/videos?game_id=${g.id}&sort=views&first=100`, pages: 3 },
          { url: `/helix/streams?game_id=${g.id}` },
        );
      }
      for (const u of sample) {
        requests.push(
          { url: '/helix/users', user: u },
          { url: `/helix/clips?broadcaster_id=${u}&first=100` },
          { url: `/helix/videos?user_id=${u}&first=100` },
          { url: `/helix/streams?user_id=${u}` },
          { url: `/helix/subscriptions?broadcaster_id=${u}&first=100`, user: u },
          { url: `/helix/streams/markers?user_id=${u}&first=100`, user: u },
          { url: `/helix/channels/followers?broadcaster_id=${u}&first=100`, user: u },
          { url: `/helix/channels/followed?user_id=${u}&first=100`, user: u },
          { url: `/helix/streams/followed?user_id=${u}&first=5`, user: u },
          { url: `/helix/moderation/moderators?broadcaster_id=${u}&first=2`, user: u },
          // A subscription of the user's or not (the 404 is compared too).
          ...subscribedTo(u).map((b) => ({
            url: `/helix/subscriptions/user?broadcaster_id=${b}&user_id=${u}`,
            user: u,
          })),
          { url: `/helix/users/follows?to_id=${u}&first=100` },
          { url: `/helix/users/follows?from_id=${u}&first=100` },
          { url: `/helix/tags/streams?broadcaster_id=${u}` },
          { url: `/helix/analytics/games?first=100`, user: u },
          { url: `/helix/analytics/extensions?first=100`, user: u },
        );
      }

      const tokens = new Map<number | undefined, Record<string, string>[]>();
      const operations = new Set<string>();
      let compared = 0;
      let ok = 0;
      const differ: string[] = [];
      for (const r of requests) {
        if (!tokens.has(r.user)) tokens.set(r.user, await tokenFor(r.user));
        const [ha, hb] = tokens.get(r.user) as Record<string, string>[];
        const answers = await walk(a, r.url, ha as Record<string, string>, r.pages);
        for (const want of answers) {
          // Refusals count too (a sampled user without videos has no markers: a 404 on both).
          const got = await b.app.inject({ method: 'GET', url: want.url, headers: hb });
          if (got.statusCode !== want.status || got.body !== want.body) differ.push(want.url);
          if (want.status === 200) ok++;
          operations.add(want.url.replace(/\?.*/, ''));
          compared++;
          // Report downloads: the signed URLs are the same on both, and so are the CSV files.
          const reports =
            want.status === 200 && want.url.includes('/analytics/') ? JSON.parse(want.body).data : [];
          for (const report of reports) {
            const path = new URL(report.URL).pathname + new URL(report.URL).search;
            const [ra, rb] = await Promise.all([a, b].map((t) => t.app.inject({ method: 'GET', url: path })));
            assert.equal(ra?.statusCode, 200, path);
            if (rb?.body !== ra?.body) differ.push(path);
            ok++;
            operations.add(path.replace(/\/[^/]*\.csv.*/, ''));
            compared++;
          }
        }
      }
      assert.deepEqual(differ, [], 'answers that differ');
      assert.deepEqual(
        [...operations].sort(),
        [
          '/helix/analytics/extensions',
          '/helix/analytics/games',
          '/helix/channels/followed',
          '/helix/channels/followers',
          '/helix/clips',
          '/helix/games',
          '/helix/games/top',
          '/helix/moderation/moderators',
          '/helix/search/categories',
          '/helix/search/channels',
          '/helix/streams',
          '/helix/streams/followed',
          '/helix/streams/markers',
          '/helix/subscriptions',
          '/helix/subscriptions/user',
          '/helix/tags/streams',
          '/helix/users',
          '/helix/users/follows',
          '/helix/videos',
          '/reports/extensions',
          '/reports/games',
        ],
        'all 20 operations (reports of games and of extensions are one)',
      );
      assert.ok(compared > 300 && ok > 0.9 * compared, `${compared} answers compared, ${ok} of them 200`);
    });
  },
);
