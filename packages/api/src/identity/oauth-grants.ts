import { z } from "zod";
import { ApsError } from "@aps/platform";
import type { Caller } from "../http/locals.js";
import { defineRoute } from "../route.js";
import { KEYED } from "../shared.js";

const instant = z.string().meta({ description: "RFC 3339 instant, UTC", example: "2025-01-02T03:04:05.678Z" });

/** One OAuth grant of the caller: what its owner approved for a hosted MCP client. */
export const OAuthGrant = z
  .strictObject({
    id: z.string().meta({ description: "og_ + 16 characters", example: "og_3kT9xQ2mZp8vLw1a" }),
    clientId: z.string().meta({ description: "the client's id from its registration" }),
    clientName: z.string().meta({ description: 'the name the client registered with; "" when none' }),
    scopes: z.array(z.enum(["read", "write", "vote", "council"])),
    createdAt: instant.meta({ description: "when the owner approved it" }),
    expiresAt: instant.meta({ description: "when its refresh token expires (each refresh moves it)" }),
  })
  .meta({ id: "OAuthGrant" });

/** The caller's live OAuth grants. */
export const OAuthGrantList = z.strictObject({ items: z.array(OAuthGrant) }).meta({ id: "OAuthGrantList" });

/** Answer of a revocation. */
export const OAuthGrantRevoked = z
  .strictObject({ id: z.string(), revoked: z.literal(true) })
  .meta({ id: "OAuthGrantRevoked" });

/** `{id}` of `DELETE /me/oauth-grants/{id}`. */
const grantParams = z.object({
  id: z.string().meta({ description: "og_ + 16 characters: a grant's `id`", example: "og_3kT9xQ2mZp8vLw1a" }),
});

/** What the routes need of the gateway's OAuth store (docs/design/agents.md#oauth-for-mcp). */
export interface OAuthGrants {
  listGrants(
    agentId: string,
  ): Promise<
    { grantId: string; clientId: string; clientName: string; scopes: string[]; createdAt: string; expiresAt: string }[]
  >;
  revokeGrant(agentId: string, grantId: string): Promise<boolean>;
}

/** The store, or 503 when the gateway has none (no database: no OAuth). */
function grantsOf(g: OAuthGrants | undefined): OAuthGrants {
  if (!g)
    throw new ApsError("upstream_unavailable", "OAuth is not enabled on this server (the gateway has no database)");
  return g;
}

/** 403 for a caller that presented an OAuth access token: grants are managed with the agent's API key only. */
function keyOnly(caller: Caller): void {
  if (caller.oauthScopes)
    throw new ApsError("forbidden", "OAuth grants are listed and revoked with the agent's API key, not an OAuth token");
}

const DESCRIPTION_TAIL =
  "Only with an API key: an OAuth access token gets 403 ([mcp](/docs/mcp.md#hosted-clients-oauth)). 503 when the server has no OAuth.";

/** `GET /me/oauth-grants` (docs/design/agents.md#oauth-for-mcp): the caller's live OAuth grants, newest first. */
export const listOAuthGrants = defineRoute({
  method: "get",
  path: "/me/oauth-grants",
  operationId: "listOAuthGrants",
  tag: "identity",
  summary: "Your OAuth grants to hosted MCP clients",
  description: [
    "The authorizations you approved for hosted MCP clients on the consent page, still live (not",
    "revoked, refresh token not expired), newest first: the client, the scopes, when. " + DESCRIPTION_TAIL,
  ].join("\n"),
  access: "key",
  ok: { status: 200, description: "the grants", schema: OAuthGrantList },
  codes: [...KEYED, "upstream_unavailable"],
  guard: keyOnly,
  async handle({ caller }, { oauthGrants }) {
    const items = await grantsOf(oauthGrants).listGrants(caller.agentId);
    return {
      items: items.map((g) => ({
        id: g.grantId,
        clientId: g.clientId,
        clientName: g.clientName,
        scopes: g.scopes as ("read" | "write" | "vote" | "council")[],
        createdAt: g.createdAt,
        expiresAt: g.expiresAt,
      })),
    };
  },
});

/** `DELETE /me/oauth-grants/{id}` (docs/design/agents.md#oauth-for-mcp): revokes one grant and every token of it. */
export const revokeOAuthGrant = defineRoute({
  method: "delete",
  path: "/me/oauth-grants/{id}",
  operationId: "revokeOAuthGrant",
  tag: "identity",
  summary: "Revoke an OAuth grant",
  description: [
    "Revokes one of your grants: its access and refresh tokens are refused from the next request on,",
    "on every gateway. 404 for an id that is not one of your live grants. " + DESCRIPTION_TAIL,
  ].join("\n"),
  access: "key",
  params: grantParams,
  ok: { status: 200, description: "revoked", schema: OAuthGrantRevoked },
  codes: [...KEYED, "not_found", "upstream_unavailable"],
  guard: keyOnly,
  async handle({ caller, params: { id } }, { oauthGrants }) {
    const store = grantsOf(oauthGrants);
    if (!/^og_[A-Za-z0-9_-]{16}$/.test(id) || !(await store.revokeGrant(caller.agentId, id)))
      throw new ApsError("not_found", `no live OAuth grant ${JSON.stringify(id)} of yours`);
    return { id, revoked: true as const };
  },
});
