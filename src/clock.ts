// The one clock. Every date rule, token expiry and report URL expiry reads it, so tests and
// `--now` can pin time.
import type { Config } from './config.ts';

export interface Clock {
  /** milliseconds since the Unix epoch */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** The clock of a configuration: the system's, or one started at `--now`. */
export function clockFor(config: Config): Clock {
  return config.now ? startingAt(Date.parse(config.now)) : systemClock;
}

/** A clock that starts at `startMs` and then runs at real speed (`serve --now`). */
export function startingAt(startMs: number): Clock {
  const offset = startMs - Date.now();
  return { now: () => Date.now() + offset };
}

/** A clock that moves only when told to (tests). */
export class ManualClock implements Clock {
  constructor(private ms: number) {}
  now(): number {
    return this.ms;
  }
  set(ms: number): void {
    this.ms = ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

export function nowSeconds(clock: Clock): number {
  return Math.floor(clock.now() / 1000);
}

/** RFC 3339 UTC with `Z` and no fraction, the wire's timestamp form. */
export function rfc3339(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString().replace('.000Z', 'Z');
}
