// Live tokens kept in memory, so that an authorized request costs no store query. A revocation
// still takes effect at once, on every process that shares the store:
//
// - this process's revocations (/oauth2/revoke) empty the cache before they answer;
// - another process's writes are seen through `Store.tokenEpoch()`, read on every lookup: on SQLite
//   it is `PRAGMA data_version`, which changes whenever another connection commits to the file (a
//   read of shared memory, no I/O); a change empties the cache;
// - where no such number exists (PostgreSQL: instances share no memory, and a NOTIFY would reach the
//   other instances a little after the revocation commits), nothing is cached and every request
//   looks its token up.
//
// Expiry is checked on each use against the app's clock. Entries hold the token's hash, never the
// token itself.
import type { Store } from '../store/db.ts';
import type { TokenRow } from '../store/schema.ts';
import { sha256, tokenByHash } from './tokens.ts';

/** A token as authorization needs it: its row and its scopes as a set. */
export interface LiveToken {
  row: TokenRow;
  scopes: ReadonlySet<string>;
}

/** Bounded by clearing when full: a cache miss costs one indexed query. */
const MAX_ENTRIES = 50_000;

export class TokenCache {
  readonly #store: Store;
  readonly #byHash = new Map<string, LiveToken>();
  #epoch: number | undefined;
  /** bumped by this process's revocations */
  #generation = 0;

  constructor(store: Store) {
    this.#store = store;
  }

  /** The live token for a raw access token, or undefined when unknown or expired at `now`. */
  async find(raw: string, now: number): Promise<LiveToken | undefined> {
    const hash = sha256(raw);
    const epoch = this.#store.tokenEpoch();
    if (epoch !== this.#epoch) {
      this.#byHash.clear();
      this.#epoch = epoch;
    }
    let live = epoch === undefined ? undefined : this.#byHash.get(hash);
    if (live === undefined) {
      const generation = this.#generation;
      const row = await tokenByHash(this.#store.db, hash);
      if (row === undefined) return undefined;
      live = { row, scopes: new Set(row.scopes.split(' ').filter(Boolean)) };
      // A revocation (here or elsewhere) may have committed while the query ran: keep the entry
      // only if none did.
      if (epoch !== undefined && this.#store.tokenEpoch() === epoch && this.#generation === generation) {
        if (this.#byHash.size >= MAX_ENTRIES) this.#byHash.clear();
        this.#byHash.set(hash, live);
      }
    }
    return live.row.expires_at > now ? live : undefined;
  }

  /** Tokens were revoked through this process: forget every entry before answering. */
  revoked(): void {
    this.#generation++;
    this.#byHash.clear();
  }
}
