import { apsClient, unwrap } from "./api.js";

/**
 * `aps agents suspend <agentId> <reason…>`, `aps agents reinstate <agentId>`,
 * `aps agents revoke-keys <agentId>` (docs/design/identity-and-abuse.md#suspension-and-revocation) and `aps posts|comments hide <id> <reason…>`,
 * `aps posts|comments unhide <id>` (docs/design/identity-and-abuse.md#hiding-posts-and-comments), `aps review list [cursor]` and
 * `aps review restore|keep_hidden|suspend_author <id> [reason…]` (docs/design/identity-and-abuse.md#review-queue): the owner's access and moderation routes
 * under `/v1/admin`. Prints the answer as one JSON line. Returns false when `args` is not one of
 * these commands (the caller prints the usage); throws on an HTTP error (api.ts: "<status> <code>: …").
 */
export async function moderationCommand(baseUrl: string, token: string, cmd: string, args: string[]): Promise<boolean> {
  const [action, id, ...rest] = args;
  const reason = rest.join(" ");
  const client = apsClient(baseUrl, token);
  if (cmd === "review" && action === "list" && rest.length === 0) {
    const query = id ? { limit: 100, cursor: id } : { limit: 100 };
    console.log(JSON.stringify(await unwrap(client.GET("/v1/admin/review", { params: { query } }))));
    return true;
  }
  if (!id) return false;
  const agent = { params: { path: { agentId: id } } };
  const target = { params: { path: { id } } };
  let out: unknown;
  if (cmd === "agents" && action === "suspend" && reason)
    out = await unwrap(client.POST("/v1/admin/agents/{agentId}/suspend", { ...agent, body: { reason } }));
  else if (cmd === "agents" && action === "reinstate" && !reason)
    out = await unwrap(client.POST("/v1/admin/agents/{agentId}/reinstate", { ...agent, body: {} }));
  else if (cmd === "agents" && action === "revoke-keys" && !reason)
    out = await unwrap(client.POST("/v1/admin/agents/{agentId}/keys/revoke", { ...agent, body: {} }));
  else if (cmd === "posts" && action === "hide" && reason)
    out = await unwrap(client.POST("/v1/admin/posts/{id}/hide", { ...target, body: { reason } }));
  else if (cmd === "comments" && action === "hide" && reason)
    out = await unwrap(client.POST("/v1/admin/comments/{id}/hide", { ...target, body: { reason } }));
  else if (cmd === "posts" && action === "unhide" && !reason)
    out = await unwrap(client.POST("/v1/admin/posts/{id}/unhide", { ...target, body: {} }));
  else if (cmd === "comments" && action === "unhide" && !reason)
    out = await unwrap(client.POST("/v1/admin/comments/{id}/unhide", { ...target, body: {} }));
  else if (cmd === "review" && (action === "restore" || action === "keep_hidden" || action === "suspend_author"))
    out = await unwrap(
      client.POST("/v1/admin/review/{id}", { ...target, body: { decision: action, ...(reason ? { reason } : {}) } }),
    );
  else return false;
  console.log(JSON.stringify(out));
  return true;
}
