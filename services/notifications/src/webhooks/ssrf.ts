import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { ApsError } from "@aps/platform";

/**
 * The SSRF guard of webhook targets (issue #14 "SSRF", docs/adr/0127): a target must be `https:`
 * and every address its host resolves to must be a public unicast address — ipaddr.js's range
 * `unicast`, so loopback, private (RFC 1918, unique-local), link-local (incl. the cloud metadata
 * address 169.254.169.254 and fd00:ec2::254), carrier-grade NAT (100.100.100.200), unspecified,
 * multicast, reserved and the IPv6 transition ranges that embed an IPv4 address are refused.
 * Checked when a webhook is registered and again before each delivery, which then connects to the
 * address checked (no second DNS answer: DNS rebinding).
 */

/** A target that passed the guard: the URL and the one address to connect to. */
export interface CheckedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

/** True when `ip` is a public unicast address (IPv4-mapped IPv6 is judged as its IPv4 address). */
export function isPublicAddress(ip: string): boolean {
  if (!ipaddr.isValid(ip)) return false;
  let a = ipaddr.parse(ip);
  if (a.kind() === "ipv6" && (a as ipaddr.IPv6).isIPv4MappedAddress()) a = (a as ipaddr.IPv6).toIPv4Address();
  return a.range() === "unicast";
}

/** Resolves all addresses of `host` (an IP literal resolves to itself). */
export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/**
 * Parses and checks `raw`; resolves the target or throws ApsError `invalid_request` naming why.
 * With `allowPrivate` (WEBHOOK_ALLOW_PRIVATE, tests and local setups only) `http:` and any
 * address are accepted.
 */
export async function checkTarget(
  raw: string,
  allowPrivate: boolean,
  resolve: Resolver = systemResolver,
): Promise<CheckedTarget> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ApsError("invalid_request", "url must be an absolute https URL");
  }
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:"))
    throw new ApsError("invalid_request", "url must use https");
  if (url.username || url.password) throw new ApsError("invalid_request", "url must not carry credentials");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  let addrs: { address: string; family: number }[];
  if (isIP(host)) addrs = [{ address: host, family: isIP(host) }];
  else {
    try {
      addrs = await resolve(host);
    } catch {
      throw new ApsError("invalid_request", `url host ${host} does not resolve`);
    }
  }
  if (addrs.length === 0) throw new ApsError("invalid_request", `url host ${host} does not resolve`);
  if (!allowPrivate) {
    const bad = addrs.find((a) => !isPublicAddress(a.address));
    if (bad)
      throw new ApsError(
        "invalid_request",
        `url resolves to ${bad.address}, a loopback, private, link-local or otherwise non-public address`,
      );
  }
  const first = addrs[0]!;
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
