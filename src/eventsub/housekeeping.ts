// EventSub's housekeeping (docs/eventsub-design.md section 3, "Pruning"), run by every serving
// process every 10 s whether or not it holds a WebSocket (the service starts with the first one;
// a process serving only webhooks or only the API must still prune): the outbox's events that no
// tail still reads, the processes that stopped beating (killed, not stopped: a stop deletes its
// own row) with their sessions, and the subscriptions disabled for an hour. Every step is safe to
// run in several processes at once; a step that fails is logged and tried again at the next round.
import type { Store } from '../store/db.ts';
import { pruneEvents } from '../store/events.ts';
import {
  deleteDisabledSubscriptions,
  lastEventBefore,
  leastCursor,
  sweepProcesses,
} from '../store/eventsub-housekeeping.ts';

/** How often a round runs. */
const EVERY_MS = 10_000;
/** A process whose heartbeat (every 5 s, src/eventsub/service.ts) is older than this is gone. */
const PROCESS_LOST_MS = 30_000;
/** An event read by every tail is kept this long still (a tail that starts reads from the last id). */
const EVENT_GRACE_MS = 60_000;
/** Past this an event goes even if a tail that far behind has not read it. */
const EVENT_MAX_AGE_MS = 3_600_000;
/** How long a disabled subscription is still listed. */
const DISABLED_KEPT_MS = 3_600_000;

interface Log {
  warn(obj: object, msg: string): void;
}

/** One round at `now` (Unix ms, the wall clock: the rows' times are). */
export async function housekeep(store: Store, now: number): Promise<void> {
  const { db } = store;
  // A process whose tail has not read the events the age rule below deletes would miss them: it is
  // swept as lost, and closes its sessions (4000) when it next beats, rather than deliver with a gap.
  await sweepProcesses(db, now - PROCESS_LOST_MS, now, await lastEventBefore(db, now - EVENT_MAX_AGE_MS));
  // No live tail and no hand-over: every event has been read that will be (a tail that starts
  // begins at the last id, and the grace below covers one starting now).
  const least = (await leastCursor(db, now - PROCESS_LOST_MS)) ?? Number.MAX_SAFE_INTEGER;
  await pruneEvents(db, least, now - EVENT_GRACE_MS);
  await pruneEvents(db, Number.MAX_SAFE_INTEGER, now - EVENT_MAX_AGE_MS);
  await deleteDisabledSubscriptions(db, now - DISABLED_KEPT_MS);
}

/** Runs `housekeep` every 10 s (the first round at once) until the returned stop is called. */
export function startHousekeeping(store: Store, log: Log): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  let stopped = false;
  const round = () => {
    if (stopped || running) return;
    running = housekeep(store, Date.now())
      .catch((err) => log.warn({ err }, 'eventsub: housekeeping failed; tried again in 10 s'))
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(round, EVERY_MS);
  // A process does not stay up for its housekeeping alone.
  timer.unref();
  const first = setTimeout(round, 0);
  first.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      clearTimeout(first);
      // The store closes after this: a round in flight finishes first.
      await running;
    },
  };
}
