// pyTwitchAPI's requests as they reach the wire: what its sources build (twitchAPI/twitch.py,
// twitchAPI/oauth.py, twitchAPI/helper.py) as aiohttp 3.11 writes it (client_reqrep.py): Host
// first, then the caller's headers in their order, then Accept, Accept-Encoding, User-Agent; a POST
// gets Content-Length (0 without data) and, without a type of its own, Content-Type:
// application/octet-stream, even for an empty body. Query strings come from helper.build_url
// (urllib.parse.quote of every value, a None value as a bare name) re-quoted by yarl. Shared by the
// token-service replays (request-shapes.test.ts) and the operation replays (pytwitchapi.test.ts).

export const AIOHTTP_UA = 'Python/3.12 aiohttp/3.11.11';

/**
 * A query value as it reaches the wire from pyTwitchAPI: urllib.parse.quote (safe '/') escapes
 * everything but unreserved characters and '/', then yarl un-escapes what it holds safe in a query
 * (':', '@', '?', "!$'()*,") except the separators '=', '+', '&', ';'. Net: a space is %20, a ':'
 * stays literal.
 */
export function pyQuote(v: string): string {
  let out = '';
  for (const b of Buffer.from(v, 'utf8')) {
    const c = String.fromCharCode(b);
    out +=
      b < 128 && /[A-Za-z0-9\-._~/:@?!$'()*,]/.test(c)
        ? c
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** helper.build_url: `name=quoted` joined with '&', in the dict's order; a None value is a bare name. */
export function buildUrl(path: string, params: [string, string | null][]): string {
  const q = params.map(([k, v]) => (v === null ? k : `${k}=${pyQuote(v)}`)).join('&');
  return q ? `${path}?${q}` : path;
}

/** The bytes aiohttp 3.11 writes for `session.request(method, url, headers=..., data=...)`. */
export function aiohttpBytes(
  port: number,
  method: 'GET' | 'POST',
  target: string,
  headers: [string, string][] = [],
  form?: [string, string][],
): string {
  const lines = [`${method} ${target} HTTP/1.1`, `Host: 127.0.0.1:${port}`];
  for (const [k, v] of headers) lines.push(`${k}: ${v}`);
  lines.push('Accept: */*', 'Accept-Encoding: gzip, deflate', `User-Agent: ${AIOHTTP_UA}`);
  // data=dict: FormData, urlencoded with urllib's urlencode (quote_plus).
  const body = form ? new URLSearchParams(form).toString() : '';
  if (method === 'POST') {
    lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
    lines.push(`Content-Type: ${form ? 'application/x-www-form-urlencoded' : 'application/octet-stream'}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}
