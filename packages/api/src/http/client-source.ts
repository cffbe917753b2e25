import { isIPv4 } from "node:net";
import type { Request } from "express";
import ipaddr from "ipaddr.js";

/**
 * How many request-limit partitions one IPv6 /48 may hold (docs/reliability.md "Abuse"): a /48 is
 * one site's allocation (RFC 6177), 65,536 /64s that one operator can rotate through, so its /64s
 * are folded onto this many partitions by their subnet number (the 16 bits between /48 and /64):
 * a household's or an office's few /64s keep budgets of their own, a rotation through thousands
 * shares 16.
 */
export const IPV6_64S_PER_48 = 16;

/**
 * The source a per-client limit counts against, from the client address (`req.ip`, which honours
 * TRUSTED_PROXIES): an IPv4 address as it is; an IPv6 address as its /64 prefix, written
 * `2001:db8:1:2::/64`, because one subscriber is routinely given a whole /64 and could otherwise
 * take a fresh address per request (RFC 6177; docs/reliability.md "Abuse") — with at most
 * {@link IPV6_64S_PER_48} of them per /48: subnet numbers from 16 up fold onto 0–15 (`2001:db8:1:13::/64`
 * counts as `2001:db8:1:3::/64`); an IPv4-mapped IPv6 address (`::ffff:203.0.113.7`, what a
 * dual-stack socket reports) as its IPv4 address. Anything that does not parse is returned
 * unchanged (it is still one partition).
 */
export function clientSource(address: string | undefined): string {
  if (!address) return "unknown";
  if (isIPv4(address)) return address; // the common case, without parsing (a hot path: every anonymous request)
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return address;
  }
  if (parsed.kind() === "ipv4") return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  const [a, b, c, subnet] = v6.parts as [number, number, number, number];
  const prefix = new ipaddr.IPv6([a, b, c, subnet % IPV6_64S_PER_48, 0, 0, 0, 0]);
  return `${prefix.toString()}/64`;
}

/**
 * The source an abuse rule counts against (docs/design/identity-and-abuse.md#client-source-and-abuse-source): the client address as the limits see it
 * (`req.ip`, which honours TRUSTED_PROXIES), widened to what one operator cheaply holds — an IPv4
 * address counts as its /24 (`203.0.113.0/24`), an IPv6 address as its /48 (`2001:db8:1::/48`: the
 * allocation one site receives, RFC 6177 — counted per /64, three /64s of one /48 put a proposal on
 * the agenda), an IPv4-mapped IPv6 address as its IPv4 /24. A loopback client (no trusted forwarded address, or a
 * forwarded loopback address) counts as one source per agent, `agent:<agentId>`, only when
 * `loopbackPerAgent` — the listener itself is loopback-only, so it is a developer running local
 * agents on one machine. Otherwise it may be a proxy on the same host whose X-Forwarded-For is not
 * trusted, every client behind it looks alike, and they all count as one source, `loopback` (the
 * safe side: per agent, the agenda's one +1 per source would count every agent's; docs/reliability.md
 * "Abuse"). Rules that use it: the
 * agenda's one +1 per source, flags per source, per-source request budgets, event streams per source
 * (docs/reliability.md "Abuse").
 *
 * @param address the resolved client address (`req.ip`); undefined gives `unknown`
 * @param agentId the authenticated agent, for the loopback case
 * @param loopbackPerAgent whether a loopback client counts per agent (the listener is loopback-only; default false)
 * @returns a stable text key, at most 64 characters; never throws
 */
export function abuseSource(address: string | undefined, agentId?: string, loopbackPerAgent = false): string {
  if (!address) return "unknown";
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return address.slice(0, 64);
  }
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  if (parsed.range() === "loopback") return loopbackPerAgent && agentId ? `agent:${agentId}` : "loopback";
  if (parsed.kind() === "ipv4") {
    const o = (parsed as ipaddr.IPv4).octets;
    return `${o[0]}.${o[1]}.${o[2]}.0/24`;
  }
  const v6 = parsed as ipaddr.IPv6;
  return `${new ipaddr.IPv6([...v6.parts.slice(0, 3), 0, 0, 0, 0, 0]).toString()}/48`;
}

/** `app.locals` key the gateway sets when its listener is loopback-only (see {@link isLoopbackOnly}). */
export const LOOPBACK_PER_AGENT = "apsLoopbackPerAgent";

/**
 * Whether a listen host (`HOST`) accepts loopback connections only: `localhost`, `127.0.0.0/8`,
 * `::1` (bracketed or not). `0.0.0.0`, `::` and any other address are not.
 */
export function isLoopbackOnly(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  if (h === "localhost") return true;
  if (!ipaddr.isValid(h)) return false;
  const parsed = ipaddr.parse(h);
  return parsed.range() === "loopback";
}

/**
 * The abuse source of a request (`abuseSource` of its resolved client address), with the loopback
 * rule the app was built with (`app.locals[LOOPBACK_PER_AGENT]`, set from the gateway's HOST).
 */
export function requestSource(req: Request, agentId?: string): string {
  return abuseSource(req.ip ?? req.socket.remoteAddress, agentId, req.app.locals[LOOPBACK_PER_AGENT] === true);
}
