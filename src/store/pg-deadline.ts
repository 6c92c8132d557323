// A deadline on every PostgreSQL query of a serving store (--query-timeout).
//
// A server that stops answering (frozen, overloaded, a network that drops packets) leaves a query
// waiting for ever: pg has no deadline of its own on a query it has sent. Its `query_timeout` stops
// the wait but leaves the connection with the query still in flight, and the pool hands that
// connection to the next request, which then waits behind it. So the deadline is kept here, on the
// pool that Kysely draws from:
// - getting a connection (a free one, or a new one: pg-pool's connectionTimeoutMillis, set by the
//   caller to the same deadline) and the first query on it share one deadline, so that a lone query
//   answers within the deadline whatever it waited for;
// - a query past its deadline is answered with an UnavailableError at once, and its connection is
//   destroyed when Kysely releases it (pg closes the socket of a client with a query in flight), so
//   no later request inherits it;
// - the server's own statement_timeout (set by the caller to the same value) cancels a query that is
//   merely slow, so a live server stops working on it and the connection stays usable.
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import { deadlineReason, UNREACHABLE, UnavailableError } from './unavailable.ts';

export function poolWithDeadline(pool: pg.Pool, ms: number): PostgresPool {
  return {
    async connect() {
      const started = Date.now();
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        // Refused, reset, or no connection within the deadline: the store cannot serve now.
        const late = Date.now() - started >= ms;
        throw new UnavailableError('store', late ? deadlineReason(ms) : UNREACHABLE, { cause: err });
      }
      return withDeadline(client, ms, started + ms);
    },
    end: () => pool.end(),
  };
}

function withDeadline(client: pg.PoolClient, ms: number, firstDeadline: number): PostgresPoolClient {
  /** set once a query on this connection passed its deadline: the connection is not reused */
  let abandoned: Error | undefined;
  let deadline = firstDeadline;
  // A checked-out client whose connection dies emits 'error'; with no listener that would end the
  // process. The query in flight fails on its own, and pg-pool drops a dead client on release.
  const onError = () => {};
  client.on('error', onError);
  // Only the (sql, parameters) form: Kysely calls the cursor form only for streaming, which needs a
  // cursor class, and none is configured.
  const query = (async (sql: string, parameters: readonly unknown[]) => {
    if (abandoned) throw new UnavailableError('store', deadlineReason(ms), { cause: abandoned });
    const left = Math.max(1, deadline - Date.now());
    deadline = Number.POSITIVE_INFINITY; // later queries on this connection get a whole deadline each
    const running = client.query(sql, parameters as unknown[]);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => {
          abandoned = new Error(`query abandoned after ${ms} ms`);
          reject(new UnavailableError('store', deadlineReason(ms)));
        },
        Math.min(left, ms),
      );
    });
    // The abandoned query fails later (its socket is closed on release): nobody waits for it.
    running.catch(() => {});
    try {
      return await Promise.race([running, late]);
    } catch (err) {
      // The server's statement_timeout: the same deadline, kept by the server.
      if ((err as { code?: string }).code === '57014')
        throw new UnavailableError('store', deadlineReason(ms), { cause: err });
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }) as unknown as PostgresPoolClient['query'];
  return {
    query,
    release() {
      if (!abandoned) client.off('error', onError);
      // A truthy argument makes pg-pool destroy the client instead of keeping it.
      client.release(abandoned);
    },
  };
}
