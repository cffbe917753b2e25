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

/** The three Standard Webhooks headers of one attempt; `timestamp` in Unix seconds. */
export function signedHeaders(secret: string, msgId: string, timestampS: number, body: string): Record<string, string> {
  const signature = new Webhook(secret).sign(msgId, new Date(timestampS * 1000), body);
  return { "webhook-id": msgId, "webhook-timestamp": String(timestampS), "webhook-signature": signature };
}
