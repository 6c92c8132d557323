// Twurple 8's mock mode pointed at a test app: with TWURPLE_MOCK_API_PORT set, Twurple sends API
// calls to http://localhost:<port>/mock/* and token calls to /auth/*.
import type { TestApp } from '../support/apps.ts';

export interface DemoClient {
  id: string;
  secret: string;
}

/**
 * Listens on every address localhost names (Twurple calls http://localhost:<port>) and points
 * Twurple's mock mode there; `client` is the demo client, from /units/clients. `restore` puts back
 * the setting found (call it before `t.close()`).
 */
export async function pointTwurpleAt(
  t: TestApp,
): Promise<{ base: string; client: DemoClient; restore: () => void }> {
  const previous = process.env.TWURPLE_MOCK_API_PORT;
  await t.app.listen({ port: 0, host: 'localhost' });
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
