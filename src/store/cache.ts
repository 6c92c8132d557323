// In-memory copies of rows that requests read again and again (tokens, user names), which never
// outlive a change to the store: this process's own writes at once, another process's commits
// within CHANGE_CHECK_MS (src/store/db.ts; the rule is docs/auth.md's). Every use reads
// `Store.changeEpoch()`, a number that moves when the store's data may have changed; when it has
// moved, the copy is emptied. A value read from the store is kept only if the number did not move while it was
// being read. Where the store has no such number (PostgreSQL), nothing is kept.
import type { Store } from './db.ts';

export class StoreCache<K, V> {
  readonly #store: Store;
  readonly #max: number;
  readonly #entries = new Map<K, V>();
  readonly #enabled: boolean;
  #epoch: number | undefined;

  /** `max`: the most entries kept; a full cache is emptied (a miss costs one indexed query). */
  constructor(store: Store, max: number) {
    this.#store = store;
    this.#max = max;
    this.#enabled = store.changeEpoch() !== undefined;
  }

  /** Whether this store allows copies at all (a property of its kind, so it never changes). */
  get enabled(): boolean {
    return this.#enabled;
  }

  /**
   * Starts a use: empties the cache if the store changed since the last use, and returns the epoch
   * to hand back to `set`; undefined when nothing may be cached.
   */
  begin(): number | undefined {
    const epoch = this.#store.changeEpoch();
    if (epoch !== this.#epoch) {
      this.#entries.clear();
      this.#epoch = epoch;
    }
    return epoch;
  }

  /** The kept value, if any (call `begin` first in the same synchronous step). */
  get(key: K): V | undefined {
    return this.#epoch === undefined ? undefined : this.#entries.get(key);
  }

  /** Keeps values read from the store since `begin` returned `epoch`, unless the store changed since. */
  keep(epoch: number | undefined, entries: Iterable<readonly [K, V]>): void {
    if (epoch === undefined || this.#store.changeEpoch() !== epoch || this.#epoch !== epoch) return;
    for (const [key, value] of entries) {
      if (this.#entries.size >= this.#max) this.#entries.clear();
      this.#entries.set(key, value);
    }
  }
}
