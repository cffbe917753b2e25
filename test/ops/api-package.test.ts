import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../support/system.js";

/**
 * Done means, and docs/design/edge.md#routes-declared-once: the `/v1` operations live in `@aps/api`
 * (packages/api), not in the deployable — none is declared or described in the gateway, which
 * keeps only edge work (authentication, OAuth, caches, limits, MCP and discovery documents); and
 * nothing that the gateway depends on needs the gateway's build (`@aps/client`
 * generates its types from `@aps/api`'s document, so a field the pages read is one build step).
 * `APS_API_PACKAGE_ROOT` points the checks at another checkout (to show they fail on an older one).
 */
const root = process.env.APS_API_PACKAGE_ROOT ?? ROOT;
const read = (path: string) => readFileSync(join(root, path), "utf8");

/** Every non-test TypeScript file under `dir` (relative to the checkout), recursively. */
function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
    .map((f) => join(dir, f));
}

describe("the /v1 operations are a library, the gateway mounts them (docs/design/edge.md#routes-declared-once)", () => {
  it("no operation is declared or described in the gateway", () => {
    const declaring = sources("services/gateway/src").filter((f) =>
      /defineRoute\(|operationId:|\b(r|router)\.(get|post|patch|put|delete)\("\/posts/.test(read(f)),
    );
    expect(declaring).toEqual([]);
    expect(sources("packages/api/src").filter((f) => read(f).includes("defineRoute({")).length).toBeGreaterThan(60);
  });

  it("@aps/api and @aps/client depend on neither the gateway nor the web pages", () => {
    const api = JSON.parse(read("packages/api/package.json")) as Record<string, Record<string, string> | undefined>;
    const client = JSON.parse(read("packages/client/package.json")) as typeof api;
    for (const pkg of [api, client])
      for (const deps of [pkg.dependencies, pkg.devDependencies])
        expect(Object.keys(deps ?? {}).filter((d) => d === "@aps/gateway" || d === "@aps/web")).toEqual([]);
    expect(read("packages/client/scripts/generate.mjs")).not.toContain("@aps/gateway");
    expect(read("packages/client/turbo.json")).not.toContain("@aps/gateway");
  });
});
