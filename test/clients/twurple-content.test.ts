// Twurple 8 (@twurple/api) reads the content operations from a real listening helixd: with
// TWURPLE_MOCK_API_PORT set it sends every API call to http://localhost:<port>/mock/... The objects
// it parses are checked field by field against the store, with both the plain methods (one page)
// and the `...Paginated` ones (every page, following the cursors).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ApiClient } from '@twurple/api';
import { StaticAuthProvider } from '@twurple/auth';
import type { ClipRow, GameRow, UserRow, VideoRow } from '../../src/store/schema.ts';
import { TIER_POINTS } from '../../src/store/subscriptions.ts';
import { rfc3339 } from '../../src/wire/datetime.ts';
import { hms } from '../../src/wire/links.ts';
import { forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';

const SITE = 'https://streams.example.com';

forEachStore('Twurple reads the content operations from helixd', (kind: StoreKind) => {
  let t: TestApp;
  let api: ApiClient;
  let demo: number;
  let users: Map<number, UserRow>;
  const previousPort = process.env.TWURPLE_MOCK_API_PORT;

  before(async () => {
    // 1,000 users and 150 more live games: every `...Paginated` call below follows cursors over
    // several pages of 100.
    t = await startTestApp(kind, { users: 1000 });
    demo = t.seed?.demoUserId as number;
    await t.store.db
      .insertInto('games')
      .values(
        Array.from({ length: 150 }, (_, i) => ({
          id: 900_000 + i,
          name: `Extra game ${i}`,
          igdb_id: '',
          owner_id: null,
          viewer_count: (i * 37) % 400,
          stream_count: 1,
        })),
      )
      .execute();
    // Twurple calls http://localhost:<port>: listen on every address localhost names.
    await t.app.listen({ port: 0, host: 'localhost' });
    const addr = t.app.server.address();
    // Set before the ApiClient is built: Twurple reads it for each call's URL.
    process.env.TWURPLE_MOCK_API_PORT = String(typeof addr === 'object' && addr ? addr.port : 0);
    const token = await t.userToken(['channel:read:subscriptions', 'user:read:broadcast']);
    api = new ApiClient({ authProvider: new StaticAuthProvider(t.seed?.demoClientId as string, token) });
    users = new Map((await t.store.db.selectFrom('users').selectAll().execute()).map((u) => [u.id, u]));
  });
  after(async () => {
    if (previousPort === undefined) delete process.env.TWURPLE_MOCK_API_PORT;
    else process.env.TWURPLE_MOCK_API_PORT = previousPort;
    await t.close();
  });

  const user = (id: number) => users.get(id) as UserRow;

  it('top games: getTopGames and getTopGamesPaginated match the store', async () => {
    const rows = await t.store.db
      .selectFrom('games')
      .selectAll()
      .where('stream_count', '>', 0)
      .orderBy('viewer_count', 'desc')
      .orderBy('id', 'desc')
      .execute();
    const check = (g: { id: string; name: string; igdbId: string | null; boxArtUrl: string }, r: GameRow) => {
      assert.deepEqual(
        { id: g.id, name: g.name, igdbId: g.igdbId, boxArtUrl: g.boxArtUrl },
        {
          id: String(r.id),
          name: r.name,
          igdbId: r.igdb_id || null,
          boxArtUrl: `${SITE}/media/box-art/${r.id}-{width}x{height}.jpg`,
        },
      );
    };
    const page = await api.games.getTopGames({ limit: 7 });
    assert.equal(page.data.length, 7);
    page.data.forEach((g, i) => {
      check(g, rows[i] as GameRow);
    });
    assert.ok(page.cursor);
    const all = await api.games.getTopGamesPaginated().getAll();
    assert.ok(rows.length > 100);
    assert.equal(all.length, rows.length);
    all.forEach((g, i) => {
      check(g, rows[i] as GameRow);
    });
  });

  it('subscriptions: getSubscriptions, getSubscriptionsPaginated and getSubscriptionsForUsers match the store', async () => {
    const rows = await t.store.db
      .selectFrom('subscriptions')
      .selectAll()
      .where('broadcaster_id', '=', demo)
      .orderBy('created_at', 'desc')
      .orderBy('user_id', 'desc')
      .execute();
    const points = rows.reduce((sum, r) => sum + TIER_POINTS[r.tier], 0);
    const b = user(demo);
    type Sub = Awaited<ReturnType<ApiClient['subscriptions']['getSubscriptions']>>['data'][number];
    const check = (s: Sub, r: (typeof rows)[number]) => {
      const gifter = r.is_gift && r.gifter_id !== null ? user(r.gifter_id) : undefined;
      assert.deepEqual(
        {
          broadcasterId: s.broadcasterId,
          broadcasterName: s.broadcasterName,
          broadcasterDisplayName: s.broadcasterDisplayName,
          userId: s.userId,
          userName: s.userName,
          userDisplayName: s.userDisplayName,
          tier: s.tier,
          isGift: s.isGift,
          gifterId: s.gifterId,
          gifterName: s.gifterName,
          gifterDisplayName: s.gifterDisplayName,
        },
        {
          broadcasterId: String(demo),
          broadcasterName: b.login,
          broadcasterDisplayName: b.display_name,
          userId: String(r.user_id),
          userName: user(r.user_id).login,
          userDisplayName: user(r.user_id).display_name,
          tier: r.tier,
          isGift: r.is_gift === 1,
          gifterId: gifter ? String(gifter.id) : null,
          gifterName: gifter ? gifter.login : null,
          gifterDisplayName: gifter ? gifter.display_name : null,
        },
      );
    };
    const page = await api.subscriptions.getSubscriptions(demo, { limit: 10 });
    assert.equal(page.total, rows.length);
    assert.equal(page.points, points);
    page.data.forEach((s, i) => {
      check(s, rows[i] as (typeof rows)[number]);
    });
    const paginated = api.subscriptions.getSubscriptionsPaginated(demo);
    const all = await paginated.getAll();
    assert.ok(rows.length > 100);
    assert.equal(all.length, rows.length);
    all.forEach((s, i) => {
      check(s, rows[i] as (typeof rows)[number]);
    });
    assert.equal(await paginated.getTotalCount(), rows.length);
    assert.equal(await paginated.getPoints(), points);
    const some = [rows[5], rows[2]].map((r) => String(r?.user_id));
    const checked = await api.subscriptions.getSubscriptionsForUsers(demo, some);
    assert.deepEqual(
      checked.map((s) => s.userId),
      [String(rows[2]?.user_id), String(rows[5]?.user_id)],
    );
  });

  it('stream markers: by user and by video, plain and paginated, match the store', async () => {
    const videos = await t.store.db
      .selectFrom('videos')
      .select('id')
      .where('user_id', '=', demo)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(2)
      .execute();
    const markersOf = (video: number) =>
      t.store.db
        .selectFrom('markers')
        .selectAll()
        .where('video_id', '=', video)
        .where('creator_id', '=', demo)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute();
    type M = Awaited<ReturnType<ApiClient['streams']['getStreamMarkersForUser']>>['data'][number];
    const check = (got: M[], rows: Awaited<ReturnType<typeof markersOf>>) => {
      assert.equal(got.length, rows.length);
      got.forEach((m, i) => {
        const r = rows[i];
        assert.ok(r);
        assert.deepEqual(
          {
            id: m.id,
            videoId: m.videoId,
            description: m.description,
            positionInSeconds: m.positionInSeconds,
            creationDate: m.creationDate.toISOString().replace('.000Z', 'Z'),
            url: m.url,
          },
          {
            id: r.id,
            videoId: String(r.video_id),
            description: r.description,
            positionInSeconds: r.position_seconds,
            creationDate: rfc3339(r.created_at),
            url: `${SITE}/videos/${r.video_id}?t=${hms(r.position_seconds)}`,
          },
        );
      });
    };
    const latest = await markersOf(videos[0]?.id as number);
    assert.ok(latest.length > 100);
    check((await api.streams.getStreamMarkersForUser(demo, { limit: 20 })).data, latest.slice(0, 20));
    check(await api.streams.getStreamMarkersForUserPaginated(demo).getAll(), latest);
    const older = videos[1]?.id as number;
    const olderRows = await markersOf(older);
    assert.ok(olderRows.length > 0);
    check(
      (await api.streams.getStreamMarkersForVideo(demo, String(older), { limit: 5 })).data,
      olderRows.slice(0, 5),
    );
    check(await api.streams.getStreamMarkersForVideoPaginated(demo, String(older)).getAll(), olderRows);
  });

  type Clip = Awaited<ReturnType<ApiClient['clips']['getClipsByIds']>>[number];
  const checkClip = (c: Clip, r: ClipRow) => {
    assert.deepEqual(
      {
        id: c.id,
        broadcasterId: c.broadcasterId,
        broadcasterDisplayName: c.broadcasterDisplayName,
        creatorId: c.creatorId,
        creatorDisplayName: c.creatorDisplayName,
        videoId: c.videoId,
        gameId: c.gameId,
        language: c.language,
        title: c.title,
        views: c.views,
        creationDate: c.creationDate.toISOString().replace('.000Z', 'Z'),
        duration: c.duration,
        vodOffset: c.vodOffset,
        isFeatured: c.isFeatured,
      },
      {
        id: r.id,
        broadcasterId: String(r.broadcaster_id),
        broadcasterDisplayName: user(r.broadcaster_id).display_name,
        creatorId: String(r.creator_id),
        creatorDisplayName: user(r.creator_id).display_name,
        videoId: r.video_id === null ? '' : String(r.video_id),
        gameId: String(r.game_id),
        language: r.language,
        title: r.title,
        views: r.view_count,
        creationDate: rfc3339(r.created_at),
        duration: r.duration_ds / 10,
        vodOffset: r.vod_offset,
        isFeatured: r.is_featured === 1,
      },
    );
  };
  const clipsWhere = (column: 'broadcaster_id' | 'game_id', value: number) =>
    t.store.db
      .selectFrom('clips')
      .selectAll()
      .where(column, '=', value)
      .orderBy('view_count', 'desc')
      .orderBy('id', 'desc')
      .execute();

  it('clips: by broadcaster, by game (plain and paginated) and by ids match the store', async () => {
    const byBroadcaster = await clipsWhere('broadcaster_id', demo);
    const page = await api.clips.getClipsForBroadcaster(demo, { limit: 10 });
    page.data.forEach((c, i) => {
      checkClip(c, byBroadcaster[i] as ClipRow);
    });
    const all = await api.clips.getClipsForBroadcasterPaginated(demo).getAll();
    assert.equal(all.length, byBroadcaster.length);
    all.forEach((c, i) => {
      checkClip(c, byBroadcaster[i] as ClipRow);
    });

    const game = byBroadcaster[0]?.game_id as number;
    const byGame = await clipsWhere('game_id', game);
    (await api.clips.getClipsForGame(String(game), { limit: 10 })).data.forEach((c, i) => {
      checkClip(c, byGame[i] as ClipRow);
    });
    const allGame = await api.clips.getClipsForGamePaginated(String(game)).getAll();
    assert.equal(allGame.length, byGame.length);
    allGame.forEach((c, i) => {
      checkClip(c, byGame[i] as ClipRow);
    });

    const ids = [byGame[3], byBroadcaster[1], byGame[0]].map((r) => r?.id as string);
    const byIds = await api.clips.getClipsByIds(ids);
    assert.deepEqual(
      byIds.map((c) => c.id),
      ids,
    );
    const rows = new Map([...byBroadcaster, ...byGame].map((r) => [r.id, r]));
    for (const c of byIds) checkClip(c, rows.get(c.id) as ClipRow);
  });

  type Video = Awaited<ReturnType<ApiClient['videos']['getVideosByIds']>>[number];
  const checkVideo = (v: Video, r: VideoRow) => {
    const owner = user(r.user_id);
    assert.deepEqual(
      {
        id: v.id,
        userId: v.userId,
        userName: v.userName,
        userDisplayName: v.userDisplayName,
        title: v.title,
        description: v.description,
        creationDate: v.creationDate.toISOString().replace('.000Z', 'Z'),
        publishDate: v.publishDate.toISOString().replace('.000Z', 'Z'),
        url: v.url,
        isPublic: v.isPublic,
        views: v.views,
        language: v.language,
        type: v.type,
        durationInSeconds: v.durationInSeconds,
        streamId: v.streamId,
        mutedSegments: v.mutedSegmentData,
      },
      {
        id: String(r.id),
        userId: String(r.user_id),
        userName: owner.login,
        userDisplayName: owner.display_name,
        title: r.title,
        description: r.description,
        creationDate: rfc3339(r.created_at),
        publishDate: rfc3339(r.published_at),
        url: `${SITE}/videos/${r.id}`,
        isPublic: true,
        views: r.view_count,
        language: r.language,
        type: r.type,
        durationInSeconds: r.duration_s,
        streamId: r.stream_id === null ? null : String(r.stream_id),
        mutedSegments: r.muted_segments === null ? [] : JSON.parse(r.muted_segments),
      },
    );
  };
  const videosWhere = (column: 'user_id' | 'game_id', value: number) =>
    t.store.db
      .selectFrom('videos')
      .selectAll()
      .where(column, '=', value)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();

  it('videos: by user, by game (plain and paginated) and by ids match the store', async () => {
    const byUser = await videosWhere('user_id', demo);
    (await api.videos.getVideosByUser(demo, { limit: 10 })).data.forEach((v, i) => {
      checkVideo(v, byUser[i] as VideoRow);
    });
    const all = await api.videos.getVideosByUserPaginated(demo).getAll();
    assert.equal(all.length, byUser.length);
    all.forEach((v, i) => {
      checkVideo(v, byUser[i] as VideoRow);
    });

    const game = byUser[0]?.game_id as number;
    const byGame = await videosWhere('game_id', game);
    (await api.videos.getVideosByGame(String(game), { limit: 10 })).data.forEach((v, i) => {
      checkVideo(v, byGame[i] as VideoRow);
    });
    const allGame = await api.videos.getVideosByGamePaginated(String(game)).getAll();
    assert.equal(allGame.length, byGame.length);
    allGame.forEach((v, i) => {
      checkVideo(v, byGame[i] as VideoRow);
    });

    const ids = [byGame[2], byUser[4], byUser[0]].map((r) => String(r?.id));
    const byIds = await api.videos.getVideosByIds(ids);
    assert.deepEqual(
      byIds.map((v) => v.id),
      ids,
    );
    const rows = new Map([...byUser, ...byGame].map((r) => [String(r.id), r]));
    for (const v of byIds) checkVideo(v, rows.get(v.id) as VideoRow);
  });
});
