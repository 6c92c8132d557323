// The clips of POST /clips (docs/api.md), made when they are due. The request answers at once with
// the clip's id and leaves its record in clip_jobs (migration 020), due CLIP_DELAY_MS later on the
// server clock; only then is the clip written, through the one write path (every rule of a clip
// record holds), and listed by GET /clips, as production lists a new clip only once it is processed.
//
// Every serving process runs a ClipMaker: it reads the rows that fall due first, makes the due ones,
// and sleeps until the next one is due by the server clock (at `--clock-speed` N, 1/N of its wait in
// real time), or POLL_MS at most: a row another process added, or left when it died, is made by
// whichever process looks first. Each clip is made in the transaction that deletes its row, so it is
// made once, by one process, and a process that dies before its commit leaves the row to another.
import { randomInt } from 'node:crypto';
import { type Clock, DrivenClock } from '../clock.ts';
import { ADJECTIVES, NOUNS } from '../seed/words.ts';
import { type ClipJobRow, nextClipJobs, takeClipJob, videoExists } from '../store/clip-jobs.ts';
import type { Store } from '../store/db.ts';
import { RecordError, writeRecords } from './write.ts';

/**
 * How long after the request a clip is made, in server time. Production says to take a clip that
 * Get Clips has not listed within 15 seconds as failed; helixd makes every clip well within that,
 * late enough that a client sees it is not there at once (as on the platform), early enough for a
 * test at real speed.
 */
export const CLIP_DELAY_MS = 5_000;
/** Production's default length of a clip, seconds. */
export const CLIP_SECONDS = 30;
/** The longest wait between two looks at the store, real time: rows of other processes. */
const POLL_MS = 1_000;
/** Rows read at a time. */
const BATCH = 50;

/** The clip record (src/records/kinds.ts) a request makes, as its row holds it. */
export interface ClipRecord {
  id: string;
  broadcaster_id: string;
  creator_id: string;
  video_id: string;
  game_id: string;
  language: string;
  title: string;
  view_count: number;
  created_at: string;
  duration: number;
  vod_offset: number | null;
  is_featured: boolean;
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyz0123456789';
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const pick = (words: readonly string[]) => words[randomInt(words.length)] as string;

/**
 * A new clip id, of the seed's shape (src/seed/generate.ts): four capitalised words, a dash and 16
 * random letters and digits (`AmberBadgerBoldBard-k3x9...`), drawn from the system's random source.
 * About 82 bits of chance: no two ids meet in practice, and the store's primary key would refuse it.
 */
export function newClipId(): string {
  let tail = '';
  for (let i = 0; i < 16; i++) tail += LETTERS[randomInt(LETTERS.length)];
  return `${cap(pick(ADJECTIVES))}${cap(pick(NOUNS))}${cap(pick(ADJECTIVES))}${cap(pick(NOUNS))}-${tail}`;
}

interface Log {
  warn(obj: object, msg: string): void;
}

/**
 * Makes the clip of one row, if this call is the one that takes the row: whether it did. A clip
 * the write path refuses (its broadcaster, creator or game deleted since the request) is not made:
 * its row goes, as a clip production failed to make never appears; the refusal is logged.
 */
async function makeClip(store: Store, job: ClipJobRow, log: Log): Promise<boolean> {
  try {
    return await store.db.transaction().execute(async (trx) => {
      if (!(await takeClipJob(trx, job.id))) return false;
      const record = JSON.parse(job.record) as ClipRecord;
      // The video deleted since the request: the clip stays without it, as DELETE /videos leaves a
      // clip cut from a video it deletes.
      if (record.video_id !== '' && !(await videoExists(trx, Number(record.video_id)))) {
        record.video_id = '';
        record.vod_offset = null;
      }
      await writeRecords(store, [{ kind: 'clip', data: record, where: `clip ${job.id}` }], {
        mode: 'create',
        trx,
      });
      return true;
    });
  } catch (err) {
    if (!(err instanceof RecordError)) throw err;
    await takeClipJob(store.db, job.id);
    log.warn({ err, clip: job.id }, 'POST /clips: the clip could not be made, and is dropped');
    return false;
  }
}

/**
 * One look at the store at server time `now` (Unix ms): the due clips are made; returns how many this
 * call made, and when the next row falls due (undefined: none waits).
 */
export async function makeDueClips(
  store: Store,
  now: number,
  log: Log,
): Promise<{ made: number; next: number | undefined }> {
  let made = 0;
  for (;;) {
    const jobs = await nextClipJobs(store.db, BATCH);
    for (const job of jobs) {
      if (job.due_at > now) return { made, next: job.due_at };
      if (await makeClip(store, job, log)) made++;
    }
    if (jobs.length < BATCH) return { made, next: undefined };
  }
}

/** The real milliseconds until the server clock reads `at` (undefined: a stopped clock never does). */
function realWait(clock: Clock, at: number): number | undefined {
  const speed = clock instanceof DrivenClock ? clock.anchor.speed : 1;
  if (speed <= 0) return undefined;
  return Math.max(0, Math.ceil((at - clock.now()) / speed));
}

/** The clip maker of one serving process (see the top of this file). */
export class ClipMaker {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #log: Log;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = false;
  /** the last round failed (the store unreachable): logged once until a round succeeds */
  #failing = false;

  constructor(store: Store, clock: Clock, log: Log) {
    this.#store = store;
    this.#clock = clock;
    this.#log = log;
    this.wake();
  }

  /** Looks at the store now (this process just added a row, or the timer fired). */
  wake(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#running = this.#round()
      .catch((err) => {
        if (!this.#failing) this.#log.warn({ err }, 'POST /clips: making the due clips failed; tried again');
        this.#failing = true;
        this.#sleep(POLL_MS);
      })
      .finally(() => {
        this.#running = undefined;
        if (this.#again) {
          this.#again = false;
          this.wake();
        }
      });
  }

  async #round(): Promise<void> {
    const { next } = await makeDueClips(this.#store, this.#clock.now(), this.#log);
    this.#failing = false;
    const wait = next === undefined ? undefined : realWait(this.#clock, next);
    this.#sleep(Math.min(POLL_MS, wait ?? POLL_MS));
  }

  #sleep(ms: number): void {
    if (!this.#stopped) this.#timer = setTimeout(() => this.wake(), ms).unref();
  }

  /** Stops looking; a round in flight finishes first (the store closes after this). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }
}
