// Query plans of the writes of the Helix API (PUT /users, POST /streams/markers, DELETE /videos,
// POST /clips): every statement they run besides the write path's own is a probe or a range of an
// index, never a read of a whole table, on SQLite (EXPLAIN QUERY PLAN) and on PostgreSQL (plain
// EXPLAIN on a seeded, analyzed store). The two lookups that had no index before migration 017, a
// live stream's archive video and the clips cut from a video, use its partial indexes videos_stream
// and clips_video; the clips waiting to be made (migration 020) are read from the low end of
// clip_jobs_due and taken by primary key, however many wait. The
// SQL is exactly what the store functions run: they are called with a Kysely instance whose plugin
// records each query (which runs too: the deletes delete), then compiled by the store's dialect.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { type CompiledQuery, sql } from 'kysely';
import { nextClipJobs, takeClipJob, videoExists } from '../../src/store/clip-jobs.ts';
import { detachClipsFromVideos } from '../../src/store/clips.ts';
import { archiveOfStream, deleteMarkersOfVideos, liveStreamOf } from '../../src/store/markers.ts';
import { rowByKey } from '../../src/store/records.ts';
import { deleteVideoRows, videoOwners } from '../../src/store/videos.ts';
import { forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { archiveOfLiveStream } from '../support/archive.ts';
import type { StoreKind } from '../support/stores.ts';
import { queryPlans } from './plans.ts';

const ARCHIVE = 1_999_999_999;

/** Clips waiting to be made, due long after the test (the app's own clip maker leaves them). */
const JOBS = 5000;
const FAR = 4_000_000_000_000;

forEachStore(
  'query plans of PUT /users, POST /streams/markers, DELETE /videos and POST /clips',
  (kind: StoreKind) => {
    let t: TestApp;
    let demo: number;
    let stream: number;
    /** videos of the demo broadcaster that clips were cut from and markers were made in */
    let videos: number[];

    before(async () => {
      t = await startTestApp(kind, { users: 3000 });
      demo = t.seed?.demoUserId as number;
      stream = (await archiveOfLiveStream(t, demo, String(ARCHIVE))).id;
      videos = (
        await t.store.db
          .selectFrom('clips')
          .innerJoin('videos', 'videos.id', 'clips.video_id')
          .select('videos.id')
          .where('videos.user_id', '=', demo)
          .groupBy('videos.id')
          .orderBy('videos.id')
          .limit(3)
          .execute()
      ).map((v) => v.id);
      assert.equal(videos.length, 3, 'the demo broadcaster has videos with clips');
      for (let i = 0; i < JOBS; i += 1000)
        await t.store.db
          .insertInto('clip_jobs')
          .values(
            Array.from({ length: 1000 }, (_, k) => ({
              id: `PlanClip-${String(i + k).padStart(5, '0')}`,
              due_at: FAR + ((i + k) % 97) * 1000,
              record: '{}',
            })),
          )
          .execute();
      if (kind === 'postgres')
        await sql`analyze users, streams, videos, clips, markers, clip_jobs`.execute(t.store.db);
    });
    after(() => t.close());

    const { captured, plan, assertIndexed } = queryPlans(kind, () => t);
    /** The one statement `run` executes, planned. */
    const planOf = async (run: Parameters<typeof captured>[0]) => {
      const [q] = await captured(run);
      return plan(q as CompiledQuery);
    };
    /**
     * `index` finds the rows of `table` that a write changes: a search of it (PostgreSQL may read it
     * as a bitmap, for a list of keys), never the table whole.
     */
    function assertFound(lines: string[], table: string, index: string): void {
      const text = lines.join('\n');
      if (kind === 'sqlite') {
        // A primary key that is not SQLite's rowid is its automatic index.
        const name = index.endsWith('_pkey') ? `sqlite_autoindex_${table}_1` : index;
        assert.ok(
          lines.some((l) => new RegExp(`^SEARCH ${table} USING (COVERING )?INDEX ${name} \\(`).test(l)),
          `expected ${index}:\n${text}`,
        );
        assert.ok(!lines.some((l) => l.startsWith('SCAN')), `full scan:\n${text}`);
      } else {
        assert.match(
          text,
          new RegExp(`(Index (Only )?Scan using ${index} on ${table}|Bitmap Index Scan on ${index})\\b`),
          text,
        );
        assert.doesNotMatch(text, /Seq Scan/, `full scan:\n${text}`);
      }
    }

    it("PUT /users: the token user's row by primary key (locked on PostgreSQL)", async () => {
      const lines = await planOf((db) => rowByKey(db, 'users', ['id'], [demo], kind === 'postgres'));
      assertIndexed(lines, 'users', 'users_pkey');
    });

    it("POST /streams/markers: the user's live stream by its unique user_id, its archive video from videos_stream, no sort", async () => {
      // One row per live user: the unique index of user_id, or streams_user_viewers which leads with it.
      const lines = (await planOf((db) => liveStreamOf(db, demo))).join('\n');
      if (kind === 'sqlite')
        assert.match(
          lines,
          /^SEARCH streams USING (COVERING )?INDEX (sqlite_autoindex_streams_2|streams_user_viewers) \(user_id=\?\)/m,
        );
      else
        assert.match(lines, /Index (Only )?Scan using (streams_user_id_key|streams_user_viewers) on streams/);
      assert.doesNotMatch(lines, /Seq Scan|^SCAN/m);
      assert.deepEqual(await archiveOfStream(t.store.db, stream, demo), { id: ARCHIVE });
      assertIndexed(await planOf((db) => archiveOfStream(db, stream, demo)), 'videos', 'videos_stream');
    });

    it('DELETE /videos: the videos by primary key; their markers from markers_video_creator_time, their clips from clips_video', async () => {
      assertIndexed(
        await planOf((db) => videoOwners(db, videos, kind === 'postgres')),
        'videos',
        'videos_pkey',
      );
      assertFound(
        await planOf((db) => deleteMarkersOfVideos(db, videos)),
        'markers',
        'markers_video_creator_time',
      );
      assertFound(await planOf((db) => detachClipsFromVideos(db, videos)), 'clips', 'clips_video');
      assertFound(
        await planOf((db) => deleteVideoRows(db, videos)),
        'videos',
        kind === 'sqlite' ? 'videos_pkey' : 'videos_pkey',
      );
    });

    it('POST /clips: the clips that fall due first from the low end of clip_jobs_due, no sort; one taken by its primary key; the video looked for by its primary key', async () => {
      const next = await nextClipJobs(t.store.db, 50);
      assert.equal(next.length, 50);
      assert.deepEqual(
        next.slice(0, 2).map((j) => j.due_at),
        [FAR, FAR],
      );
      assertIndexed(await planOf((db) => nextClipJobs(db, 50)), 'clip_jobs', 'clip_jobs_due', { walk: true });
      assertFound(await planOf((db) => takeClipJob(db, 'PlanClip-00000')), 'clip_jobs', 'clip_jobs_pkey');
      assert.equal(await takeClipJob(t.store.db, 'PlanClip-00000'), false, 'taken by the plan above');
      assertIndexed(await planOf((db) => videoExists(db, ARCHIVE)), 'videos', 'videos_pkey');
    });
  },
);
