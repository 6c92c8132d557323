// One driven clock across the processes of `serve --workers N`, as state the primary holds
// (src/cluster/state.ts): a worker starts from the primary's reading (src/clock.ts: every process
// on one machine reads the same real time, so one reading is one clock) and never moves its own. A
// move asked of any worker (POST /admin/clock) is made by the primary, which answers once every
// worker reads the moved clock; a worker that starts later (a replacement) gets the reading of its
// start.
import {
  type ClockDriver,
  type ClockMove,
  ClockMoveError,
  type ClockReading,
  DrivenClock,
} from '../clock.ts';
import { PrimaryState, Refusal, type Versioned, workerState } from './state.ts';

const NAME = 'clock';

/** The primary's side: its clock, moved by the workers' asks. */
export function primaryClock(clock: DrivenClock, deadlineMs: number): PrimaryState<ClockReading, ClockMove> {
  return new PrimaryState<ClockReading, ClockMove>(
    NAME,
    clock.anchor,
    (_, move) => {
      let reading: ClockReading;
      try {
        reading = clock.moved(move);
      } catch (e) {
        throw e instanceof ClockMoveError ? new Refusal(e.message) : e;
      }
      clock.adopt(reading);
      return reading;
    },
    deadlineMs,
  );
}

/**
 * A worker's clock, from the reading its start carried (or a newer one heard since), and the
 * driver that moves it through the primary: a move refused is a ClockMoveError (400), one that
 * does not reach every worker in time an UnavailableError (503).
 */
export function workerClockDriver(start: Versioned<ClockReading>, deadlineMs: number): ClockDriver {
  const state = workerState<ClockReading, ClockMove>(
    NAME,
    start,
    deadlineMs,
    (message) => new ClockMoveError(message),
  );
  const clock = new DrivenClock(state.value);
  state.listen((reading) => clock.adopt(reading));
  return { clock, move: (move) => state.change(move) };
}
