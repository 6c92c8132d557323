// The outbox's tail (docs/eventsub-design.md, section 3): reads the events after its cursor, in id
// order, whenever it is woken, and hands each batch to delivery before reading on. What wakes it:
// - SQLite: `Store.changeEpoch()` checked every 20 ms (it moves when any connection commits to the
//   file, this process's own writes included);
// - PostgreSQL: a notification on its own listening connection (src/store/events-listen.ts);
// - both: this process's own commits of events (`onEventsCommitted`), and a 1 s backstop, so that a
//   wake-up lost anywhere delays an event by a second at most and loses nothing.
import type { Store } from '../store/db.ts';
import { type EventRow, eventsAfter, onEventsCommitted } from '../store/events.ts';
import { listenForEvents } from '../store/events-listen.ts';

/** The most events one read takes. */
const BATCH = 500;
const EPOCH_POLL_MS = 20;
const BACKSTOP_MS = 1000;

interface Log {
  warn(obj: object, msg: string): void;
}

export interface TailOptions {
  store: Store;
  /** the postgres:// URL to listen on (PostgreSQL only) */
  url: string;
  /** the id the tail starts after */
  cursor: number;
  /** called with each batch in order; the tail reads on once it resolves */
  deliver: (events: EventRow[]) => Promise<void>;
  log: Log;
}

export class Tail {
  #cursor: number;
  /** where the next read starts, if set: the events between are left unread */
  #skipTo: number | undefined;
  #reading: Promise<void> | undefined;
  #again = false;
  #stopped = false;
  readonly #stops: (() => void | Promise<void>)[] = [];
  readonly #o: TailOptions;

  constructor(o: TailOptions) {
    this.#o = o;
    this.#cursor = o.cursor;
    const wake = () => this.wake();
    this.#stops.push(onEventsCommitted(o.store, wake));
    const backstop = setInterval(wake, BACKSTOP_MS);
    this.#stops.push(() => clearInterval(backstop));
    if (o.store.dialect === 'sqlite') {
      let epoch = o.store.changeEpoch();
      const poll = setInterval(() => {
        const now = o.store.changeEpoch();
        if (now !== epoch) {
          epoch = now;
          wake();
        }
      }, EPOCH_POLL_MS);
      this.#stops.push(() => clearInterval(poll));
    } else {
      const listener = listenForEvents(o.url, wake, (err) =>
        o.log.warn({ err }, 'eventsub: the connection listening for events was lost; listening again'),
      );
      this.#stops.push(() => listener.stop());
    }
  }

  /** The id through which every event was delivered. */
  get cursor(): number {
    return this.#cursor;
  }

  /**
   * Leaves the events through `id` unread (once the batch in delivery is done) and reads on from
   * there: the process lost its sessions, and a new one's events come after `id`.
   */
  skipTo(id: number): void {
    this.#skipTo = Math.max(this.#skipTo ?? 0, id);
    this.wake();
  }

  /** Reads the new events now (or once the read in progress is done). */
  wake(): void {
    if (this.#stopped) return;
    if (this.#reading) {
      this.#again = true;
      return;
    }
    this.#reading = this.#read().finally(() => {
      this.#reading = undefined;
      if (this.#again) {
        this.#again = false;
        this.wake();
      }
    });
  }

  async #read(): Promise<void> {
    try {
      for (;;) {
        if (this.#stopped) return;
        if (this.#skipTo !== undefined) {
          this.#cursor = Math.max(this.#cursor, this.#skipTo);
          this.#skipTo = undefined;
        }
        const events = await eventsAfter(this.#o.store.db, this.#cursor, BATCH);
        if (events.length === 0 || this.#stopped) return;
        await this.#o.deliver(events);
        this.#cursor = (events.at(-1) as EventRow).id;
        if (events.length < BATCH) return;
      }
    } catch (err) {
      // The store unreachable, or a delivery that threw: the backstop tries again from the cursor.
      this.#o.log.warn({ err }, 'eventsub: reading the events failed; trying again');
    }
  }

  /** Stops waking and waits for the read in progress. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const stop of this.#stops) await stop();
    await this.#reading;
  }
}
