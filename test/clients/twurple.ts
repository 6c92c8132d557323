// Twurple 8's mock mode pointed at a test app: with TWURPLE_MOCK_API_PORT set, Twurple sends API
// calls to http://localhost:<port>/mock/* and token calls to /auth/*.
import { createServer } from 'node:net';
import type { TestApp } from '../support/apps.ts';

export interface DemoClient {
  id: string;
  secret: string;
}

/**
 * Listens on every address localhost names (Twurple calls http://localhost:<port>) and points
 * Twurple's mock mode there (on `listenPort` when given: a reconnect URL names `--public-url`'s
 * port); `client` is the demo client, from /units/clients. `restore` puts back
 * the setting found (call it before `t.close()`).
 */
export async function pointTwurpleAt(
  t: TestApp,
  /** the port to listen on (one the app's `publicUrl` names); any free one when left out */
  listenPort = 0,
): Promise<{ base: string; client: DemoClient; restore: () => void }> {
  const previous = process.env.TWURPLE_MOCK_API_PORT;
  await t.app.listen({ port: listenPort, host: 'localhost' });
  const addr = t.app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  process.env.TWURPLE_MOCK_API_PORT = String(port);
  const base = `http://localhost:${port}`;
  const units = await (await fetch(`${base}/units/clients`)).json();
  return {
    base,
    client: { id: units.data[0].ID, secret: units.data[0].Secret },
    restore() {
      if (previous === undefined) delete process.env.TWURPLE_MOCK_API_PORT;
      else process.env.TWURPLE_MOCK_API_PORT = previous;
    },
  };
}

/** helixd's token reply (the token service's, and POST /auth/authorize's) to a user token. */
export interface TokenReply {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  scope: string[];
}

/** A user token of `userId` with `scope` (space-separated), from POST /auth/authorize. */
export async function authorizeUser(
  base: string,
  client: DemoClient,
  userId: string,
  scope: string,
): Promise<TokenReply> {
  const q = new URLSearchParams({
    client_id: client.id,
    client_secret: client.secret,
    grant_type: 'user_token',
    user_id: userId,
    scope,
  });
  return (await fetch(`${base}/auth/authorize?${q}`, { method: 'POST' })).json();
}

/** `reply` as Twurple holds a token (RefreshingAuthProvider.addUserForToken), obtained now. */
export const twurpleToken = (reply: TokenReply) => ({
  accessToken: reply.access_token,
  refreshToken: reply.refresh_token,
  expiresIn: reply.expires_in,
  obtainmentTimestamp: Date.now(),
  scope: reply.scope,
});

/** A port free now (for an app whose `publicUrl` must name the port it will listen on). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Twurple's EventSub listeners remember each message id they received for 10 minutes (their
 * duplicate check), with a timer that keeps the process alive: from now on in this process, timers
 * of a minute or more are unref'd, so that a test file ends when its tests do.
 */
export function unrefLongTimers(): void {
  const setTimer = globalThis.setTimeout;
  globalThis.setTimeout = ((fn: () => void, ms?: number, ...args: unknown[]) => {
    const timer = setTimer(fn, ms, ...args) as unknown as NodeJS.Timeout;
    if ((ms ?? 0) >= 60_000) timer.unref();
    return timer;
  }) as typeof setTimeout;
}
