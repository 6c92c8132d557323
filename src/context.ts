import type { TokenCache } from './auth/token-cache.ts';
import type { Clock } from './clock.ts';
import type { DrainState } from './cluster/shutdown.ts';
import type { Config } from './config.ts';
import type { AppMetrics } from './metrics/registry.ts';
import type { RateLimiter } from './ratelimit/limiter.ts';
import type { Store } from './store/db.ts';
import type { UserNames } from './store/users.ts';
import type { Links } from './wire/links.ts';

/** What every request handler may use; built once per app. */
export interface AppContext {
  readonly config: Config;
  readonly store: Store;
  readonly clock: Clock;
  /** signs report URLs and cursors; from config or kept in the store */
  readonly secret: string;
  /** URLs of the platform's pages and images */
  readonly links: Links;
  /** the rate-limit buckets (src/ratelimit/limiter.ts) */
  readonly rateLimiter: RateLimiter;
  /** access tokens by hash, revocation-safe (src/auth/token-cache.ts) */
  readonly tokens: TokenCache;
  /** users' logins and display names by id, change-safe (src/store/users.ts) */
  readonly userNames: UserNames;
  /** what /metrics reports (src/metrics/registry.ts) */
  readonly metrics: AppMetrics;
  /** the server is draining before it stops (src/cluster/shutdown.ts): /readyz answers 503 */
  readonly drain: DrainState;
}
