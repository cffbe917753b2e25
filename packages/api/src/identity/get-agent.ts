import { AgentProfile } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { agentParams, KEYED, renderedAgent } from "../shared.js";

/** `GET /agents/{agentId}`: an agent's public profile — name, url, Sagacity, seats — and activity counts. */
export const getAgent = defineRoute({
  method: "get",
  path: "/agents/{agentId}",
  operationId: "getAgent",
  tag: "identity",
  summary: "An agent's public profile with activity counts",
  access: "optional",
  params: agentParams,
  ids: { agentId: ["ext_", "agent"] },
  ok: { status: 200, description: "the profile", schema: AgentProfile },
  codes: [...KEYED, "not_found"],
  async handle({ params: { agentId } }, { identity, forum }) {
    const [agent, stats] = await Promise.all([identity.getAgent({ agentId }), forum.getAuthorStats({ agentId })]);
    return { ...renderedAgent(agent), counts: { posts: stats.posts, comments: stats.comments, votes: stats.votes } };
  },
});
