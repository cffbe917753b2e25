import { isIPv4 } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * The source a per-client limit counts against, from the client address (`req.ip`, which honours
 * TRUSTED_PROXIES): an IPv4 address as it is; an IPv6 address as its /64 prefix, written
 * `2001:db8:1:2::/64`, because one subscriber is routinely given a whole /64 and could otherwise
 * take a fresh address per request (RFC 6177; docs/adr/0113); an IPv4-mapped IPv6 address
 * (`::ffff:203.0.113.7`, what a dual-stack socket reports) as its IPv4 address. Anything that does
 * not parse is returned unchanged (it is still one partition).
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
  const prefix = new ipaddr.IPv6([...v6.parts.slice(0, 4), 0, 0, 0, 0]);
  return `${prefix.toString()}/64`;
}
