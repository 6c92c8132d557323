// Live tokens kept in memory, so that an authorized request costs no store query. A revocation
// still takes effect at once in the process that made it and within CHANGE_CHECK_MS (2 ms) in every
// other process that shares the store: the copy is emptied whenever the store's data may have
// changed (src/store/cache.ts). On SQLite that is read from this process's own writes and from
// `PRAGMA data_version`, which moves whenever another connection commits to the file (looked at
// at most every CHANGE_CHECK_MS: src/store/db.ts). PostgreSQL instances share no such number (a
// NOTIFY would reach the others a moment after the revocation commits), so there nothing is kept
// and every request looks its token up.
//
// Expiry is checked on each use against the app's clock. Entries are keyed by the token's hash,
// never the token itself.
import { StoreCache } from '../store/cache.ts';
import type { Store } from '../store/db.ts';
import type { TokenRow } from '../store/schema.ts';
import { tokenByHash } from '../store/tokens.ts';
import { sha256 } from './tokens.ts';

/** A token as authorization needs it: its row and its scopes as a set. */
export interface LiveToken {
  row: TokenRow;
  scopes: ReadonlySet<string>;
}

export class TokenCache {
  readonly #store: Store;
  readonly #cache: StoreCache<string, LiveToken>;
  readonly #onLookup: ((hit: boolean) => void) | undefined;

  /** `onLookup` hears whether each lookup found the token kept (metrics); on PostgreSQL none is. */
  constructor(store: Store, onLookup?: (hit: boolean) => void) {
    this.#store = store;
    this.#cache = new StoreCache(store, 50_000);
    this.#onLookup = onLookup;
  }

  /** The live token for a raw access token, or undefined when unknown or expired at `now`. */
  async find(raw: string, now: number): Promise<LiveToken | undefined> {
    const hash = sha256(raw);
    const epoch = this.#cache.begin();
    let live = this.#cache.get(hash);
    this.#onLookup?.(live !== undefined);
    if (live === undefined) {
      const row = await tokenByHash(this.#store.db, hash);
      if (row === undefined) return undefined;
      live = { row, scopes: new Set(row.scopes.split(' ').filter(Boolean)) };
      this.#cache.keep(epoch, [[hash, live]]);
    }
    return live.row.expires_at > now ? live : undefined;
  }
}
