import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";

/**
 * Signing per the Standard Webhooks specification (standardwebhooks.com, "Signature scheme"):
 * `v1,` + base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the base64
 * bytes after `whsec_`. Done by the `standardwebhooks` package, the specification's own library.
 */

/** A new endpoint secret: `whsec_` + base64 of 32 random bytes (the spec allows 24–64 bytes). */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/**
 * The three Standard Webhooks headers of one attempt; `timestamp` in Unix seconds. With several
 * `secrets` (the current one first, then the one a rotation replaced, during its overlap window:
 * docs/design/notifications.md#ping-redelivery-and-secret-rotation) `webhook-signature` carries one `v1,<sig>` per secret, space-separated,
 * as the specification allows; a receiver accepts the message when any one verifies.
 */
export function signedHeaders(
  secrets: string | readonly string[],
  msgId: string,
  timestampS: number,
  body: string,
): Record<string, string> {
  const at = new Date(timestampS * 1000);
  const signature = (typeof secrets === "string" ? [secrets] : secrets)
    .map((s) => new Webhook(s).sign(msgId, at, body))
    .join(" ");
  return { "webhook-id": msgId, "webhook-timestamp": String(timestampS), "webhook-signature": signature };
}
