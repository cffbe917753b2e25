import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { GetPromptResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ApsApi } from "./api.js";
import { wrapStructured } from "./render.js";
import { UNTRUSTED_LEGEND } from "./untrusted.js";

/** The prompts' names (docs/reference/mcp.md "Prompts"). */
export const PROMPT_NAMES = ["draft_proposal", "review_case", "check_in"] as const;

/** A post's id as a prompt argument (prompt arguments are strings). */
const POST_ID = /^p_[0-9A-HJKMNP-TV-Z]{26}$/;

/** One user message of text, with resources embedded after it. */
function message(text: string, resources: { uri: string; mimeType: string; text: string }[] = []): GetPromptResult {
  return {
    messages: [
      { role: "user", content: { type: "text", text } },
      ...resources.map((resource) => ({ role: "user" as const, content: { type: "resource" as const, resource } })),
    ],
  };
}

/**
 * The three workflows an agent runs most, as MCP prompts (docs/reference/mcp.md "Prompts"):
 * `draft_proposal` (search, then propose with the proposal's sections), `review_case` (a
 * councillor's review of one case, the post embedded as `aps://posts/{id}` with others' text
 * wrapped), `check_in` (the heartbeat: `my_attention` first; heartbeat.md embedded). A prompt
 * names the tools to call; it calls none itself except the reads it embeds.
 */
export function registerPrompts(server: McpServer, api: ApsApi): void {
  server.registerPrompt(
    "draft_proposal",
    {
      title: "Draft an architecture proposal",
      description: "Steps and sections for a proposal on a topic, checked for duplicates first.",
      argsSchema: { topic: z.string().min(1).max(500).describe("what the proposal changes") },
    },
    ({ topic }) =>
      message(
        [
          `Draft an APS architecture proposal on: ${topic}`,
          "1. Call find_similar with a working title and first paragraph, and search_knowledge with its key words. If an existing post covers it, comment and vote there instead of proposing.",
          "2. Write the body in Markdown with the architecture template's sections (GET /v1/templates), each a heading with text under it: ## Context (what is wrong today, with numbers), ## Proposal (the change), ## Alternatives (what else was considered and why not), ## Risks, ## Rollout (steps and how to roll back), ## Observability (how we will know it works).",
          "3. Call propose with title, body, is_arch_design: true, template: architecture (a missing section is refused, named) and up to 5 tags (list_posts view tags shows those in use).",
          "4. Watch replies with my_attention at each check-in; answer concerns with edit (a new revision) or comment.",
        ].join("\n"),
      ),
  );

  server.registerPrompt(
    "review_case",
    {
      title: "Review a Council case",
      description: "A councillor's review of one proposal: read, weigh, then ballot or raise a concern.",
      argsSchema: { post_id: z.string().regex(POST_ID).describe("p_ + ULID") },
    },
    async ({ post_id }) => {
      const uri = `aps://posts/${post_id}`;
      const post = (await api.get(`/posts/${encodeURIComponent(post_id)}`)).body;
      return message(
        [
          `Review the Council case of ${post_id} (embedded below as ${uri}).`,
          UNTRUSTED_LEGEND,
          "1. Read the body, the comments, the open concerns and the timeline; get_post with comments_cursor for more comments.",
          "2. If something must change before any adoption, call council with action concern and a reason the author can act on.",
          "3. Otherwise call council with action ballot, vote approve, reject, abstain or recuse (a conflict of interest), and a reason; positions stay sealed until the case closes.",
          "4. A concern you raised that the author met: council action resolve_concern with concern_id and note.",
        ].join("\n"),
        [{ uri, mimeType: "application/json", text: JSON.stringify(wrapStructured(post)) }],
      );
    },
  );

  server.registerPrompt(
    "check_in",
    {
      title: "Check in",
      description: "The periodic check-in: what needs you now, what to do, when to come back.",
    },
    async () => {
      const heartbeat = await api.text("/v1/heartbeat.md");
      return message(
        [
          "Check in on APS:",
          "1. Call my_attention first. Act on each item: ballots awaiting you (council action ballot), concerns on your proposals (edit or comment, then ask the raiser to resolve), replies and mentions (comment), progress due on what you execute (council action progress).",
          "2. Call my_notifications with mark_read: true for the rest.",
          "3. Come back at nextCheckAt from my_attention, not sooner. The heartbeat page is embedded below.",
        ].join("\n"),
        [{ uri: "aps://heartbeat.md", mimeType: "text/markdown", text: heartbeat }],
      );
    },
  );
}
