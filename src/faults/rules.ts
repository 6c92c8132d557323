// The two ways of asking for injected faults (src/faults/injector.ts), read here: the `Helixd-Fault`
// request header and the `--faults` rules given at start. Nothing but text in, plans out: config.ts
// reads `--faults` with this, and the command line loads nothing heavy (src/cli/index.ts says why).

/** The request header a client's test sets to fail that one request. */
export const FAULT_HEADER = 'Helixd-Fault';

/**
 * The statuses a fault may answer with: what an operation answers when Helix fails it (the
 * rate limit, a store that cannot serve, a bug), each documented in /openapi.json.
 */
export const FAULT_STATUSES = [429, 500, 503] as const;
export type FaultStatus = (typeof FAULT_STATUSES)[number];

/** The longest latency a fault may add: below the 30 s most clients wait for an answer. */
export const MAX_FAULT_LATENCY_MS = 30_000;

/**
 * The latest a 429's `Ratelimit-Reset` may name, and what it names unless told: a minute from now,
 * when Helix's emptied bucket is full again.
 */
export const MAX_FAULT_RESET_MS = 60_000;

/** What to do to one request; every field optional, at most one of `status` and `reset`. */
export interface FaultPlan {
  /** wait this long before anything else */
  latencyMs?: number;
  /** then answer with this status, as Helix does */
  status?: FaultStatus;
  /** with status 429: `Ratelimit-Reset` names the instant this long from now (default a minute) */
  resetAfterMs?: number;
  /** then drop the connection without an answer */
  reset?: boolean;
}

/**
 * What to do to one EventSub notification as it is sent (the WebSocket or the webhook transport):
 * not send it (a webhook attempt counts as failed), send it late, or send it twice with the same
 * `message_id`. One of the three.
 */
export type DeliveryPlan = { drop: true } | { delayMs: number } | { duplicate: true };

/**
 * One `--faults` rule: its fault, on `percent` of the requests (of one client's, if `clientId`);
 * or, for a delivery rule, on `percent` of the EventSub notifications sent (of one client's
 * subscriptions).
 */
export type FaultRule =
  | { fault: FaultPlan; delivery?: undefined; percent: number; clientId?: string }
  | { delivery: DeliveryPlan; fault?: undefined; percent: number; clientId?: string };

/** A header or `--faults` text that breaks the syntax; the message says which rule. */
export class FaultSyntaxError extends Error {}

const STATUS_LIST = FAULT_STATUSES.join(', ');

function status(text: string): FaultStatus {
  const n = Number(text);
  if (!/^\d{3}$/.test(text) || !FAULT_STATUSES.includes(n as FaultStatus))
    throw new FaultSyntaxError(`"${text}" is not a status it can inject (${STATUS_LIST})`);
  return n as FaultStatus;
}

function latency(text: string): number {
  const m = /^(\d+)(ms|s)$/.exec(text);
  const ms = m ? Number(m[1]) * (m[2] === 's' ? 1000 : 1) : Number.NaN;
  if (!(ms > 0 && ms <= MAX_FAULT_LATENCY_MS))
    throw new FaultSyntaxError(
      `latency "${text}" must be a duration from 1ms to ${MAX_FAULT_LATENCY_MS / 1000}s (examples: 800ms, 2s)`,
    );
  return ms;
}

/** How long after a 429 its bucket says it is full again: 0 to a minute, as Helix's may. */
function resetAfter(text: string): number {
  const m = /^(\d+)(ms|s)$/.exec(text);
  const ms = m ? Number(m[1]) * (m[2] === 's' ? 1000 : 1) : Number.NaN;
  if (!(ms >= 0 && ms <= MAX_FAULT_RESET_MS))
    throw new FaultSyntaxError(
      `ratelimit-reset "${text}" must be a duration from 0s to ${MAX_FAULT_RESET_MS / 1000}s (examples: 1s, 500ms): Helix's bucket is full again within a minute`,
    );
  return ms;
}

/** The items of a list separated by commas, each trimmed; an empty one is an error. */
function items(text: string, example: string): string[] {
  const list = text.split(',').map((s) => s.trim());
  if (list.some((s) => s === ''))
    throw new FaultSyntaxError(`an empty item: faults are separated by single commas (${example})`);
  return list;
}

/** Adds `part` to `plan`, refusing a second fault of the same kind and a status with a reset. */
function combine(plan: FaultPlan, part: FaultPlan, item: string): void {
  const clash =
    (part.latencyMs !== undefined && plan.latencyMs !== undefined) ||
    ((part.status !== undefined || part.reset) && (plan.status !== undefined || plan.reset));
  if (clash)
    throw new FaultSyntaxError(
      `"${item}": at most one latency, and one status or reset (a reset sends no status)`,
    );
  Object.assign(plan, part);
}

const HEADER_EXAMPLE = 'status=503, latency=800ms';

/**
 * Reads a `Helixd-Fault` header: items separated by commas, each `status=<429|500|503>`,
 * `latency=<n>ms` (or `<n>s`), `reset` or, with status=429, `ratelimit-reset=<duration>`; at most
 * one latency, and a status or a reset.
 */
export function parseFaultHeader(value: string): FaultPlan {
  const plan: FaultPlan = {};
  let resetItem: string | undefined;
  for (const item of items(value, HEADER_EXAMPLE)) {
    const [key, arg, ...rest] = item.split('=').map((s) => s.trim());
    let part: FaultPlan;
    if (key === 'reset' && arg === undefined) part = { reset: true };
    else if (key === 'status' && arg !== undefined && !rest.length) part = { status: status(arg) };
    else if (key === 'latency' && arg !== undefined && !rest.length) part = { latencyMs: latency(arg) };
    else if (key === 'ratelimit-reset' && arg !== undefined && !rest.length && resetItem === undefined) {
      plan.resetAfterMs = resetAfter(arg);
      resetItem = item;
      continue;
    } else
      throw new FaultSyntaxError(
        `"${item}" is not a fault: each is status=<${FAULT_STATUSES.join('|')}>, latency=<duration>, reset or (with status=429, once) ratelimit-reset=<duration>, separated by commas (${HEADER_EXAMPLE})`,
      );
    combine(plan, part, item);
  }
  if (resetItem !== undefined && plan.status !== 429)
    throw new FaultSyntaxError(`"${resetItem}" goes with status=429 only (status=429, ${resetItem})`);
  return plan;
}

const RULES_EXAMPLE =
  '503:2%, latency:300ms:10%, 429:1%@<client id>, 429:ratelimit-reset=1s:5%, dup-delivery:10%';

function percent(text: string, item: string): number {
  const m = /^(\d+(?:\.\d+)?)%$/.exec(text);
  const p = m ? Number(m[1]) : Number.NaN;
  if (!(p > 0 && p <= 100))
    throw new FaultSyntaxError(
      `"${item}": the share "${text}" must be a percentage above 0 and at most 100 (2%, 0.5%)`,
    );
  return p;
}

/** A client id as helixd's clients have them (and as a request's Client-Id may name one). */
const CLIENT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Reads `--faults`: rules separated by commas, each `<429|500|503>:<p>%`, `latency:<duration>:<p>%`,
 * `reset:<p>%` or `429:ratelimit-reset=<duration>:<p>%`, optionally followed by `@<client id>`: that fault on p percent of the requests
 * (of that client's only), drawn for each request independently. The delivery rules,
 * `drop-delivery:<p>%`, `delay-delivery:<duration>:<p>%` and `dup-delivery:<p>%`, are drawn for
 * each EventSub notification sent instead (of that client's subscriptions only).
 */
export function parseFaultRules(text: string): FaultRule[] {
  return items(text, RULES_EXAMPLE).map((item) => {
    const [ruleText, clientId, ...more] = item.split('@').map((s) => s.trim());
    if (clientId !== undefined && (more.length || !CLIENT_ID.test(clientId)))
      throw new FaultSyntaxError(
        `"${item}": after @ comes one client id (letters, digits, _ and -, at most 64)`,
      );
    const rule = parseRule(ruleText as string, item);
    return clientId === undefined ? rule : { ...rule, clientId };
  });
}

function parseRule(text: string, item: string): FaultRule {
  const parts = text.split(':').map((s) => s.trim());
  const [kind, a, b] = parts;
  if (kind === 'latency' && parts.length === 3)
    return { fault: { latencyMs: latency(a as string) }, percent: percent(b as string, item) };
  if (kind === 'reset' && parts.length === 2)
    return { fault: { reset: true }, percent: percent(a as string, item) };
  if (kind === 'drop-delivery' && parts.length === 2)
    return { delivery: { drop: true }, percent: percent(a as string, item) };
  if (kind === 'dup-delivery' && parts.length === 2)
    return { delivery: { duplicate: true }, percent: percent(a as string, item) };
  if (kind === 'delay-delivery' && parts.length === 3)
    return { delivery: { delayMs: latency(a as string) }, percent: percent(b as string, item) };
  if (kind !== undefined && /^\d+$/.test(kind) && parts.length === 2)
    return { fault: { status: status(kind) }, percent: percent(a as string, item) };
  const [key, delay, ...rest] = (a ?? '').split('=').map((s) => s.trim());
  if (
    kind === '429' &&
    parts.length === 3 &&
    key === 'ratelimit-reset' &&
    delay !== undefined &&
    !rest.length
  )
    return { fault: { status: 429, resetAfterMs: resetAfter(delay) }, percent: percent(b as string, item) };
  throw new FaultSyntaxError(
    `"${item}" is not a rule: each is <${FAULT_STATUSES.join('|')}>:<p>%, latency:<duration>:<p>%, reset:<p>%, 429:ratelimit-reset=<duration>:<p>%, drop-delivery:<p>%, delay-delivery:<duration>:<p>% or dup-delivery:<p>%, optionally @<client id>, separated by commas (${RULES_EXAMPLE})`,
  );
}

/** A plan in the header's syntax: what the log line says was injected. */
export function describePlan(plan: FaultPlan): string {
  const parts: string[] = [];
  if (plan.latencyMs !== undefined) parts.push(`latency=${plan.latencyMs}ms`);
  if (plan.status !== undefined) parts.push(`status=${plan.status}`);
  if (plan.resetAfterMs !== undefined) parts.push(`ratelimit-reset=${plan.resetAfterMs}ms`);
  if (plan.reset) parts.push('reset');
  return parts.join(', ');
}

/** A delivery fault in `--faults`' syntax, without its share. */
function deliveryText(plan: DeliveryPlan): string {
  if ('drop' in plan) return 'drop-delivery';
  if ('duplicate' in plan) return 'dup-delivery';
  return `delay-delivery:${plan.delayMs}ms`;
}

/** A rule as the log and the admin API show it. */
export const describeRule = (r: FaultRule) =>
  r.delivery
    ? `${deliveryText(r.delivery)} on ${r.percent}% of the notifications${r.clientId ? ` to ${r.clientId}'s subscriptions` : ''}`
    : `${describePlan(r.fault)} on ${r.percent}%${r.clientId ? ` of ${r.clientId}'s requests` : ''}`;

/** The rules in `--faults`' syntax, which PUT takes back. */
export function rulesText(rules: readonly FaultRule[]): string {
  return rules
    .map((r) => {
      const { latencyMs, status, resetAfterMs } = r.fault ?? {};
      const what = r.delivery
        ? deliveryText(r.delivery)
        : latencyMs !== undefined
          ? `latency:${latencyMs}ms`
          : status === undefined
            ? 'reset'
            : resetAfterMs !== undefined
              ? `${status}:ratelimit-reset=${resetAfterMs}ms`
              : String(status);
      return `${what}:${r.percent}%${r.clientId ? `@${r.clientId}` : ''}`;
    })
    .join(', ');
}
