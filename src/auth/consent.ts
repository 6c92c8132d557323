// The consent page of the authorization-code and implicit flows. helixd has no accounts with
// passwords: the person at the browser picks which user the application may act as (docs/auth.md).

export const RESPONSE_TYPES = ['code', 'token'] as const;
export type ResponseType = (typeof RESPONSE_TYPES)[number];

/** The validated parameters of one authorization request, carried through the form unchanged. */
export interface AuthorizeRequest {
  clientId: string;
  clientName: string;
  redirectUri: string;
  responseType: ResponseType;
  scopes: string[];
  state: string | undefined;
}

export interface ConsentUser {
  id: number;
  login: string;
  display_name: string;
}

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ENTITIES[c] as string);
}

/**
 * Headers of the page: never cached (it carries the request's state), never framed (a framed
 * consent button is a clickjacking target), no scripts.
 */
export const CONSENT_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
} as const;

export function renderConsentPage(r: AuthorizeRequest, users: ConsentUser[], problem?: string): string {
  const hidden = (name: string, value: string | undefined) =>
    value === undefined ? '' : `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
  const scopes = r.scopes.length
    ? `<ul>${r.scopes.map((s) => `<li><code>${escapeHtml(s)}</code></li>`).join('')}</ul>`
    : '<p>No scopes: only public data.</p>';
  const choices = users
    .map(
      (u, i) =>
        `<label><input type="radio" name="user" value="${escapeHtml(u.login)}"${i === 0 ? ' checked' : ''}> ` +
        `${escapeHtml(u.display_name)} <small>(${escapeHtml(u.login)}, id ${u.id})</small></label><br>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Authorize ${escapeHtml(r.clientName)} - helixd</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 36rem; margin: 2rem auto; padding: 0 1rem; }
.problem { color: #a00; font-weight: bold; }
fieldset { margin: 1rem 0; }
button { margin-right: .5rem; padding: .4rem 1rem; }
</style>
</head>
<body>
<h1>Authorize ${escapeHtml(r.clientName)}</h1>
${problem ? `<p class="problem">${escapeHtml(problem)}</p>` : ''}
<p><strong>${escapeHtml(r.clientName)}</strong> asks to act as a user of this server with these scopes:</p>
${scopes}
<form method="post" action="/oauth2/authorize">
${hidden('client_id', r.clientId)}
${hidden('redirect_uri', r.redirectUri)}
${hidden('response_type', r.responseType)}
${hidden('scope', r.scopes.join(' '))}
${hidden('state', r.state)}
<fieldset>
<legend>Act as</legend>
${choices}
<label>or the user with the login <input type="text" name="login" autocomplete="off" spellcheck="false"></label>
</fieldset>
<button type="submit" name="decision" value="allow">Authorize</button>
<button type="submit" name="decision" value="deny">Cancel</button>
</form>
<p><small>You will be sent back to <code>${escapeHtml(r.redirectUri)}</code>.</small></p>
</body>
</html>
`;
}
