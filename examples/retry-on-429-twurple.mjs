// Retry on 429 with Twurple, which waits until Ratelimit-Reset and repeats the request by itself
// (its log says `Waiting for 1240 ms because the rate limit was exceeded`). Twurple in mock mode:
// TWURPLE_MOCK_API_PORT sends its calls to helixd's /mock/* and /auth/*.
//   npm install @twurple/api @twurple/auth
//   HELIXD_URL          default http://127.0.0.1:8080 (a development-profile helixd)
//   HELIXD_ADMIN_TOKEN  the server's --admin-token
//   CLIENT_ID, CLIENT_SECRET  default: the demo client, from GET /units/clients
import { ApiClient } from '@twurple/api';
import { AppTokenAuthProvider } from '@twurple/auth';

const base = process.env.HELIXD_URL ?? 'http://127.0.0.1:8080';
const admin = {
  authorization: `Bearer ${process.env.HELIXD_ADMIN_TOKEN}`,
  'content-type': 'application/json',
};
const [demo] = process.env.CLIENT_ID ? [] : (await (await fetch(`${base}/units/clients`)).json()).data;
process.env.TWURPLE_MOCK_API_PORT = new URL(base).port;

const provider = new AppTokenAuthProvider(
  process.env.CLIENT_ID ?? demo.ID,
  process.env.CLIENT_SECRET ?? demo.Secret,
);
await provider.getAppAccessToken(); // before the faults: they refuse token calls too, and Twurple retries none
const api = new ApiClient({ authProvider: provider });

const faults = async (init) => {
  const res = await fetch(`${base}/admin/faults`, { headers: admin, ...init });
  if (!res.ok) throw new Error(`/admin/faults: ${res.status} ${await res.text()}`);
};
await faults({ method: 'PUT', body: JSON.stringify({ faults: '429:ratelimit-reset=1s:50%', seed: 1 }) });
try {
  const games = await api.games.getTopGamesPaginated().getAll(); // every page, each 429 waited out
  console.log(`top games: ${games.length}`);
} finally {
  await faults({ method: 'DELETE' }); // rules left on would fail later runs
}
