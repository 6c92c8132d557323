// A token refreshed after expiry, with Twurple's RefreshingAuthProvider: the server clock is moved
// past the token's lifetime, helixd answers the expired token with a 401, and Twurple refreshes it
// with the refresh token by itself and repeats the call. Twurple in mock mode (TWURPLE_MOCK_API_PORT).
//   npm install @twurple/api @twurple/auth
//   HELIXD_URL          default http://127.0.0.1:8080 (a development-profile helixd)
//   HELIXD_ADMIN_TOKEN  the server's --admin-token
//   CLIENT_ID, CLIENT_SECRET  default: the demo client, from GET /units/clients
import { ApiClient } from '@twurple/api';
import { RefreshingAuthProvider } from '@twurple/auth';

const base = process.env.HELIXD_URL ?? 'http://127.0.0.1:8080';
const [demo] = process.env.CLIENT_ID ? [] : (await (await fetch(`${base}/units/clients`)).json()).data;
const clientId = process.env.CLIENT_ID ?? demo.ID;
const clientSecret = process.env.CLIENT_SECRET ?? demo.Secret;
process.env.TWURPLE_MOCK_API_PORT = new URL(base).port;

const [user] = (await (await fetch(`${base}/units/users?first=1`)).json()).data;
const grant = {
  grant_type: 'user_token',
  client_id: clientId,
  client_secret: clientSecret,
  user_id: user.id,
};
const t = await (
  await fetch(`${base}/auth/authorize`, { method: 'POST', body: new URLSearchParams(grant) })
).json();

const provider = new RefreshingAuthProvider({ clientId, clientSecret });
provider.onRefresh((_userId, token) =>
  console.log(`refreshed: a new token ${token.accessToken !== t.access_token}`),
);
const userId = await provider.addUserForToken({
  accessToken: t.access_token,
  refreshToken: t.refresh_token,
  expiresIn: t.expires_in,
  obtainmentTimestamp: Date.now(),
  scope: t.scope,
});
const api = new ApiClient({ authProvider: provider });

await fetch(`${base}/admin/clock`, {
  method: 'POST',
  headers: { authorization: `Bearer ${process.env.HELIXD_ADMIN_TOKEN}`, 'content-type': 'application/json' },
  body: JSON.stringify({ advance: `${t.expires_in}s` }),
});
const me = await api.asUser(userId, (ctx) => ctx.users.getUserById(userId)); // 401, refreshed, 200
console.log(`${me.name}: answered`);
