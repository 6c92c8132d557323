// The scopes a token may carry: the four the nine operations of docs/api.md read, and the rest of
// the platform's published scope names, so that client libraries that ask for their usual scopes get
// a token. A scope outside this list is refused by the token service ("invalid scope requested").
export const SPEC_SCOPES = [
  'analytics:read:extensions',
  'analytics:read:games',
  'channel:read:subscriptions',
  'user:read:broadcast',
] as const;

/**
 * The scopes the served operations need: those four, plus those of the lookups real clients
 * start with (/users' email, /channels/followers' list, /channels/followed and /streams/followed),
 * of the reads around them (/subscriptions/user, /moderation/moderators), and of the writes (PUT
 * /users, POST /streams/markers, DELETE /videos, POST /clips). A user token with all of them may
 * call every operation; the start-up banner prints one.
 */
export const OPERATION_SCOPES = [
  ...SPEC_SCOPES,
  'channel:manage:broadcast',
  'channel:manage:videos',
  'clips:edit',
  'moderation:read',
  'moderator:read:followers',
  'user:edit',
  'user:read:email',
  'user:read:follows',
  'user:read:subscriptions',
] as const;

export const SCOPES = [
  ...OPERATION_SCOPES,
  'bits:read',
  'channel:bot',
  'channel:edit:commercial',
  'channel:manage:ads',
  'channel:manage:extensions',
  'channel:manage:guest_star',
  'channel:manage:moderators',
  'channel:manage:polls',
  'channel:manage:predictions',
  'channel:manage:raids',
  'channel:manage:redemptions',
  'channel:manage:schedule',
  'channel:manage:vips',
  'channel:moderate',
  'channel:read:ads',
  'channel:read:charity',
  'channel:read:editors',
  'channel:read:goals',
  'channel:read:guest_star',
  'channel:read:hype_train',
  'channel:read:polls',
  'channel:read:predictions',
  'channel:read:redemptions',
  'channel:read:stream_key',
  'channel:read:vips',
  'chat:edit',
  'chat:read',
  'user:bot',
  'user:edit:broadcast',
  'user:manage:blocked_users',
  'user:read:blocked_users',
  'user:read:chat',
  'user:write:chat',
  'whispers:read',
] as const;

export type Scope = (typeof SCOPES)[number];

const known = new Set<string>(SCOPES);
export function isScope(s: string): s is Scope {
  return known.has(s);
}

/** Splits a space-separated scope string (as sent in forms and stored), dropping empties. */
export function splitScopes(s: string | undefined | null): string[] {
  return (s ?? '').split(/[\s+]+/).filter(Boolean);
}
