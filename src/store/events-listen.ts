// PostgreSQL's wake-up for the outbox's tail (docs/eventsub-design.md, section 3): one connection
// of its own, outside the pool (a LISTEN belongs to its connection, and a pooled one goes back to
// others), in `LISTEN helixd_events`. A transaction that records events notifies at its commit
// (src/store/events.ts). The notification only wakes: the table is the truth, so a connection lost
// is opened again after a pause and the tail is woken to catch up by reading.
import { createRequire } from 'node:module';
import type pg from 'pg';
import { EVENTS_CHANNEL } from './events.ts';

/** The pause before a lost listening connection is opened again. */
const RELISTEN_MS = 1000;

export interface EventsListener {
  stop(): Promise<void>;
}

/**
 * Listens on `url` (a postgres:// URL) and calls `wake` for every notification of a commit, and
 * once more whenever the connection is (re)established; `onError` hears of a lost connection.
 */
export function listenForEvents(
  url: string,
  wake: () => void,
  onError: (err: Error) => void,
): EventsListener {
  const { Client } = createRequire(import.meta.url)('pg') as typeof pg;
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;

  const connect = async () => {
    retry = undefined;
    if (stopped) return;
    const c = new Client({ connectionString: url });
    client = c;
    let lost = false;
    const reopen = (err: Error) => {
      if (lost) return;
      lost = true;
      c.removeAllListeners('notification');
      c.end().catch(() => {});
      if (client === c) client = undefined;
      if (stopped) return;
      onError(err);
      retry = setTimeout(connect, RELISTEN_MS);
    };
    c.on('error', reopen);
    c.on('end', () => reopen(new Error('the listening connection ended')));
    c.on('notification', () => wake());
    try {
      await c.connect();
      await c.query(`LISTEN ${EVENTS_CHANNEL}`);
      if (stopped) await c.end();
      else wake();
    } catch (err) {
      reopen(err as Error);
    }
  };
  void connect();

  return {
    async stop() {
      stopped = true;
      clearTimeout(retry);
      const c = client;
      client = undefined;
      if (c) await c.end().catch(() => {});
    },
  };
}
