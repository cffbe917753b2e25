import type { Request, Response } from "express";
import { ApsError } from "@aps/platform";
import { mcpOriginCheck, mcpOrigins, type McpOrigins } from "./route.js";

/** What the check does with a request from `origin` (undefined = no header) arriving on port 8080. */
function decide(allowed: McpOrigins, origin: string | undefined): string {
  const req = {
    header: (name: string) => (name.toLowerCase() === "origin" ? origin : undefined),
    socket: { localPort: 8080 },
  } as unknown as Request;
  let out = "";
  mcpOriginCheck(allowed)(req, {} as Response, (err?: unknown) => {
    out = err === undefined ? "next" : err instanceof ApsError ? err.code : "other";
  });
  return out;
}

describe("/mcp Origin check (docs/design/agents.md#untrusted-content)", () => {
  it("serves a client without Origin whatever the list", () => {
    for (const allowed of [undefined, [], ["https://app.example"]]) expect(decide(allowed, undefined)).toBe("next");
  });

  it("by default serves only loopback origins on the port the request came in on", () => {
    for (const o of ["http://localhost:8080", "http://127.0.0.1:8080", "http://[::1]:8080", "HTTP://LOCALHOST:8080"])
      expect([o, decide(undefined, o)]).toEqual([o, "next"]);
    for (const o of [
      "https://evil.example",
      "http://localhost:8081",
      "https://localhost:8080",
      "http://localhost:8080.evil.example",
      "null",
      "",
      "not a url",
    ])
      expect([o, decide(undefined, o)]).toEqual([o, "forbidden"]);
  });

  it("with a list serves exactly its origins (after URL normalisation), or any with *", () => {
    const list = ["https://app.example", "http://localhost:3000"];
    expect(decide(list, "https://app.example")).toBe("next");
    expect(decide(list, "https://APP.example:443")).toBe("next");
    expect(decide(list, "http://localhost:3000")).toBe("next");
    expect(decide(list, "http://localhost:8080")).toBe("forbidden");
    expect(decide(list, "https://app.example.evil.example")).toBe("forbidden");
    expect(decide(["*"], "https://anyone.example")).toBe("next");
    expect(decide(["*"], "null")).toBe("forbidden");
  });

  it("takes MCP_ALLOWED_ORIGINS, else PUBLIC_BASE_URL's origin, else loopback", () => {
    expect(mcpOrigins(["https://a.example"], "https://aps.example/base")).toEqual(["https://a.example"]);
    expect(mcpOrigins(undefined, "https://aps.example/base")).toEqual(["https://aps.example"]);
    expect(mcpOrigins(undefined, undefined)).toBeUndefined();
    expect(mcpOrigins(undefined, "not a url")).toBeUndefined();
  });
});
