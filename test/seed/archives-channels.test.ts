// The demo data's live streams and channels (src/seed/generate.ts, docs/your-data.md): every live
// stream but one in ten records into its archive video, the demo broadcaster's always, so that POST
// /streams/markers answers both ways on a seeded store; and every user who streams or has streamed
// has a channel row, a live user's holding its stream's title, game, language and tags.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { rfc3339 } from '../../src/wire/datetime.ts';
import { hms } from '../../src/wire/links.ts';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';

const NO_VOD = "The user hasn't enabled video on demand (VOD).";
const LABELS = [
  'DebatedSocialIssuesAndPolitics',
  'DrugsIntoxication',
  'Gambling',
  'MatureGame',
  'ProfanityVulgarity',
  'SexualThemes',
  'ViolentGraphic',
];

interface Video {
  id: string;
  stream_id: string | null;
  user_id: string;
  title: string;
  created_at: string;
  published_at: string;
  language: string;
  type: string;
  duration: string;
}

forEachStore('the demo data: live streams, their archive videos, the channels', (kind: StoreKind) => {
  let t: TestApp;
  let demo: number;
  let anchor: number;
  /** the live streams, by user */
  let streams: Map<
    number,
    {
      id: number;
      user_id: number;
      game_id: number;
      title: string;
      language: string;
      tags: string;
      started_at: number;
    }
  >;
  /** the archive videos of live streams, by stream id */
  let archives: Map<number, { id: number; game_id: number }[]>;

  before(async () => {
    t = await startTestApp(kind);
    demo = t.seed?.demoUserId as number;
    anchor = t.seed?.anchor as number;
    const db = t.store.db;
    streams = new Map((await db.selectFrom('streams').selectAll().execute()).map((s) => [s.user_id, s]));
    archives = new Map();
    const rows = await db
      .selectFrom('videos')
      .innerJoin('streams', 'streams.id', 'videos.stream_id')
      .select(['videos.id', 'videos.stream_id', 'videos.game_id'])
      .where('videos.type', '=', 'archive')
      .orderBy('videos.id')
      .execute();
    for (const v of rows) {
      const list = archives.get(v.stream_id as number) ?? [];
      list.push({ id: v.id, game_id: v.game_id });
      archives.set(v.stream_id as number, list);
    }
  });
  after(() => t.close());

  /** The live broadcasters with an archive video (or without), by user id. */
  const broadcasters = (withArchive: boolean) =>
    [...streams.values()]
      .filter((s) => archives.has(s.id) === withArchive)
      .map((s) => s.user_id)
      .sort((a, b) => a - b);

  it("every live stream but one in ten records into one archive video, the demo broadcaster's always; GET /videos shows it", async () => {
    const n = streams.size;
    assert.ok(n >= 20, `${n} live streams`);
    assert.equal(broadcasters(false).length, Math.max(1, Math.round(n * 0.1)));
    assert.ok(
      archives.has((streams.get(demo) as { id: number }).id),
      "the demo broadcaster's stream records",
    );
    for (const [stream, list] of archives)
      assert.equal(list.length, 1, `stream ${stream}: ${list.length} archives`);

    const token = await t.appToken();
    const byStream = [...archives].map(([stream, [v]]) => [stream, (v as { id: number }).id] as const);
    for (let i = 0; i < byStream.length; i += 100) {
      const ids = byStream.slice(i, i + 100).map(([, v]) => `id=${v}`);
      const res = await t.get(`/helix/videos?${ids.join('&')}`, bearer(token));
      assert.equal(res.statusCode, 200, res.body);
      const videos = res.json().data as Video[];
      assert.equal(videos.length, ids.length);
      for (const v of videos) {
        const s = [...streams.values()].find((x) => String(x.id) === v.stream_id);
        assert.ok(s, `video ${v.id} records no live stream`);
        const started = rfc3339(s.started_at);
        assert.deepEqual(
          [v.user_id, v.title, v.language, v.type, v.created_at, v.published_at],
          [String(s.user_id), s.title, s.language, 'archive', started, started],
          `video ${v.id}`,
        );
        // its length as it stood when the seed wrote it: the time live at the seed's moment
        assert.equal(v.duration, hms(anchor - s.started_at), `video ${v.id}`);
        assert.equal(archives.get(s.id)?.[0]?.game_id, s.game_id, `video ${v.id}: the stream's game`);
      }
    }
  });

  it('POST /streams/markers marks a live stream in its archive video, listed at once; without one it is the 404', async () => {
    const scopes = ['channel:manage:broadcast', 'user:read:broadcast'];
    for (const user of [demo, broadcasters(true).find((u) => u !== demo) as number]) {
      const token = await t.userToken(scopes, user);
      const res = await t.inject({
        method: 'POST',
        url: '/helix/streams/markers',
        headers: {
          ...bearer(token),
          'client-id': t.seed?.demoClientId as string,
          'content-type': 'application/json',
        },
        payload: JSON.stringify({ user_id: String(user), description: 'Seeded and live' }),
      });
      assert.equal(res.statusCode, 200, `${user}: ${res.body}`);
      const marker = res.json().data[0];
      const stream = streams.get(user) as { id: number; started_at: number };
      assert.equal(marker.position_seconds, Math.floor(t.clock.now() / 1000) - stream.started_at);
      const archive = (archives.get(stream.id) as { id: number }[])[0]?.id;
      for (const q of [`video_id=${archive}`, `user_id=${user}`]) {
        const list = await t.get(`/helix/streams/markers?${q}&first=100`, bearer(token));
        assert.equal(list.statusCode, 200, list.body);
        const [group] = list.json().data;
        assert.equal(group.videos[0].video_id, String(archive), q);
        assert.ok(
          group.videos[0].markers.some((m: { id: string }) => m.id === marker.id),
          `${q}: the new marker is listed`,
        );
      }
    }
    for (const user of broadcasters(false)) {
      const res = await t.inject({
        method: 'POST',
        url: '/helix/streams/markers',
        headers: {
          ...bearer(await t.userToken(['channel:manage:broadcast'], user)),
          'client-id': t.seed?.demoClientId as string,
          'content-type': 'application/json',
        },
        payload: JSON.stringify({ user_id: String(user) }),
      });
      assert.equal(res.statusCode, 404, `${user}: ${res.body}`);
      assert.deepEqual(res.json(), { error: 'Not Found', status: 404, message: NO_VOD });
    }
  });

  it("the channels: a live user's holds its stream's values, an offline one's its last past broadcast's; who never streamed has none", async () => {
    const db = t.store.db;
    const users = await db.selectFrom('users').select(['id', 'broadcaster_type']).orderBy('id').execute();
    const channels = new Map(
      (await db.selectFrom('channels').selectAll().execute()).map((c) => [c.broadcaster_id, c]),
    );
    const past = await db
      .selectFrom('videos')
      .select(['user_id', 'title', 'game_id', 'language'])
      .where('type', '=', 'archive')
      .where('stream_id', 'not in', db.selectFrom('streams').select('id'))
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    const lastPast = new Map<number, (typeof past)[number]>();
    for (const v of past) if (!lastPast.has(v.user_id)) lastPast.set(v.user_id, v);
    let offlineChannels = 0;
    let extras = 0;
    for (const u of users) {
      const c = channels.get(u.id);
      const s = streams.get(u.id);
      const p = lastPast.get(u.id);
      if (!s && !p) {
        assert.equal(c, undefined, `user ${u.id} never streamed`);
        continue;
      }
      assert.ok(c, `user ${u.id} has a channel`);
      if (s)
        assert.deepEqual(
          [c.title, c.game_id, c.language, c.tags],
          [s.title, s.game_id, s.language, s.tags],
          `user ${u.id}: the live stream's`,
        );
      else if (p) {
        offlineChannels++;
        assert.deepEqual([c.title, c.game_id, c.language], [p.title, p.game_id, p.language], `user ${u.id}`);
        const tags = JSON.parse(c.tags) as string[];
        assert.ok(tags.length <= 10 && new Set(tags).size === tags.length, `user ${u.id}: ${c.tags}`);
        for (const tag of tags) assert.match(tag, /^[\p{L}\p{N}]{1,25}$/u, `user ${u.id}`);
      }
      // Delay, labels and branded content: none, but on a few partners' channels (not the demo's).
      const labels = JSON.parse(c.labels) as string[];
      assert.deepEqual(
        labels,
        LABELS.filter((l) => labels.includes(l)),
        `user ${u.id}: label ids, in order`,
      );
      assert.ok([0, 1].includes(c.is_branded_content) && c.delay >= 0 && c.delay <= 900, `user ${u.id}`);
      if (c.delay > 0 || labels.length > 0 || c.is_branded_content === 1) {
        extras++;
        assert.equal(u.broadcaster_type, 'partner', `user ${u.id}: only partners`);
        assert.notEqual(u.id, demo);
      }
    }
    assert.equal(channels.size, users.filter((u) => streams.has(u.id) || lastPast.has(u.id)).length);
    assert.ok(offlineChannels > 0, 'offline users who streamed before have channels');
    assert.ok(extras > 0, 'a partner has a delay, labels or branded content');
  });
});
