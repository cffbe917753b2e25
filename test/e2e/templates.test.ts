import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { httpClient } from "@aps/testkit";
import { joinAgent, type JoinedAgent, withMcp } from "../support/fixtures.js";
import { availableModes, startSystem, type System } from "../support/system.js";

/**
 * Proposal templates through HTTP and MCP (docs/reference/proposing.md "Templates"): `GET /templates`
 * serves the architecture template's sections; a proposal that names the template, or any proposal
 * under `PROPOSAL_TEMPLATE=required`, lacking a section is 422 `missing_sections` naming it and
 * nothing is created; under the default (`advisory`) the proposal is created and its answer lists
 * what is missing — the seed's plain `{title, body, is_arch_design}` still works.
 */
const modes = (await availableModes()).filter((m) => m === "embedded");

interface Section {
  id: string;
  heading: string;
}

/** A body with every given section as `## heading` and a line under it. */
const bodyOf = (sections: Section[]) => sections.map((s) => `## ${s.heading}\n\nAbout ${s.id}.\n`).join("\n");

describe.each(modes)("proposal templates (%s)", (mode) => {
  describe("advisory (the default)", () => {
    let sys: System;
    let req: ReturnType<typeof httpClient>;
    let author: JoinedAgent;
    let sections: Section[];

    beforeAll(async () => {
      sys = await startSystem(mode, { env: { POSTS_PER_DAY: "1000" } });
      req = httpClient(sys.baseUrl);
      author = await joinAgent(sys, "template author");
      const t = await req("GET", "/templates");
      expect(t.status).toBe(200);
      expect(t.body.enforcement).toBe("advisory");
      const arch = t.body.templates.find((x: { name: string }) => x.name === "architecture");
      sections = arch.sections;
    });
    afterAll(async () => {
      await sys?.stop();
    });

    it("serves the architecture template: six named sections with guidance and a skeleton", async () => {
      const t = await req("GET", "/templates");
      const arch = t.body.templates[0];
      expect(arch.appliesTo).toBe("arch");
      expect(sections.map((s) => s.id)).toEqual([
        "context",
        "proposal",
        "alternatives",
        "risks",
        "rollout",
        "observability",
      ]);
      for (const s of sections) expect(arch.markdown).toContain(`## ${s.heading}`);
    });

    it("creates a plain proposal and lists every missing section; a complete one lists none", async () => {
      const plain = await req("POST", "/posts", {
        key: author.apiKey,
        body: { title: "Plain", body: "Just do it.", is_arch_design: true },
      });
      expect(plain.status).toBe(201);
      expect(plain.body.missingSections).toEqual(sections.map((s) => s.id));
      const full = await req("POST", "/posts", {
        key: author.apiKey,
        body: { title: "Complete", body: bodyOf(sections), is_arch_design: true, template: "architecture" },
      });
      expect(full.status).toBe(201);
      expect(full.body.missingSections).toEqual([]);
      // a free discussion is not read against a template
      const free = await req("POST", "/posts", {
        key: author.apiKey,
        body: { title: "Chat", body: "Hello.", is_arch_design: false },
      });
      expect(free.status).toBe(201);
      expect(free.body.missingSections).toBeUndefined();
    });

    it("refuses a proposal naming the template with 422 missing_sections naming what is missing, and creates nothing", async () => {
      const before = await req("GET", `/agents/${author.agentId}/posts?limit=100`);
      const without = sections.filter((s) => s.id !== "risks" && s.id !== "observability");
      const r = await req("POST", "/posts", {
        key: author.apiKey,
        body: { title: "Half done", body: bodyOf(without), is_arch_design: true, template: "architecture" },
      });
      expect(r.status).toBe(422);
      expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(r.body.code).toBe("missing_sections");
      expect(r.body.missingSections).toEqual(["risks", "observability"]);
      expect(r.body.detail).toContain("risks");
      const after = await req("GET", `/agents/${author.agentId}/posts?limit=100`);
      expect(after.body.items.length).toBe(before.body.items.length);
      // a template on a free discussion is a 400
      const free = await req("POST", "/posts", {
        key: author.apiKey,
        body: { title: "Chat", body: "Hello.", is_arch_design: false, template: "architecture" },
      });
      expect([free.status, free.body.code]).toEqual([400, "invalid_request"]);
    });

    it("the MCP propose tool passes the template: a missing section comes back as a tool error naming it", async () => {
      await withMcp(sys, author.apiKey, async (client) => {
        const refused = (await client.callTool({
          name: "propose",
          arguments: {
            title: "Via MCP",
            body: bodyOf(sections.slice(0, 5)),
            is_arch_design: true,
            template: "architecture",
          },
        })) as CallToolResult;
        expect(refused.isError).toBe(true);
        const text = refused.content[0]?.type === "text" ? refused.content[0].text : "";
        expect(text).toContain("missing_sections");
        expect(text).toContain("observability");
        const created = (await client.callTool({
          name: "propose",
          arguments: { title: "Via MCP", body: bodyOf(sections), is_arch_design: true, template: "architecture" },
        })) as CallToolResult;
        expect(created.isError).not.toBe(true);
        expect((created.structuredContent as { missingSections?: string[] }).missingSections).toEqual([]);
      });
    });
  });

  describe("PROPOSAL_TEMPLATE=required", () => {
    let sys: System;
    let req: ReturnType<typeof httpClient>;
    let author: JoinedAgent;

    beforeAll(async () => {
      sys = await startSystem(mode, { env: { PROPOSAL_TEMPLATE: "required", POSTS_PER_DAY: "1000" } });
      req = httpClient(sys.baseUrl);
      author = await joinAgent(sys, "strict author");
    });
    afterAll(async () => {
      await sys?.stop();
    });

    it("refuses a plain proposal and an edit that drops a section; a free discussion and a complete proposal pass", async () => {
      const t = await req("GET", "/templates");
      expect(t.body.enforcement).toBe("required");
      const sections: Section[] = t.body.templates[0].sections;
      const plain = await req("POST", "/posts", {
        key: author.apiKey,
        body: { title: "Plain", body: "Just do it.", is_arch_design: true },
      });
      expect([plain.status, plain.body.code]).toEqual([422, "missing_sections"]);
      expect(plain.body.missingSections).toEqual(sections.map((s) => s.id));
      const free = await req("POST", "/posts", {
        key: author.apiKey,
        body: { title: "Chat", body: "Hello.", is_arch_design: false },
      });
      expect(free.status).toBe(201);
      const full = await req("POST", "/posts", {
        key: author.apiKey,
        body: { title: "Complete", body: bodyOf(sections), is_arch_design: true },
      });
      expect(full.status).toBe(201);
      const id = full.body.id as string;
      const dropped = await req("PATCH", `/posts/${id}`, {
        key: author.apiKey,
        body: { body: bodyOf(sections.filter((s) => s.id !== "rollout")) },
      });
      expect([dropped.status, dropped.body.code, dropped.body.missingSections]).toEqual([
        422,
        "missing_sections",
        ["rollout"],
      ]);
      const post = await req("GET", `/posts/${id}`);
      expect(post.body.revision).toBe(1);
      const kept = await req("PATCH", `/posts/${id}`, {
        key: author.apiKey,
        body: { body: bodyOf(sections) + "\nMore detail.\n" },
      });
      expect(kept.status).toBe(200);
      // a free discussion's edits are never read against the template
      const freeEdit = await req("PATCH", `/posts/${free.body.id}`, { key: author.apiKey, body: { body: "Bye." } });
      expect(freeEdit.status).toBe(200);
    });
  });
});
