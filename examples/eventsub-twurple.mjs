// Twurple's EventSubWsListener in mock mode: TWURPLE_MOCK_API_PORT points the listener at helixd's
// /ws and its subscriptions at /eventsub/subscriptions, on helixd's one port. A follow written
// through the admin API (POST /admin/eventsub/trigger writes one) arrives as channel.follow, and
// GET /channels/followers then lists the follower.
//   npm install @twurple/api @twurple/auth @twurple/eventsub-ws
//   HELIXD_URL          default http://127.0.0.1:8080 (a development-profile helixd)
//   HELIXD_ADMIN_TOKEN  the server's --admin-token
import { ApiClient } from '@twurple/api';
import { RefreshingAuthProvider } from '@twurple/auth';
import { EventSubWsListener } from '@twurple/eventsub-ws';

const base = process.env.HELIXD_URL ?? 'http://127.0.0.1:8080';
process.env.TWURPLE_MOCK_API_PORT = new URL(base).port;
const [demo] = (await (await fetch(`${base}/units/clients`)).json()).data;
const [user] = (await (await fetch(`${base}/units/users?first=1`)).json()).data;

// The broadcaster's token with the scope channel.follow needs (development profile: /auth/authorize).
const grant = {
  grant_type: 'user_token',
  client_id: demo.ID,
  client_secret: demo.Secret,
  user_id: user.id,
  scope: 'moderator:read:followers',
};
const t = await (
  await fetch(`${base}/auth/authorize`, { method: 'POST', body: new URLSearchParams(grant) })
).json();
const auth = new RefreshingAuthProvider({ clientId: demo.ID, clientSecret: demo.Secret });
await auth.addUserForToken({
  accessToken: t.access_token,
  refreshToken: t.refresh_token,
  expiresIn: t.expires_in,
  obtainmentTimestamp: Date.now(),
  scope: t.scope,
});
const api = new ApiClient({ authProvider: auth });
const listener = new EventSubWsListener({ apiClient: api });

const followed = new Promise((resolve) =>
  listener.onChannelFollow(user.id, user.id, (event) => resolve(event)),
);
const ready = new Promise((resolve) => listener.onSubscriptionCreateSuccess(resolve));
listener.start();
await ready;

await fetch(`${base}/admin/eventsub/trigger`, {
  method: 'POST',
  headers: { authorization: `Bearer ${process.env.HELIXD_ADMIN_TOKEN}`, 'content-type': 'application/json' },
  body: JSON.stringify({ type: 'channel.follow', broadcaster_id: user.id }),
});
const event = await followed;
const followers = await api.asUser(user.id, (ctx) => ctx.channels.getChannelFollowers(user.id, event.userId));
console.log(
  `channel.follow: ${event.userName} follows ${event.broadcasterName}; listed: ${followers.data.length === 1}`,
);
listener.stop();
// Twurple keeps a 10-minute timer per message id it received (its duplicate check): exit now.
process.exit(0);
