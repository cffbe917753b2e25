import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { ApsError } from "../errors.js";

/**
 * The SSRF guard of webhook targets (docs/design/notifications.md#ssrf-guard): a target must be `https:`
 * and every address its host resolves to must be a public unicast address — ipaddr.js's range
 * `unicast`, so loopback, private (RFC 1918, unique-local), link-local (incl. the cloud metadata
 * address 169.254.169.254 and fd00:ec2::254), carrier-grade NAT (100.100.100.200), unspecified,
 * multicast, reserved and the IPv6 transition ranges that embed an IPv4 address are refused.
 * Checked when a webhook is registered and again before each delivery, which then connects to the
 * address checked (no second DNS answer: DNS rebinding).
 *
 * An IPv6 target (docs/design/notifications.md#attempts): an IPv6 address must also lie in the global unicast block
 * 2000::/3, which refuses the deprecated IPv4-compatible addresses `::a.b.c.d` (`::a9fe:a9fe` is
 * 169.254.169.254 on hosts that still route them) and every other block outside it; the URL's port
 * (its scheme's default when absent) must be in WEBHOOK_ALLOWED_PORTS (443, 80, 8443 by default).
 * The refusals name the rule, never the address a name resolved to (no map of internal names).
 */

/** A target that passed the guard: the URL and the one address to connect to. */
export interface CheckedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

/** The IPv6 global unicast block (RFC 4291 §2.4): every public IPv6 address lies in it. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3");

/**
 * True when `ip` is a public unicast address: IPv4 in ipaddr.js's range `unicast`; IPv6 in
 * `unicast` and inside 2000::/3 (so `::a9fe:a9fe`, IPv4-compatible, is refused:
 * an IPv4-mapped IPv6 address is judged as its IPv4 address.
 */
export function isPublicAddress(ip: string): boolean {
  if (!ipaddr.isValid(ip)) return false;
  let a = ipaddr.parse(ip);
  if (a.kind() === "ipv6" && (a as ipaddr.IPv6).isIPv4MappedAddress()) a = (a as ipaddr.IPv6).toIPv4Address();
  if (a.range() !== "unicast") return false;
  return a.kind() === "ipv4" || (a as ipaddr.IPv6).match(GLOBAL_UNICAST_V6);
}

/** The ports a webhook target may use unless `allowPrivate` (WEBHOOK_ALLOWED_PORTS' default). */
export const DEFAULT_ALLOWED_PORTS: readonly number[] = [443, 80, 8443];

/** The target rules of one deployment (the notifications config). */
export interface TargetPolicy {
  /**
   * WEBHOOK_ALLOW_PRIVATE — tests and local setups only: also `http:`, any address and any port
   * (the local receivers of tests listen on random loopback ports).
   */
  allowPrivate: boolean;
  /** WEBHOOK_ALLOWED_PORTS: the ports a target may name (the scheme's default when it names none). */
  allowedPorts: readonly number[];
  /** DNS seam for tests; the system resolver by default. */
  resolve?: Resolver;
}

/** The port `url` connects to: its own, or its scheme's default (443 for https:, 80 for http:). */
export function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === "http:" ? 80 : 443;
}

/** Resolves all addresses of `host` (an IP literal resolves to itself). */
export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/**
 * Parses and checks `raw` against `policy`; resolves the target or throws ApsError
 * `invalid_request` naming the rule it broke (never the addresses a name resolved to). With
 * `policy.allowPrivate` (WEBHOOK_ALLOW_PRIVATE, tests and local setups only) `http:`, any address
 * and any port are accepted.
 */
export async function checkTarget(raw: string, policy: TargetPolicy): Promise<CheckedTarget> {
  const { allowPrivate, resolve = systemResolver } = policy;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ApsError("invalid_request", "url must be an absolute https URL");
  }
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:"))
    throw new ApsError("invalid_request", "url must use https");
  if (url.username || url.password) throw new ApsError("invalid_request", "url must not carry credentials");
  if (!allowPrivate && !policy.allowedPorts.includes(portOf(url)))
    throw new ApsError(
      "invalid_request",
      `url port ${portOf(url)} is not allowed; use one of ${policy.allowedPorts.join(", ")}`,
    );
  const host = url.hostname.replace(/^\[|\]$/g, "");
  // One answer for a name that does not resolve and one that resolves to a non-public address:
  // two would let a caller probe which internal names exist (docs/design/notifications.md#ssrf-guard).
  const noPublicAddress = () =>
    new ApsError(
      "invalid_request",
      `url host ${host} must resolve to public addresses only: it does not resolve, or an address is loopback, private, link-local or otherwise non-public`,
    );
  let addrs: { address: string; family: number }[];
  if (isIP(host)) addrs = [{ address: host, family: isIP(host) }];
  else {
    try {
      addrs = await resolve(host);
    } catch {
      throw noPublicAddress();
    }
  }
  if (addrs.length === 0) throw noPublicAddress();
  if (!allowPrivate && addrs.some((a) => !isPublicAddress(a.address))) throw noPublicAddress();
  const first = addrs[0]!;
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
