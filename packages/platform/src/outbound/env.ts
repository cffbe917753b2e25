import { z } from "zod";

/** `1`/`true` → true, `0`/`false`/unset → false; anything else is refused. */
const flag = z
  .enum(["0", "1", "true", "false", ""])
  .default("0")
  .transform((v) => v === "1" || v === "true");

/** A comma-separated list of TCP ports (1–65535), e.g. `443,80,8443`. */
const ports = (def: string) =>
  z
    .string()
    .default(def)
    .transform((v, ctx) => {
      const parts = v.split(",").map((p) => p.trim());
      const nums = parts.map(Number);
      if (parts.some((p) => !/^\d{1,5}$/.test(p)) || nums.some((n) => n < 1 || n > 65_535)) {
        ctx.addIssue({ code: "custom", message: "expected comma-separated ports 1-65535, e.g. 443,80,8443" });
        return z.NEVER;
      }
      return [...new Set(nums)];
    });

/**
 * The env vars of the SSRF guard (`checkTarget`, docs/design/notifications.md), one pair for every service
 * that fetches a URL an agent chose (the notifications service's webhooks and identity's owner
 * verification next). Spread into each service's env schema, so one switch governs every outbound
 * fetch of a deployment.
 */
export const outboundTargetEnv = {
  /** The ports a target URL may name; lifted by WEBHOOK_ALLOW_PRIVATE. */
  WEBHOOK_ALLOWED_PORTS: ports("443,80,8443"),
  /**
   * FOR TESTS AND LOCAL SETUPS ONLY: also allow `http:` URLs, any port and loopback, private,
   * link-local and metadata addresses as targets. Off by default.
   */
  WEBHOOK_ALLOW_PRIVATE: flag,
};
