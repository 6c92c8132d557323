// Twurple 8 (@twurple/api) makes the writes of the Helix API through the library itself against a
// real listening helixd (TWURPLE_MOCK_API_PORT sends every call to http://localhost:<port>/mock/...):
// `api.users.updateAuthenticatedUser`, `api.streams.createStreamMarker`,
// `api.videos.deleteVideosByIds` and `api.clips.createClip`, each checked by a read through Twurple
// afterwards (the user's description, the marker listed, the video gone, the clip found by
// `getClipById` once made, polled as production advises, the server clock running at real speed).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ApiClient, StreamNotLiveError } from '@twurple/api';
import { StaticAuthProvider } from '@twurple/auth';
import { CLIP_DELAY_MS } from '../../src/records/clip-jobs.ts';
import { forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { archiveOfLiveStream, offlineUser } from '../support/archive.ts';
import type { StoreKind } from '../support/stores.ts';
import { pointTwurpleAt } from './twurple.ts';

/** The archive video the test gives the demo broadcaster's live stream. */
const ARCHIVE = '1999999999';

forEachStore(
  'Twurple makes the writes: a description, a stream marker, deleted videos, a clip',
  (kind: StoreKind) => {
    let t: TestApp;
    let demo: number;
    let startedAt: number;
    let restore: () => void;

    /** An API client whose every call carries a token of `userId` (default: the demo broadcaster) with `scopes`. */
    async function clientOf(scopes: string[], userId?: number): Promise<ApiClient> {
      const token = await t.userToken(scopes, userId);
      return new ApiClient({ authProvider: new StaticAuthProvider(t.seed?.demoClientId as string, token) });
    }

    before(async () => {
      t = await startTestApp(kind);
      demo = t.seed?.demoUserId as number;
      startedAt = (await archiveOfLiveStream(t, demo, ARCHIVE)).started_at;
      ({ restore } = await pointTwurpleAt(t));
    });
    after(async () => {
      restore?.();
      await t.close();
    });

    it('updateAuthenticatedUser: the user as changed, with the email; getUserById then shows the description', async () => {
      const api = await clientOf(['user:edit', 'user:read:email']);
      const updated = await api.users.updateAuthenticatedUser(demo, { description: 'Written by Twurple' });
      assert.equal(updated.id, String(demo));
      assert.equal(updated.description, 'Written by Twurple');
      const row = await t.store.db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', demo)
        .executeTakeFirstOrThrow();
      assert.equal(updated.email, row.email);
      const read = await (await clientOf([])).users.getUserById(demo);
      assert.equal(read?.description, 'Written by Twurple');
      assert.equal(read?.name, row.login);
    });

    it('createStreamMarker: the marker at the stream position; getStreamMarkersForVideo and getStreamMarkersForUser list it', async () => {
      const api = await clientOf(['channel:manage:broadcast', 'user:read:broadcast']);
      const marker = await api.streams.createStreamMarker(demo, 'Twurple was here');
      assert.match(marker.id, /^[0-9a-f]{32}$/);
      assert.equal(marker.description, 'Twurple was here');
      const now = Math.floor(t.clock.now() / 1000);
      assert.equal(marker.positionInSeconds, now - startedAt);
      assert.equal(marker.creationDate.getTime(), now * 1000);
      for (const listed of [
        await api.streams.getStreamMarkersForVideo(demo, ARCHIVE),
        await api.streams.getStreamMarkersForUser(demo),
      ]) {
        const found = listed.data.find((m) => m.id === marker.id);
        assert.ok(found, 'listed');
        assert.equal(found.videoId, ARCHIVE);
        assert.equal(found.description, marker.description);
        assert.equal(found.positionInSeconds, marker.positionInSeconds);
      }
    });

    it('createStreamMarker for a channel that is not live: StreamNotLiveError, from the 404', async () => {
      const offline = await offlineUser(t);
      const api = await clientOf(['channel:manage:broadcast'], offline);
      await assert.rejects(api.streams.createStreamMarker(offline, 'nobody watching'), StreamNotLiveError);
    });

    it('deleteVideosByIds: the videos are gone (getVideosByIds leaves them out, getVideoById is the 404), the others stay', async () => {
      const api = await clientOf(['channel:manage:videos']);
      const mine = (
        await t.store.db
          .selectFrom('videos')
          .select('id')
          .where('user_id', '=', demo)
          .where('id', '!=', Number(ARCHIVE))
          .orderBy('id')
          .limit(3)
          .execute()
      ).map((v) => String(v.id));
      const [kept, ...gone] = mine as [string, ...string[]];
      await api.videos.deleteVideosByIds(demo, gone);
      const reader = await clientOf([]);
      const left = await reader.videos.getVideosByIds(mine);
      assert.deepEqual(
        left.map((v) => v.id),
        [kept],
      );
      // Production answers GET /videos 404 when none of the ids is a video: Twurple's HttpStatusCodeError.
      await assert.rejects(reader.videos.getVideoById(gone[0] as string), { statusCode: 404 });
    });

    it("createClip: the new id; getClipById finds the clip once made, within production's 15 s; an offline channel is the 404", async () => {
      // Another user clips the demo broadcaster's live stream: the clip is that user's.
      const creator = (
        await t.store.db
          .selectFrom('users')
          .select('id')
          .where('id', '!=', demo)
          .orderBy('id')
          .executeTakeFirstOrThrow()
      ).id;
      const api = await clientOf(['clips:edit'], creator);
      // The server clock at real speed from here, as a client of the platform lives it.
      t.clock.adopt({ realMs: Date.now(), nowMs: t.clock.now(), speed: 1 });
      try {
        const asked = t.clock.now();
        const id = await api.clips.createClip({ channel: demo });
        assert.match(id, /^(?:[A-Z][a-z]+){4}-[a-z0-9]{16}$/);
        const reader = await clientOf([]);
        assert.equal(await reader.clips.getClipById(id), null, 'not made at once');
        let clip = null;
        while (clip === null && t.clock.now() - asked < 15_000) {
          await new Promise((r) => setTimeout(r, 250));
          clip = await reader.clips.getClipById(id);
        }
        assert.ok(clip, 'found within 15 s');
        assert.ok(t.clock.now() - asked >= CLIP_DELAY_MS, 'not before its delay');
        assert.equal(clip.broadcasterId, String(demo));
        assert.equal(clip.creatorId, String(creator));
        assert.equal(clip.videoId, ARCHIVE);
        assert.equal(clip.duration, 30);
        assert.equal(clip.views, 0);
        // The last second of the clip is the stream's position when it was asked for.
        const created = clip.creationDate.getTime() / 1000;
        assert.ok(created >= Math.floor(asked / 1000) && created * 1000 <= t.clock.now());
        assert.equal(clip.vodOffset, created - startedAt - 30);
        const offline = await offlineUser(t);
        await assert.rejects(api.clips.createClip({ channel: offline }), { statusCode: 404 });
      } finally {
        t.clock.set(t.clock.now());
      }
    });
  },
);
