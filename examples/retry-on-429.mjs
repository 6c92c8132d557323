// Retry on 429: repeat a refused request once its Ratelimit-Reset has passed. Half the requests are
// refused for a stretch of the run (PUT /admin/faults), each 429's bucket full again a second later,
// so that the walk takes seconds. Node.js's own fetch: nothing to install.
//   HELIXD_URL          default http://127.0.0.1:8080 (a development-profile helixd)
//   HELIXD_ADMIN_TOKEN  the server's --admin-token
//   CLIENT_ID, CLIENT_SECRET  default: the demo client, from GET /units/clients
const base = process.env.HELIXD_URL ?? 'http://127.0.0.1:8080';
const admin = {
  authorization: `Bearer ${process.env.HELIXD_ADMIN_TOKEN}`,
  'content-type': 'application/json',
};
const [demo] = process.env.CLIENT_ID ? [] : (await (await fetch(`${base}/units/clients`)).json()).data;
const clientId = process.env.CLIENT_ID ?? demo.ID;
const clientSecret = process.env.CLIENT_SECRET ?? demo.Secret;

// The token first: the faults refuse token calls too.
const form = new URLSearchParams({
  grant_type: 'client_credentials',
  client_id: clientId,
  client_secret: clientSecret,
});
const { access_token: token } = await (
  await fetch(`${base}/oauth2/token`, { method: 'POST', body: form })
).json();

let waits = 0;
/** GET an operation, waiting out each 429 until its Ratelimit-Reset (Unix seconds). */
async function get(path) {
  for (;;) {
    const res = await fetch(`${base}/helix/${path}`, {
      headers: { authorization: `Bearer ${token}`, 'client-id': clientId },
    });
    if (res.status !== 429) return res.json();
    const resetMs = Number(res.headers.get('ratelimit-reset')) * 1000;
    waits++;
    await new Promise((resolve) => setTimeout(resolve, Math.max(resetMs - Date.now(), 100)));
  }
}

const faults = async (init) => {
  const res = await fetch(`${base}/admin/faults`, { headers: admin, ...init });
  if (!res.ok) throw new Error(`/admin/faults: ${res.status} ${await res.text()}`);
};
await faults({ method: 'PUT', body: JSON.stringify({ faults: '429:ratelimit-reset=1s:50%', seed: 1 }) });
const games = [];
try {
  let cursor;
  do {
    const page = await get(`games/top?first=20${cursor ? `&after=${cursor}` : ''}`);
    games.push(...page.data);
    cursor = page.pagination.cursor;
  } while (cursor);
} finally {
  await faults({ method: 'DELETE' }); // rules left on would fail later runs
}
console.log(`top games: ${games.length}; 429s waited out: ${waits}`);
