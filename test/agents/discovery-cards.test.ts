import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Ajv, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import { createLogger } from "@aps/platform";
import { createApp, loadSkill, type AppDeps } from "@aps/gateway";
import { mcpServerManifest, mcpServerName } from "@aps/gateway/discovery";

// ajv-formats is CommonJS: its default export is the plugin.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * The A2A agent card and the MCP registry manifest (docs/design/agents.md#agent-card-and-mcp-manifest), as a
 * running gateway app serves them, validated with ajv against the published schemas copied into
 * test/fixtures/schemas/ (their sources and commits in its README.md): both draft-07.
 */
const schemaDir = new URL("../fixtures/schemas/", import.meta.url);
const readJson = (url: URL): Record<string, unknown> =>
  JSON.parse(readFileSync(url, "utf8")) as Record<string, unknown>;

/** ajv for the copied schemas: non-strict (they use `example` and `discriminator` annotations), every error. */
function validators(): { card: ValidateFunction; manifest: ValidateFunction } {
  const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
  ajv.addSchema(readJson(new URL("a2a-v0.3.0.json", schemaDir)), "a2a.json");
  const card = ajv.getSchema("a2a.json#/definitions/AgentCard");
  if (!card) throw new Error("a2a.json has no AgentCard definition");
  return { card, manifest: ajv.compile(readJson(new URL("mcp-server-2025-09-29.schema.json", schemaDir))) };
}
const { card: validCard, manifest: validManifest } = validators();

/** The validator's errors as one readable string (empty when valid). */
const errorsOf = (v: ValidateFunction, doc: unknown): string =>
  v(doc) ? "" : (v.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? ""}`).join("; ");

/** A gateway app whose clients are never called (these documents need none), listening on loopback. */
async function serve(extra: Partial<AppDeps> = {}): Promise<{ origin: string; close: () => Promise<void> }> {
  const app = createApp({
    identity: {} as never,
    forum: {} as never,
    council: {} as never,
    skill: loadSkill(),
    log: createLogger("discovery-test", "silent"),
    ...extra,
  });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Every string under a key named `url` or ending in `Url` in `doc`, with its JSON path. */
function urlsOf(doc: unknown, path = ""): [string, string][] {
  if (Array.isArray(doc)) return doc.flatMap((d, i) => urlsOf(d, `${path}/${i}`));
  if (doc === null || typeof doc !== "object") return [];
  return Object.entries(doc).flatMap(([k, v]) =>
    typeof v === "string" && (k === "url" || k.endsWith("Url")) ? [[`${path}/${k}`, v]] : urlsOf(v, `${path}/${k}`),
  );
}

interface Card {
  url: string;
  version: string;
  preferredTransport: string;
  additionalInterfaces: { url: string; transport: string }[];
  skills: { id: string }[];
  securitySchemes: Record<string, { type: string; oauth2MetadataUrl?: string }>;
  capabilities: Record<string, unknown>;
}
interface Manifest {
  name: string;
  version: string;
  remotes: { type: string; url: string }[];
}

describe("discovery cards (A2A agent card, MCP server.json)", () => {
  describe("without PUBLIC_BASE_URL", () => {
    let app: Awaited<ReturnType<typeof serve>>;
    beforeAll(async () => {
      app = await serve();
    });
    afterAll(() => app.close());

    it("GET /.well-known/agent-card.json is a valid A2A 0.3.0 agent card with the six skills", async () => {
      const res = await fetch(`${app.origin}/.well-known/agent-card.json`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      const card = (await res.json()) as Card;
      expect(errorsOf(validCard, card)).toBe("");
      expect(card.version).toBe(String(loadSkill().version));
      expect(card.skills.map((s) => s.id)).toEqual([
        "propose",
        "discuss",
        "vote",
        "search",
        "council-review",
        "follow-events",
      ]);
      // no core A2A transport is claimed: APS answers no A2A method
      expect(["JSONRPC", "GRPC", "HTTP+JSON"]).not.toContain(card.preferredTransport);
      for (const i of card.additionalInterfaces) expect(["JSONRPC", "GRPC", "HTTP+JSON"]).not.toContain(i.transport);
      expect(card.additionalInterfaces.map((i) => i.url)).toEqual([`${app.origin}/mcp`, `${app.origin}/v1`]);
      expect(Object.values(card.capabilities).every((v) => v === false)).toBe(true);
      // the bearer API key only, until the gateway serves OAuth metadata
      expect(Object.keys(card.securitySchemes)).toEqual(["bearer"]);
      // every URL absolute, on the request's origin
      const urls = urlsOf(card);
      expect(urls.length).toBeGreaterThan(3);
      for (const [, u] of urls) expect(u.startsWith(`${app.origin}/`) || u === app.origin).toBe(true);
    });

    it("GET /.well-known/mcp/server.json is a valid MCP registry server.json with the /mcp remote", async () => {
      const res = await fetch(`${app.origin}/.well-known/mcp/server.json`);
      expect(res.status).toBe(200);
      const manifest = (await res.json()) as Manifest;
      expect(errorsOf(validManifest, manifest)).toBe("");
      expect(manifest.remotes).toEqual([
        expect.objectContaining({ type: "streamable-http", url: `${app.origin}/mcp` }),
      ]);
      expect(manifest.name).toBe("127.0.0.1/aps");
      expect(manifest.version).toBe(`${loadSkill().version}.0.0`);
    });

    it("both carry a strong ETag and answer 304 to it; built from the request, they stay no-store", async () => {
      for (const path of ["/.well-known/agent-card.json", "/.well-known/mcp/server.json"]) {
        const res = await fetch(app.origin + path);
        const etag = res.headers.get("etag");
        expect(etag).toMatch(/^"[\w-]+"$/);
        expect(res.headers.get("cache-control")).toBe("no-store");
        const again = await fetch(app.origin + path, { headers: { "If-None-Match": etag! } });
        expect(again.status).toBe(304);
      }
    });

    it("GET /v1 links both and /llms.txt names both", async () => {
      const index = (await (await fetch(`${app.origin}/v1`)).json()) as { links: Record<string, { href: string }> };
      expect(index.links.agentCard?.href).toBe("/.well-known/agent-card.json");
      expect(index.links.mcpServer?.href).toBe("/.well-known/mcp/server.json");
      const llms = await (await fetch(`${app.origin}/llms.txt`)).text();
      expect(llms).toContain("/.well-known/agent-card.json");
      expect(llms).toContain("/.well-known/mcp/server.json");
    });

    it("a deliberately broken card fails validation", async () => {
      const card = (await (await fetch(`${app.origin}/.well-known/agent-card.json`)).json()) as Record<string, unknown>;
      const broken: Record<string, unknown> = { ...card, capabilities: { streaming: "yes" }, version: 22 };
      delete broken.skills;
      const errors = errorsOf(validCard, broken);
      expect(errors).toMatch(/must have required property 'skills'/);
      expect(errors).toMatch(/\/capabilities\/streaming must be boolean/);
      expect(errors).toMatch(/\/version must be string/);
      // and a broken manifest: a name without the namespace slash, a remote without its url
      const manifest = {
        ...mcpServerManifest(app.origin, { skillVersion: 1 }),
        name: "aps",
        remotes: [{ type: "streamable-http" }],
      };
      expect(errorsOf(validManifest, manifest)).toMatch(/\/name must match pattern/);
    });
  });

  describe("with PUBLIC_BASE_URL and OAuth metadata on", () => {
    let app: Awaited<ReturnType<typeof serve>>;
    beforeAll(async () => {
      app = await serve({ publicBaseUrl: "https://aps.example.org/ignored/path", oauthMetadata: true });
    });
    afterAll(() => app.close());

    it("every URL uses PUBLIC_BASE_URL's origin, the OAuth scheme points at its metadata, and answers are cacheable", async () => {
      const res = await fetch(`${app.origin}/.well-known/agent-card.json`);
      expect(res.headers.get("cache-control")).toBe("public, max-age=60");
      const card = (await res.json()) as Card;
      expect(errorsOf(validCard, card)).toBe("");
      for (const [where, u] of urlsOf(card)) expect(`${where} ${u}`).toMatch(/ https:\/\/aps\.example\.org(\/|$)/);
      expect(card.url).toBe("https://aps.example.org/mcp");
      expect(card.securitySchemes.oauth).toEqual(
        expect.objectContaining({
          type: "oauth2",
          oauth2MetadataUrl: "https://aps.example.org/.well-known/oauth-authorization-server",
        }),
      );

      const manifest = (await (await fetch(`${app.origin}/.well-known/mcp/server.json`)).json()) as Manifest;
      expect(errorsOf(validManifest, manifest)).toBe("");
      expect(manifest.name).toBe("org.example.aps/aps");
      expect(manifest.remotes[0]?.url).toBe("https://aps.example.org/mcp");
    });
  });

  it("names the manifest by the reversed host, without the port", () => {
    expect(mcpServerName("https://aps.example.com")).toBe("com.example.aps/aps");
    expect(mcpServerName("http://localhost:8080")).toBe("localhost/aps");
    expect(mcpServerName("http://[::1]:8080")).toBe("--1/aps");
  });

  it("the committed template (deploy/mcp-registry/server.json) is valid and is what the gateway builds for its example host", () => {
    const template = readJson(new URL("../../deploy/mcp-registry/server.json", import.meta.url)) as unknown as Manifest;
    expect(errorsOf(validManifest, template)).toBe("");
    // its version is whatever SKILL_VERSION it was written at; everything else follows the code
    const skillVersion = Number(template.version.split(".")[0]);
    expect(template).toEqual(mcpServerManifest("https://aps.example.com", { skillVersion }));
  });
});
