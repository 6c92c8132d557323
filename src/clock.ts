// The one clock. Every date rule, token expiry and report URL expiry reads it, so tests, `--now`,
// `--clock-speed` and the admin API's POST /admin/clock can drive time. What reads real time
// instead, on purpose: durations the server measures for itself (deadlines, logs) and the rate
// limiter (src/server.ts says why).
import type { Config } from './config.ts';

export interface Clock {
  /** milliseconds since the Unix epoch */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * Where a driven clock stands: at the real instant `realMs` it read `nowMs`, and from there it runs
 * `speed` times as fast as real time (0: stopped). Plain data, so that the processes of
 * `--workers` can share it: every process on one machine reads the same real time, so the same
 * reading gives the same clock in each.
 */
export interface ClockReading {
  realMs: number;
  nowMs: number;
  speed: number;
}

/** The latest instant the clock may reach: the last second the wire's dates can carry. */
export const CLOCK_MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59);

/** How to move a clock: by a duration, or to an instant (never back). */
export type ClockMove = { advanceMs: number } | { toMs: number };

/** A move refused; the message names the field (`advance`, `to`) and the rule. */
export class ClockMoveError extends Error {}

const iso = (ms: number) => new Date(ms).toISOString();

/** A clock that runs from a reading, and can be moved forward (the admin API, src/routes/admin/clock.ts). */
export class DrivenClock implements Clock {
  #at: ClockReading;

  constructor(
    at: ClockReading,
    private readonly real: () => number = Date.now,
  ) {
    this.#at = at;
  }

  now(): number {
    return this.#nowAt(this.real());
  }

  #nowAt(realMs: number): number {
    const { nowMs, speed } = this.#at;
    return Math.floor(nowMs + (realMs - this.#at.realMs) * speed);
  }

  /** The reading the clock runs from: another process that adopts it reads the same clock. */
  get anchor(): ClockReading {
    return { ...this.#at };
  }

  /** The clock's reading as of this instant: its now beside the real time it was read at. */
  get reading(): ClockReading {
    const realMs = this.real();
    return { realMs, nowMs: this.#nowAt(realMs), speed: this.#at.speed };
  }

  /** From here on, reads as `at` says. */
  adopt(at: ClockReading): void {
    this.#at = { ...at };
  }

  /**
   * The reading after `move`, at the same speed; a ClockMoveError for a move back (tokens and URLs
   * already issued would go back in time) or past CLOCK_MAX_MS. Changes nothing: adopt() the result.
   */
  moved(move: ClockMove): ClockReading {
    const realMs = this.real();
    const nowMs = this.#nowAt(realMs);
    const [field, toMs] = 'toMs' in move ? ['to', move.toMs] : ['advance', nowMs + move.advanceMs];
    if (toMs < nowMs)
      throw new ClockMoveError(
        `${field}: ${iso(toMs)} is before the server clock (${iso(nowMs)}): the clock only moves forward, so that nothing already issued (tokens, report URLs, cursors) goes back in time`,
      );
    if (toMs > CLOCK_MAX_MS)
      throw new ClockMoveError(
        `${field}: would move the clock past ${iso(CLOCK_MAX_MS)}, the last instant the wire's dates can carry`,
      );
    return { realMs, nowMs: toMs, speed: this.#at.speed };
  }
}

/**
 * Moves the server clock: in this process, or (under `--workers`, src/cluster/clock.ts) in every
 * process serving the port. `move` resolves with the new reading once each of them reads it.
 */
export interface ClockDriver {
  readonly clock: DrivenClock;
  move(move: ClockMove): Promise<ClockReading>;
}

/** The driver of a clock that this process alone reads. */
export function localDriver(clock: DrivenClock): ClockDriver {
  return {
    clock,
    async move(move) {
      const at = clock.moved(move);
      clock.adopt(at);
      return at;
    },
  };
}

/** A clock that moves only when told to (tests); the admin API moves it forward as any other. */
export class ManualClock extends DrivenClock {
  constructor(ms: number) {
    super({ realMs: 0, nowMs: ms, speed: 0 });
  }
  set(ms: number): void {
    this.adopt({ realMs: 0, nowMs: ms, speed: 0 });
  }
  advance(ms: number): void {
    this.set(this.now() + ms);
  }
}

/**
 * The clock of a configuration: it starts at `--now` (default: the system's now) and runs
 * `--clock-speed` times as fast as real time (default 1: the system clock, when `--now` is unset).
 */
export function clockFor(config: Config): DrivenClock {
  const realMs = Date.now();
  return new DrivenClock({
    realMs,
    nowMs: config.now ? Date.parse(config.now) : realMs,
    speed: config.clockSpeed,
  });
}

export function nowSeconds(clock: Clock): number {
  return Math.floor(clock.now() / 1000);
}
