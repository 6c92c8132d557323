// A token refreshed after expiry: the server clock is moved past the user token's lifetime instead
// of waiting 4 hours; the expired token is a 401, the refresh token buys a new one (spent once: keep
// the new refresh token it returns), and the call is repeated. Node.js's own fetch: nothing to install.
//   HELIXD_URL          default http://127.0.0.1:8080 (a development-profile helixd)
//   HELIXD_ADMIN_TOKEN  the server's --admin-token
//   CLIENT_ID, CLIENT_SECRET  default: the demo client, from GET /units/clients
const base = process.env.HELIXD_URL ?? 'http://127.0.0.1:8080';
const [demo] = process.env.CLIENT_ID ? [] : (await (await fetch(`${base}/units/clients`)).json()).data;
const clientId = process.env.CLIENT_ID ?? demo.ID;
const clientSecret = process.env.CLIENT_SECRET ?? demo.Secret;

// A user token of the first user, minted by the development profile's POST /auth/authorize
const [user] = (await (await fetch(`${base}/units/users?first=1`)).json()).data;
const grant = {
  grant_type: 'user_token',
  client_id: clientId,
  client_secret: clientSecret,
  user_id: user.id,
};
let token = await (
  await fetch(`${base}/auth/authorize`, { method: 'POST', body: new URLSearchParams(grant) })
).json();

await fetch(`${base}/admin/clock`, {
  method: 'POST',
  headers: { authorization: `Bearer ${process.env.HELIXD_ADMIN_TOKEN}`, 'content-type': 'application/json' },
  body: JSON.stringify({ advance: `${token.expires_in}s` }),
});

/** The token's own user, refreshing the token once on a 401. */
async function me() {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(`${base}/helix/users`, {
      headers: { authorization: `Bearer ${token.access_token}`, 'client-id': clientId },
    });
    if (res.status !== 401 || attempt === 2) return { status: res.status, body: await res.json(), attempt };
    const refresh = {
      grant_type: 'refresh_token',
      refresh_token: token.refresh_token,
      client_id: clientId,
      client_secret: clientSecret,
    };
    token = await (
      await fetch(`${base}/oauth2/token`, { method: 'POST', body: new URLSearchParams(refresh) })
    ).json();
  }
}
const { status, body, attempt } = await me();
if (status !== 200) throw new Error(`GET /helix/users: ${status} ${JSON.stringify(body)}`);
console.log(`${body.data[0].login}: answered after ${attempt === 2 ? 'a 401 and a refresh' : 'no refresh'}`);
