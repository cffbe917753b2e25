import { ApsError, checkTarget, outboundRequest, type TargetPolicy } from "@aps/platform";

/**
 * Owner verification (docs/design/notifications.md#verified-owners): an agent whose profile `url` is
 * on a domain it controls proves it by serving `/.well-known/aps-agent.json` (RFC 8615 well-known
 * URI) at that URL's origin, naming its agent id: `{"agentId": "ext_…"}` or, for a domain that runs
 * several agents, `{"agents": ["ext_…", …]}` (both may be given; either naming it suffices).
 */

/** The path of the owner file on the agent's domain (RFC 8615). */
export const WELL_KNOWN_PATH = "/.well-known/aps-agent.json";

/** Most bytes of the owner file read (16 KiB: a list of a few hundred agent ids); more is `too_large`. */
export const OWNER_FILE_MAX_BYTES = 16 * 1024;

/**
 * Why a check did not verify (docs/reference/errors.md#verification_failed):
 * - `no_url`: the agent has no profile url;
 * - `not_https`: the url is not `https:` (`http:` only with WEBHOOK_ALLOW_PRIVATE);
 * - `port_not_allowed`: its port is outside WEBHOOK_ALLOWED_PORTS;
 * - `no_public_address`: its host does not resolve, or resolves to a loopback, private, link-local
 *   or other non-public address (one reason for both, as the SSRF guard gives one message: two
 *   would let an agent probe which internal names exist, docs/design/notifications.md#ssrf-guard);
 * - `unreachable`: connection, TLS or reset failure;
 * - `timeout`: no complete answer within the deadline;
 * - `not_found`: the file answered 404 or 410;
 * - `http_status`: any other non-2xx status (redirects are not followed);
 * - `too_large`: the file is over OWNER_FILE_MAX_BYTES;
 * - `invalid_document`: not a JSON object with a string `agentId` or a string array `agents`;
 * - `wrong_agent`: the file names other agents, not this one.
 */
export type OwnerFailure =
  | "no_url"
  | "not_https"
  | "port_not_allowed"
  | "no_public_address"
  | "unreachable"
  | "timeout"
  | "not_found"
  | "http_status"
  | "too_large"
  | "invalid_document"
  | "wrong_agent";

/**
 * Failures that say the file cannot name the agent whatever the network does: they clear a
 * verification. The others (`unreachable`, `timeout`, `http_status`, `no_public_address`: a name
 * that stopped resolving is as likely a DNS outage) may be passing trouble: a periodic re-check un-verifies only after OWNER_RECHECK_FAILURES_MAX of them in
 * a row (docs/design/notifications.md#verified-owners).
 */
export const DEFINITE_FAILURES: ReadonlySet<OwnerFailure> = new Set<OwnerFailure>([
  "no_url",
  "not_https",
  "port_not_allowed",
  "not_found",
  "too_large",
  "invalid_document",
  "wrong_agent",
]);

/** What one check found: the domain it proved, or why not. */
export type OwnerCheck =
  | { verified: true; domain: string; wellKnownUrl: string }
  | { verified: false; reason: OwnerFailure; detail: string; wellKnownUrl: string };

/** How checks fetch: the SSRF rules (WEBHOOK_ALLOW_PRIVATE, WEBHOOK_ALLOWED_PORTS) and the deadline. */
export interface OwnerCheckOptions {
  policy: TargetPolicy;
  /** OWNER_CHECK_TIMEOUT_MS: one deadline over DNS-checked connect, request and answer, ms. */
  deadlineMs: number;
}

/** The owner file's URL for profile url `url` (its origin + WELL_KNOWN_PATH), or undefined when `url` does not parse. */
export function wellKnownUrlOf(url: string): URL | undefined {
  try {
    const u = new URL(url);
    return new URL(WELL_KNOWN_PATH, u.origin === "null" ? undefined : u.origin);
  } catch {
    return undefined;
  }
}

/** Maps the SSRF guard's refusal (its message names the rule) to a failure reason. */
function guardFailure(e: ApsError): OwnerFailure {
  if (/https/.test(e.message)) return "not_https";
  if (/port/.test(e.message)) return "port_not_allowed";
  return "no_public_address";
}

/** The agent ids an owner file names, or undefined when it is not a valid owner file. */
export function namedAgents(body: Buffer): string[] | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) return undefined;
  const { agentId, agents } = doc as { agentId?: unknown; agents?: unknown };
  const out: string[] = [];
  if (typeof agentId === "string") out.push(agentId);
  else if (agentId !== undefined) return undefined;
  if (Array.isArray(agents) && agents.every((a) => typeof a === "string")) out.push(...agents);
  else if (agents !== undefined) return undefined;
  return out.length ? out : undefined;
}

/**
 * Fetches the owner file of profile url `url` and tells whether it names `agentId`. The target
 * passes the SSRF guard first (`checkTarget`, docs/design/notifications.md: https only, public addresses,
 * allowed ports) and is fetched pinned to the checked address with a GET under one deadline,
 * reading at most OWNER_FILE_MAX_BYTES; redirects are not followed. Never throws: every failure is
 * a reason with a sentence that never names an internal address.
 */
export async function checkOwner(agentId: string, url: string, opts: OwnerCheckOptions): Promise<OwnerCheck> {
  const target = url ? wellKnownUrlOf(url) : undefined;
  const wellKnownUrl = target?.href ?? "";
  const fail = (reason: OwnerFailure, detail: string): OwnerCheck => ({
    verified: false,
    reason,
    detail,
    wellKnownUrl,
  });
  if (!url) return fail("no_url", "this agent has no profile url; set one with PATCH /v1/me {url}");
  if (!target) return fail("not_https", "the profile url is not an absolute https URL");
  let checked;
  try {
    checked = await checkTarget(target.href, opts.policy);
  } catch (e) {
    if (!(e instanceof ApsError)) throw e;
    return fail(guardFailure(e), `${target.href} cannot be fetched: ${e.message.replace(/^url /, "the url ")}`);
  }
  const o = await outboundRequest(checked, {
    method: "GET",
    headers: { accept: "application/json", "user-agent": "APS-Owner-Check/1" },
    deadlineMs: opts.deadlineMs,
    maxBytes: OWNER_FILE_MAX_BYTES,
  });
  if (o.kind === "timeout")
    return fail("timeout", `${target.href} gave no complete answer within ${opts.deadlineMs} ms`);
  if (o.kind === "failed" || o.kind === "aborted") return fail("unreachable", `${target.href} could not be reached`);
  if (o.kind === "status")
    return o.statusCode === 404 || o.statusCode === 410
      ? fail("not_found", `${target.href} answered ${o.statusCode}: serve {"agentId":"${agentId}"} there`)
      : fail("http_status", `${target.href} answered ${o.statusCode} (redirects are not followed); it must answer 200`);
  if (o.truncated) return fail("too_large", `${target.href} is over ${OWNER_FILE_MAX_BYTES} bytes`);
  const named = namedAgents(o.body);
  if (!named)
    return fail(
      "invalid_document",
      `${target.href} is not a JSON object with a string "agentId" or a string array "agents"`,
    );
  if (!named.includes(agentId))
    return fail("wrong_agent", `${target.href} names ${named.slice(0, 3).join(", ")}, not ${agentId}`);
  return { verified: true, domain: target.hostname.replace(/^\[|\]$/g, "").toLowerCase(), wellKnownUrl };
}
