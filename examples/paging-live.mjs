// A paging loop while the world moves: walk GET /streams, ordered by viewers that change under the
// walk, and check that no stream comes twice. Against `helixd serve --live --live-rate 50`; with
// HELIXD_ADMIN_TOKEN set, 50 more events are stepped between pages (POST /admin/live/step), so
// every page sees the world moved. Node.js's own fetch: nothing to install.
//   HELIXD_URL          default http://127.0.0.1:8080 (a development-profile helixd)
//   HELIXD_ADMIN_TOKEN  optional: the server's --admin-token
//   CLIENT_ID, CLIENT_SECRET  default: the demo client, from GET /units/clients
const base = process.env.HELIXD_URL ?? 'http://127.0.0.1:8080';
const [demo] = process.env.CLIENT_ID ? [] : (await (await fetch(`${base}/units/clients`)).json()).data;
const clientId = process.env.CLIENT_ID ?? demo.ID;
const clientSecret = process.env.CLIENT_SECRET ?? demo.Secret;
const form = new URLSearchParams({
  grant_type: 'client_credentials',
  client_id: clientId,
  client_secret: clientSecret,
});
const { access_token: token } = await (
  await fetch(`${base}/oauth2/token`, { method: 'POST', body: form })
).json();

const seen = new Set();
let pages = 0;
let cursor;
do {
  const res = await fetch(`${base}/helix/streams?first=5${cursor ? `&after=${cursor}` : ''}`, {
    headers: { authorization: `Bearer ${token}`, 'client-id': clientId },
  });
  if (!res.ok) throw new Error(`GET /helix/streams: ${res.status} ${await res.text()}`);
  const page = await res.json();
  pages++;
  for (const stream of page.data) {
    if (seen.has(stream.id)) throw new Error(`listed twice: ${stream.id}`);
    seen.add(stream.id);
  }
  cursor = page.pagination.cursor;
  if (process.env.HELIXD_ADMIN_TOKEN)
    await fetch(`${base}/admin/live/step`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${process.env.HELIXD_ADMIN_TOKEN}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ events: 50 }),
    });
} while (cursor);
console.log(`${seen.size} streams in ${pages} pages, none twice`);
