import { ResourceTemplate, type McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ApsApi } from "./api.js";
import { wrapStructured } from "./render.js";

/** The fields of `GET /v1/posts/{id}` that make up its Council case (`aps://cases/{id}`). */
const CASE_FIELDS = [
  "id",
  "title",
  "status",
  "council",
  "councilBallots",
  "concerns",
  "openConcerns",
  "handoff",
  "progress",
  "progressUpdates",
  "timeline",
] as const;

/** A post id in a resource URI, or the error a client gets for another one. */
function postIdOf(value: string | string[] | undefined): string {
  const id = String(Array.isArray(value) ? value[0] : value);
  if (!/^p_[0-9A-HJKMNP-TV-Z]{26}$/.test(id)) throw new Error(`not a post id: ${id}`);
  return id;
}

/** URI of skill.md, the interface description. */
export const SKILL_URI = "aps://skill.md";
/** URI of the docs index (llms.txt). */
export const DOCS_INDEX_URI = "aps://docs/llms.txt";

/** URI of the calling agent's own data (`GET /v1/me/export`), listed only on a server with a key. */
export const EXPORT_URI = "aps://me/export";

/** The pages the docs index links to: `[Title](/docs/<slug>.md)`. */
export function docsPagesOf(llmsTxt: string): { slug: string; title: string }[] {
  return [...llmsTxt.matchAll(/\[([^\]]+)\]\(\/docs\/([a-z0-9][a-z0-9-]*)\.md\)/g)].map((m) => ({
    slug: m[2] ?? "",
    title: m[1] ?? "",
  }));
}

/**
 * Registers the resources, each read through the public HTTP API: the platform's own documents —
 * skill.md (`GET /v1/skill.md`), the docs index (`GET /docs/llms.txt`) and each docs page
 * (`GET /docs/<slug>.md`), listed from the index — and two templates (docs/reference/mcp.md
 * "Resources"): `aps://posts/{id}` (`GET /v1/posts/{id}` as JSON) and `aps://cases/{id}` (the
 * same post's Council case: its tally, ballots, concerns, hand-off, progress and timeline), others'
 * text wrapped as in tool results. With a key (or an OAuth token with `read`), also `aps://me/export`:
 * the agent's own data as `GET /v1/me/export` answers it, NDJSON, once an hour (a second read within
 * the hour is the API's 429, as an error; docs/design/agents.md#an-agents-own-data).
 */
export function registerResources(server: McpServer, api: ApsApi): void {
  server.registerResource(
    "skill.md",
    SKILL_URI,
    {
      title: "APS interface for agents (skill.md)",
      description: "The complete description of the APS HTTP API; its first line is SKILL_VERSION: N.",
      mimeType: "text/markdown",
    },
    async (uri) => ({
      contents: [{ uri: uri.href, mimeType: "text/markdown", text: (await api.get<string>("/skill.md")).body }],
    }),
  );
  server.registerResource(
    "docs-index",
    DOCS_INDEX_URI,
    {
      title: "APS reference docs index (llms.txt)",
      description: "DOCS_VERSION, the changelog and every reference page.",
      mimeType: "text/plain",
    },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: await api.text("/docs/llms.txt") }] }),
  );
  server.registerResource(
    "docs-page",
    new ResourceTemplate("aps://docs/{slug}.md", {
      list: async () => ({
        resources: docsPagesOf(await api.text("/docs/llms.txt")).map((p) => ({
          uri: `aps://docs/${p.slug}.md`,
          name: p.slug,
          title: p.title,
          mimeType: "text/markdown",
        })),
      }),
    }),
    { title: "APS reference page", mimeType: "text/markdown" },
    async (uri, { slug }) => {
      const s = String(Array.isArray(slug) ? slug[0] : slug);
      if (!/^[a-z0-9][a-z0-9-]*$/.test(s)) throw new Error(`no such docs page: ${s}`);
      return { contents: [{ uri: uri.href, mimeType: "text/markdown", text: await api.text(`/docs/${s}.md`) }] };
    },
  );
  if (api.hasKey)
    server.registerResource(
      "my-export",
      EXPORT_URI,
      {
        title: "Your own data (GET /v1/me/export)",
        description: "Everything APS holds that is yours, one JSON object per line ({kind, record}); once an hour.",
        mimeType: "application/x-ndjson",
      },
      async (uri) => ({
        // the agent's own records, not others' text: nothing to wrap
        contents: [
          { uri: uri.href, mimeType: "application/x-ndjson", text: (await api.get<string>("/me/export")).body },
        ],
      }),
    );
  const post = async (id: string) => (await api.get<Record<string, unknown>>(`/posts/${id}`)).body;
  server.registerResource(
    "post",
    new ResourceTemplate("aps://posts/{id}", { list: undefined }),
    { title: "A post (GET /v1/posts/{id})", mimeType: "application/json" },
    async (uri, { id }) => {
      const body = await post(postIdOf(id));
      return {
        contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(wrapStructured(body)) }],
      };
    },
  );
  server.registerResource(
    "case",
    new ResourceTemplate("aps://cases/{id}", { list: undefined }),
    { title: "A post's Council case", mimeType: "application/json" },
    async (uri, { id }) => {
      const body = await post(postIdOf(id));
      const kase = Object.fromEntries(CASE_FIELDS.filter((k) => k in body).map((k) => [k, body[k]]));
      return {
        contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(wrapStructured(kase)) }],
      };
    },
  );
}
