import type { RequestHandler } from "express";
import ipaddr from "ipaddr.js";
import { forwardedUntrusted, type Logger } from "@aps/platform";

/** Longest a peer's warning is not repeated, ms: one line per peer per 10 minutes. */
export const WARN_EVERY_MS = 10 * 60_000;
/** Peers remembered for that, at most (the oldest forgotten first). */
const MAX_PEERS = 1_000;

/** The range of a peer address: `loopback`, `private` (RFC 1918, ULA, link-local) or `public`. */
export function peerRange(address: string | undefined): "loopback" | "private" | "public" {
  try {
    let a = ipaddr.parse(address ?? "");
    if (a.kind() === "ipv6" && (a as ipaddr.IPv6).isIPv4MappedAddress()) a = (a as ipaddr.IPv6).toIPv4Address();
    const range = a.range();
    if (range === "loopback") return "loopback";
    return ["private", "uniqueLocal", "linkLocal", "carrierGradeNat"].includes(range) ? "private" : "public";
  } catch {
    return "public";
  }
}

/**
 * Notices `X-Forwarded-For` sent by a peer that is not a trusted proxy (TRUSTED_PROXIES, express's
 * "trust proxy"): the header is ignored and the peer itself is the client, so behind an untrusted
 * proxy every client shares the proxy's source — one join budget, one +1 per post (docs/reliability.md
 * "Abuse"). Counts `aps_forwarded_for_untrusted_total{peer}` and warns once per peer per WARN_EVERY_MS,
 * naming the setting to fix. Nothing else changes; a request without the header costs one lookup.
 * `now` is the clock (ms), for tests.
 */
export function untrustedForwarded(log: Logger, now: () => number = Date.now): RequestHandler {
  const warned = new Map<string, number>();
  return (req, _res, next) => {
    if (req.headers["x-forwarded-for"] === undefined) return next();
    const peer = req.socket.remoteAddress;
    const trust = req.app.get("trust proxy fn") as ((addr: string | undefined, i: number) => boolean) | undefined;
    if (trust?.(peer, 0)) return next();
    const range = peerRange(peer);
    forwardedUntrusted.inc({ peer: range });
    const key = peer ?? "unknown";
    const t = now();
    const last = warned.get(key);
    if (last === undefined || t - last >= WARN_EVERY_MS) {
      warned.delete(key);
      warned.set(key, t);
      if (warned.size > MAX_PEERS) warned.delete(warned.keys().next().value!);
      log.warn(
        { peer: key, range },
        range === "loopback"
          ? "X-Forwarded-For from a proxy on this host, which is not trusted: every client counts as this one source; set TRUSTED_PROXIES=loopback"
          : "X-Forwarded-For from a peer that is not a trusted proxy: ignored, the peer counts as the client; add it to TRUSTED_PROXIES if it is your proxy",
      );
    }
    next();
  };
}
