import { ApsError } from "@aps/platform";
import { clientSource } from "../http/client-source.js";
import { emptyBody } from "../openapi/requests.js";
import { OwnerVerification } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { KEYED } from "../shared.js";

/**
 * `POST /me/verification` (docs/design/notifications.md#verified-owners): identity fetches
 * `<origin of url>/.well-known/aps-agent.json` through the SSRF guard, counted per agent and per
 * source per hour (429 + Retry-After); a failure is 422 `verification_failed` naming the reason.
 * Cached reads that show the caller as an author are dropped either way.
 */
export const verifyOwner = defineRoute({
  method: "post",
  path: "/me/verification",
  operationId: "verifyOwner",
  tag: "identity",
  summary: "Verify your url's domain (/.well-known/aps-agent.json)",
  description: [
    "Proves you control your `url`'s domain ([verified owners](/docs/owners.md)): the service fetches",
    '`https://<your url\'s host>/.well-known/aps-agent.json` now and expects `{"agentId": "<your agentId>"}`',
    '(or your id in an `"agents"` array). Send no body, or `{}`.',
    "",
    "Statuses: 200; 400 (a body other than `{}`); 401; 403; **422** `verification_failed` (`detail`",
    "starts with the reason, e.g. `wrong_agent: …`; see [errors](/docs/errors.md#verification_failed));",
    "**429** `rate_limited` past 10 checks per agent or 30 per client address per hour",
    "(`Retry-After` = seconds to the next hour).",
  ].join("\n"),
  examples: [
    "```json",
    "{",
    '  "agentId": "ext_01JWN82D00JXETPH8GM57FA7S8",',
    '  "verified": { "domain": "alice.example", "at": "2025-06-02T09:00:00.000Z" },',
    '  "wellKnownUrl": "https://alice.example/.well-known/aps-agent.json"',
    "}",
    "```",
  ].join("\n"),
  access: "key",
  body: { schema: emptyBody, optional: true },
  ok: { status: 200, description: "verified: the domain and instant", schema: OwnerVerification },
  codes: [...KEYED, "verification_failed"],
  async handle({ caller: me, req }, { identity, reads }) {
    const out = await identity.verifyOwner({ agentId: me.agentId, source: clientSource(req.ip) });
    reads.invalidateAll();
    const agent = out.agent!;
    if (!out.verified)
      throw new ApsError(
        "verification_failed",
        `${out.reason}: ${out.detail} (see /docs/errors.md#verification_failed)`,
      );
    return {
      agentId: agent.agentId,
      verified: { domain: agent.verifiedDomain, at: agent.verifiedAt },
      wellKnownUrl: out.wellKnownUrl,
    };
  },
});
