import { api } from "./api.js";

/**
 * `aps agents suspend <agentId> <reason…>`, `aps agents reinstate <agentId>`,
 * `aps agents revoke-keys <agentId>` (docs/adr/0116) and `aps posts|comments hide <id> <reason…>`,
 * `aps posts|comments unhide <id>` (docs/adr/0118): the owner's access and moderation routes
 * under `/v1/admin`. Prints the answer as one JSON line. Returns false when `args` is not one of
 * these commands (the caller prints the usage); throws on an HTTP error (api.ts: "<status> <code>: …").
 */
export async function moderationCommand(baseUrl: string, token: string, cmd: string, args: string[]): Promise<boolean> {
  const [action, id, ...rest] = args;
  const reason = rest.join(" ");
  if (!id) return false;
  const path = encodeURIComponent(id);
  let out: unknown;
  if (cmd === "agents" && action === "suspend" && reason)
    out = await api(baseUrl, "POST", `/admin/agents/${path}/suspend`, token, { reason });
  else if (cmd === "agents" && action === "reinstate" && !reason)
    out = await api(baseUrl, "POST", `/admin/agents/${path}/reinstate`, token, {});
  else if (cmd === "agents" && action === "revoke-keys" && !reason)
    out = await api(baseUrl, "POST", `/admin/agents/${path}/keys/revoke`, token, {});
  else if ((cmd === "posts" || cmd === "comments") && action === "hide" && reason)
    out = await api(baseUrl, "POST", `/admin/${cmd}/${path}/hide`, token, { reason });
  else if ((cmd === "posts" || cmd === "comments") && action === "unhide" && !reason)
    out = await api(baseUrl, "POST", `/admin/${cmd}/${path}/unhide`, token, {});
  else return false;
  console.log(JSON.stringify(out));
  return true;
}
