import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ApsApiError } from "./api.js";
import { nextStep } from "./errors.js";
import { createApsMcpServer } from "./server.js";

/**
 * Every document an MCP error, tool description or the server's instructions cite resolves
 * (docs/design/agents.md#mcp-errors): `aps://docs/<page>.md` is a page of docs/reference (with `#anchor`,
 * a heading of it), `aps://skill.md "<heading>"` a heading of skill.md; no `§` numbers (skill.md
 * has none) and no repository paths an agent cannot read.
 */

/** The repository root: the nearest folder above the working directory holding services/gateway/skill.md. */
function repoRoot(): string {
  let dir = process.cwd();
  while (!existsSync(join(dir, "services/gateway/skill.md"))) {
    const up = dirname(dir);
    if (up === dir) throw new Error("repository root not found above " + process.cwd());
    dir = up;
  }
  return dir;
}

const ROOT = repoRoot();
const headingsOf = (md: string) => [...md.matchAll(/^#{1,6} +(.+?) *$/gm)].map((m) => m[1]!.trim());
const anchorOf = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\w\s-]/g, "")
    .trim()
    .replace(/\s+/g, "-");

/** Every problem code the platform has, read from errors.md's headings, plus codes it does not know. */
const codes = [
  ...headingsOf(readFileSync(join(ROOT, "docs/reference/errors.md"), "utf8")).filter((h) => /^[a-z_]+$/.test(h)),
  "unreachable",
  "http_418",
];

/** The texts an agent reads that may cite a document. */
async function citingTexts(): Promise<string[]> {
  const texts: string[] = [];
  for (const code of codes)
    for (const status of [400, 403, 503])
      for (const detail of ["d", "this agent is suspended"])
        texts.push(nextStep(new ApsApiError(status, code, detail, 3, "r"), { idempotencyKey: "k" }));
  const server = createApsMcpServer({ baseUrl: "http://127.0.0.1:9/v1" });
  const client = new Client({ name: "refs", version: "1" });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(a), client.connect(b)]);
  const { tools } = await client.listTools();
  for (const t of tools) texts.push(t.description ?? "", JSON.stringify(t.inputSchema));
  texts.push(client.getInstructions() ?? "");
  await client.close();
  return texts;
}

describe("document references in MCP texts", () => {
  it("each aps://docs page, anchor and skill.md heading cited exists; no § numbers, no repository paths", async () => {
    const texts = await citingTexts();
    const skill = headingsOf(readFileSync(join(ROOT, "services/gateway/skill.md"), "utf8"));
    let cited = 0;
    for (const text of texts) {
      expect([text, /§/.test(text)]).toEqual([text, false]);
      expect([text, /docs\/adr\/|\.ts\b/.test(text)]).toEqual([text, false]);
      for (const m of text.matchAll(/aps:\/\/docs\/([a-z0-9-]+)\.md(?:#([a-z0-9_-]+))?/g)) {
        cited++;
        const page = join(ROOT, "docs/reference", `${m[1]}.md`);
        expect([m[0], existsSync(page)]).toEqual([m[0], true]);
        if (m[2]) expect(headingsOf(readFileSync(page, "utf8")).map(anchorOf)).toContain(m[2]);
      }
      for (const m of text.matchAll(/skill\.md "([^"]+)"/g)) {
        cited++;
        expect(skill).toContain(m[1]);
      }
    }
    expect(cited).toBeGreaterThan(0);
  });
});
