// One driven clock across the processes of `serve --workers N`. The primary holds the clock; a
// worker starts from the primary's reading (src/clock.ts: every process on one machine reads the
// same real time, so one reading is one clock) and never moves its own. A move asked of any worker
// (POST /admin/clock) goes to the primary, which moves its clock, sends the new reading to every
// worker and answers the asking worker once each has taken it: when the admin call returns, every
// worker reads the moved clock. A worker that starts later (a replacement) gets the reading of its
// start. Readings carry a version, so that a worker keeps the newest whatever order it hears them in.
import type { Worker } from 'node:cluster';
import { type ClockDriver, type ClockMove, ClockMoveError, type ClockReading, DrivenClock } from './clock.ts';
import { deadlineReason, UnavailableError } from './unavailable.ts';

/** A reading and its version (each move adds one). */
export interface SharedReading {
  version: number;
  reading: ClockReading;
}

const MOVE = 'helixd:clock-move';
const MOVED = 'helixd:clock-moved';
const SET = 'helixd:clock-set';
const TOOK = 'helixd:clock-took';

/** worker to primary: move the clock */
interface MoveAsk {
  type: typeof MOVE;
  id: number;
  move: ClockMove;
}
/** primary to the asking worker: every worker reads `reading`, or the move failed */
type MoveAnswer = { type: typeof MOVED; id: number } & (
  | { reading: ClockReading }
  | { refused: string }
  | { unavailable: string }
);
/** primary to every worker: read this from now on */
interface SetClock extends SharedReading {
  type: typeof SET;
}
/** worker to primary: it reads version `version` (or a later one) */
interface Took {
  type: typeof TOOK;
  version: number;
}

const isType = <T>(m: unknown, type: string): m is T =>
  typeof m === 'object' && m !== null && (m as { type?: unknown }).type === type;

/** The primary's side: the clock, and the workers that hear its moves. */
export class ClusterClock {
  #version = 0;
  /** workers that have asked for their start: they listen for moves */
  readonly #joined = new Set<Worker>();
  /** moves waiting for workers to take them */
  readonly #waits = new Set<{ version: number; left: Set<Worker>; done: () => void }>();

  constructor(
    readonly clock: DrivenClock,
    /** how long a move waits for every worker to take it, then answers 503 */
    private readonly deadlineMs: number,
  ) {}

  /** What a worker starting now reads. */
  get shared(): SharedReading {
    return { version: this.#version, reading: this.clock.anchor };
  }

  /** `worker` hears every move from now on: call it just before sending the worker `shared`. */
  join(worker: Worker): void {
    this.#joined.add(worker);
    worker.once('exit', () => {
      this.#joined.delete(worker);
      for (const w of this.#waits) this.#took(w, worker);
    });
  }

  /** Answers `message` from `worker` if it is about the clock; false otherwise. */
  answer(worker: Worker, message: unknown): boolean {
    if (isType<Took>(message, TOOK)) {
      for (const w of this.#waits) if (w.version <= message.version) this.#took(w, worker);
      return true;
    }
    if (!isType<MoveAsk>(message, MOVE)) return false;
    const send = (answer: MoveAnswer) => {
      if (worker.isConnected()) worker.send(answer, undefined, () => {});
    };
    const { id } = message;
    let reading: ClockReading;
    try {
      reading = this.clock.moved(message.move);
    } catch (e) {
      if (!(e instanceof ClockMoveError)) throw e;
      send({ type: MOVED, id, refused: e.message });
      return true;
    }
    this.clock.adopt(reading);
    this.#spread(reading).then(
      () => send({ type: MOVED, id, reading }),
      (slow: Worker[]) =>
        send({
          type: MOVED,
          id,
          unavailable: `did not move the clock of every worker: ${slow.map((w) => w.process.pid).join(', ')} ${deadlineReason(this.deadlineMs)}`,
        }),
    );
    return true;
  }

  /** Sends `reading` to every worker that listens; resolves once all took it (rejects with the others). */
  #spread(reading: ClockReading): Promise<void> {
    const version = ++this.#version;
    const left = new Set([...this.#joined].filter((w) => w.isConnected()));
    return new Promise((resolve, reject) => {
      const wait = {
        version,
        left,
        done: () => {
          clearTimeout(timer);
          this.#waits.delete(wait);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.#waits.delete(wait);
        reject([...left]);
      }, this.deadlineMs);
      this.#waits.add(wait);
      const set: SetClock = { type: SET, version, reading };
      for (const w of [...left]) w.send(set, undefined, (err) => err && this.#took(wait, w));
      if (left.size === 0) wait.done();
    });
  }

  #took(wait: { left: Set<Worker>; done: () => void }, worker: Worker): void {
    if (wait.left.delete(worker) && wait.left.size === 0) wait.done();
  }
}

// ---- A worker's side ----

let joined = false;
/** the newest reading heard, and the clock that reads it once the worker has one */
let heard: SharedReading | undefined;
let workerClock: DrivenClock | undefined;
let asked = 0;
const waiting = new Map<number, (answer: MoveAnswer) => void>();

/**
 * In a cluster worker: takes the primary's moves of the clock and hears its answers. Once per
 * process, before the worker asks for its start: a move sent before the listener would be lost.
 */
export function joinClusterClock(): void {
  if (joined) return;
  joined = true;
  process.on('message', (m: unknown) => {
    if (isType<SetClock>(m, SET)) {
      if (!heard || m.version > heard.version) {
        heard = { version: m.version, reading: m.reading };
        workerClock?.adopt(m.reading);
      }
      process.send?.({ type: TOOK, version: m.version } satisfies Took, undefined, {}, () => {});
    } else if (isType<MoveAnswer>(m, MOVED)) waiting.get(m.id)?.(m);
  });
}

/**
 * A worker's clock, from the reading its start carried (or a newer one heard since), and the
 * driver that moves it through the primary. A move waits up to `deadlineMs` for the primary, which
 * itself waits that long for the workers: past it, an UnavailableError (503).
 */
export function workerClockDriver(start: SharedReading, deadlineMs: number): ClockDriver {
  if (!heard || start.version > heard.version) heard = start;
  workerClock = new DrivenClock(heard.reading);
  const clock = workerClock;
  return {
    clock,
    move: (move) =>
      new Promise((resolve, reject) => {
        const id = ++asked;
        const patience = 2 * deadlineMs;
        const end = () => {
          clearTimeout(timer);
          waiting.delete(id);
        };
        const fail = (err: Error) => {
          end();
          reject(err);
        };
        const timer = setTimeout(
          () => fail(new UnavailableError('primary', deadlineReason(patience))),
          patience,
        );
        waiting.set(id, (answer) => {
          end();
          if ('reading' in answer) resolve(answer.reading);
          else if ('refused' in answer) reject(new ClockMoveError(answer.refused));
          else reject(new UnavailableError('primary', answer.unavailable));
        });
        const ask: MoveAsk = { type: MOVE, id, move };
        if (!process.send || !process.connected)
          fail(new UnavailableError('primary', 'cannot be reached (the IPC channel is closed)'));
        else
          process.send(
            ask,
            undefined,
            {},
            (err) => err && fail(new UnavailableError('primary', 'cannot be reached')),
          );
      }),
  };
}
