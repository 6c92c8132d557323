// `serve --live`: every paged operation walked page by page with a small `first` while the world
// moves (its timer at a high rate, and more events made between pages through POST
// /admin/live/step), on both stores: no row is listed twice, and every row present at the start and
// at the end of the walk (read from the store directly) is listed. /streams, /streams/followed and
// /games/top are the listings whose order moves (viewer counts); the others only grow, and the two
// searches' order is names alone, which channels going live and offline do not move.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';

const ADMIN = 'live-admin-token-0123456789abcdefghij';
const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };

/** Makes `events` events of the live world now; what happened, by kind. */
async function step(t: TestApp, events: number): Promise<Record<string, number>> {
  const res = await t.inject({
    method: 'POST',
    url: '/admin/live/step',
    headers: admin,
    payload: JSON.stringify({ events }),
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().kinds;
}

type Body = { data: Record<string, unknown>[]; pagination: { cursor?: string } };

interface Listing {
  name: string;
  /** the path and its selectors, without first/after */
  path: string;
  headers: Record<string, string>;
  first: number;
  /** the ids of a page's rows */
  ids: (body: Body) => string[];
  /** the ids of every row the listing holds now, read from the store */
  direct: () => Promise<string[]>;
}

const field = (name: string) => (body: Body) => body.data.map((r) => String(r[name]));

/** Walks `l` forward, making `between` events after each page; the ids in the order listed. */
async function walk(t: TestApp, l: Listing, between: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const sep = l.path.includes('?') ? '&' : '?';
    const url = `${l.path}${sep}first=${l.first}${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}`;
    const res = await t.get(url, l.headers);
    assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
    const body = res.json() as Body;
    ids.push(...l.ids(body));
    cursor = body.pagination.cursor;
    pages++;
    await step(t, between);
  } while (cursor !== undefined && pages < 1000);
  return { ids, pages };
}

/** Walks `l` and checks: no row twice; every row present at the start and at the end listed. */
async function assertWalk(t: TestApp, l: Listing, between = 8): Promise<number> {
  const atStart = new Set(await l.direct());
  const { ids, pages } = await walk(t, l, between);
  const atEnd = new Set(await l.direct());
  const twice = ids.filter((id, i) => ids.indexOf(id) !== i);
  assert.deepEqual(twice, [], `${l.name}: rows listed twice`);
  const listed = new Set(ids);
  const skipped = [...atStart].filter((id) => atEnd.has(id) && !listed.has(id));
  assert.deepEqual(skipped, [], `${l.name}: rows present throughout the walk but not listed`);
  assert.ok(atStart.size > 0, `${l.name}: nothing to walk`);
  return pages;
}

forEachStore('walks under --live', (kind: StoreKind) => {
  let t: TestApp;
  let demo: number;
  let game: number;
  let video: number;
  let listings: Listing[];

  before(async () => {
    // The timer at 100 events a second, on top of the events each walk makes between pages.
    t = await startTestApp(kind, {
      config: { adminToken: ADMIN, live: true, liveRate: 100, liveSeed: 5 },
    });
    const db = t.store.db;
    demo = t.seed?.demoUserId as number;
    const busiest = await db
      .selectFrom('clips')
      .select(['game_id', sql<number>`count(*)`.as('n')])
      .groupBy('game_id')
      .orderBy('n', 'desc')
      .orderBy('game_id')
      .limit(1)
      .executeTakeFirstOrThrow();
    game = busiest.game_id;
    video = (
      await db
        .selectFrom('markers')
        .select(['video_id', sql<number>`count(*)`.as('n')])
        .where('creator_id', '=', demo)
        .groupBy('video_id')
        .orderBy('n', 'desc')
        .orderBy('video_id')
        .limit(1)
        .executeTakeFirstOrThrow()
    ).video_id;
    const app = bearer(await t.appToken());
    const user = bearer(
      await t.userToken([
        'channel:read:subscriptions',
        'moderator:read:followers',
        'user:read:follows',
        'user:read:broadcast',
        'analytics:read:games',
        'moderation:read',
      ]),
    );
    const ids = async (q: { execute(): Promise<{ id: number | string }[]> }) =>
      (await q.execute()).map((r) => String(r.id));
    listings = [
      {
        name: '/streams',
        path: '/helix/streams',
        headers: app,
        first: 3,
        ids: field('id'),
        direct: () => ids(db.selectFrom('streams').select('id')),
      },
      {
        name: '/streams by language',
        path: '/helix/streams?language=en',
        headers: app,
        first: 2,
        ids: field('id'),
        direct: () => ids(db.selectFrom('streams').select('id').where('language', '=', 'en')),
      },
      {
        name: '/streams/followed',
        path: `/helix/streams/followed?user_id=${demo}`,
        headers: user,
        first: 1,
        ids: field('id'),
        direct: () =>
          ids(
            db
              .selectFrom('streams')
              .innerJoin('follows', 'follows.to_id', 'streams.user_id')
              .select('streams.id')
              .where('follows.from_id', '=', demo),
          ),
      },
      {
        name: '/games/top',
        path: '/helix/games/top',
        headers: app,
        first: 2,
        ids: field('id'),
        direct: () => ids(db.selectFrom('games').select('id').where('stream_count', '>', 0)),
      },
      {
        name: '/clips by broadcaster',
        path: `/helix/clips?broadcaster_id=${demo}`,
        headers: app,
        first: 50,
        ids: field('id'),
        direct: () => ids(db.selectFrom('clips').select('id').where('broadcaster_id', '=', demo)),
      },
      {
        name: '/clips by game',
        path: `/helix/clips?game_id=${game}`,
        headers: app,
        first: 20,
        ids: field('id'),
        direct: () => ids(db.selectFrom('clips').select('id').where('game_id', '=', game)),
      },
      {
        name: '/videos by user',
        path: `/helix/videos?user_id=${demo}`,
        headers: app,
        first: 10,
        ids: field('id'),
        direct: () => ids(db.selectFrom('videos').select('id').where('user_id', '=', demo)),
      },
      {
        name: '/videos by game',
        path: `/helix/videos?game_id=${game}`,
        headers: app,
        first: 10,
        ids: field('id'),
        direct: () => ids(db.selectFrom('videos').select('id').where('game_id', '=', game)),
      },
      {
        name: '/subscriptions',
        path: `/helix/subscriptions?broadcaster_id=${demo}`,
        headers: user,
        first: 20,
        ids: field('user_id'),
        direct: () =>
          ids(db.selectFrom('subscriptions').select('user_id as id').where('broadcaster_id', '=', demo)),
      },
      {
        name: '/channels/followers',
        path: `/helix/channels/followers?broadcaster_id=${demo}`,
        headers: user,
        first: 50,
        ids: field('user_id'),
        direct: () => ids(db.selectFrom('follows').select('from_id as id').where('to_id', '=', demo)),
      },
      {
        name: '/channels/followed',
        path: `/helix/channels/followed?user_id=${demo}`,
        headers: user,
        first: 5,
        ids: field('broadcaster_id'),
        direct: () => ids(db.selectFrom('follows').select('to_id as id').where('from_id', '=', demo)),
      },
      {
        name: '/moderation/moderators',
        path: `/helix/moderation/moderators?broadcaster_id=${demo}`,
        headers: user,
        first: 3,
        ids: field('user_id'),
        direct: () =>
          ids(db.selectFrom('moderators').select('user_id as id').where('broadcaster_id', '=', demo)),
      },
      {
        name: '/streams/markers by video',
        path: `/helix/streams/markers?video_id=${video}`,
        headers: user,
        first: 3,
        ids: (body) =>
          body.data.flatMap((u) =>
            (u.videos as { markers: { id: string }[] }[]).flatMap((v) => v.markers.map((m) => m.id)),
          ),
        direct: () =>
          ids(
            db
              .selectFrom('markers')
              .select('id')
              .where('video_id', '=', video)
              .where('creator_id', '=', demo),
          ),
      },
      {
        name: '/search/channels',
        path: '/helix/search/channels?query=b',
        headers: app,
        first: 3,
        ids: field('id'),
        // Logins and display names as the search matches them (docs/api.md): the world renames nobody.
        direct: async () =>
          (await db.selectFrom('users').select(['id', 'login', 'display_name']).execute())
            .filter((u) =>
              [u.login, u.display_name].some((n) =>
                n
                  .replace(/[A-Z]/g, (c) => c.toLowerCase())
                  .replace(/[ _]/g, '')
                  .startsWith('b'),
              ),
            )
            .map((u) => String(u.id)),
      },
      {
        name: '/search/categories',
        path: '/helix/search/categories?query=s',
        headers: app,
        first: 2,
        ids: field('id'),
        // A name or one of its words starting with s (the demo names are words and spaces).
        direct: async () =>
          (await db.selectFrom('games').select(['id', 'name']).execute())
            .filter((g) => g.name.split(/[^0-9A-Za-z]+/).some((w) => /^s/i.test(w)))
            .map((g) => String(g.id)),
      },
      {
        name: '/analytics/games',
        path: '/helix/analytics/games',
        headers: user,
        first: 1,
        ids: field('game_id'),
        direct: async () => {
          const res = await t.get('/helix/analytics/games?first=100', user);
          return field('game_id')(res.json() as Body);
        },
      },
    ];
  });
  after(() => t.close());

  it('every paged operation: no row twice, none present throughout skipped', async () => {
    const movesBefore = await t.store.db
      .selectFrom('stream_moves')
      .select(sql<number>`count(*)`.as('n'))
      .executeTakeFirstOrThrow();
    for (const l of listings) {
      const pages = await assertWalk(t, l);
      assert.ok(pages > 1 || l.name === '/analytics/games', `${l.name}: the walk crosses pages (${pages})`);
    }
    // The world did move under the walks: viewer counts changed many times.
    const movesAfter = await t.store.db
      .selectFrom('stream_moves')
      .select(sql<number>`count(*)`.as('n'))
      .executeTakeFirstOrThrow();
    assert.ok(Number(movesAfter.n) - Number(movesBefore.n) > 100, 'viewer counts moved during the walks');
    const metrics = (await t.get('/metrics')).body;
    assert.match(metrics, /helixd_live_events_total\{kind="viewers"\} [1-9]/);
  });

  it('a walk of /streams whose rows all move between pages still lists each once', async () => {
    // Every stream's count changes between the pages (many events per page), so most rows cross
    // the cursor in one direction or the other.
    const l = listings[0] as Listing;
    for (let i = 0; i < 3; i++) await assertWalk(t, l, 100);
  });

  it('a walk of /games/top while games leave and join it lists each game present throughout once', async () => {
    const l = listings.find((x) => x.name === '/games/top') as Listing;
    for (let i = 0; i < 3; i++) await assertWalk(t, l, 100);
  });
});

describe('walks under --live: the check can fail', () => {
  it('the same walk of /streams with the moves forgotten before each page repeats or skips rows', async () => {
    // As if every page came more than MOVES_KEPT_SECONDS after the first: a cursor's epoch then
    // finds no move after it and each page is read in the order of the moment, as a plain keyset
    // walk would be. The checks above must see that.
    const t = await startTestApp('sqlite', {
      config: { adminToken: ADMIN, live: true, liveRate: 0, liveSeed: 5 },
    });
    const streamIds = async () =>
      new Set((await t.store.db.selectFrom('streams').select('id').execute()).map((r) => String(r.id)));
    try {
      const app = bearer(await t.appToken());
      let broken = 0;
      for (let round = 0; round < 5; round++) {
        const atStart = await streamIds();
        const ids: string[] = [];
        let cursor: string | undefined;
        do {
          await t.store.db.deleteFrom('stream_moves').execute();
          const res = await t.get(`/helix/streams?first=3${cursor ? `&after=${cursor}` : ''}`, app);
          assert.equal(res.statusCode, 200, res.body);
          const body = res.json() as Body;
          ids.push(...field('id')(body));
          cursor = body.pagination.cursor;
          await step(t, 150);
        } while (cursor !== undefined);
        const atEnd = await streamIds();
        const twice = ids.filter((id, i) => ids.indexOf(id) !== i).length;
        const skipped = [...atStart].filter((id) => atEnd.has(id) && !ids.includes(id)).length;
        if (twice + skipped > 0) broken++;
      }
      assert.ok(broken > 0, 'a walk without its moves neither repeated nor skipped a row');
    } finally {
      await t.close();
    }
  });
});
