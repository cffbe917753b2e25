import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The pages read only through `@aps/client` (docs/design/edge.md#web-pages): no source of the package imports the
 * gateway, the generated gRPC code or a gRPC client of @aps/platform. (Before 0195 the pages
 * imported `@aps/proto` types, the gateway's `readPostWithCase` and the platform's
 * `ForumClient`/`CouncilClient`/`IdentityClient`/`KnowledgeClient`.)
 */
const SRC = fileURLToPath(new URL(".", import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return name.endsWith(".ts") && !name.endsWith(".test.ts") ? [p] : [];
  });
}

/** Every `from "…"` of a file with the names it imports: `[specifier, names]`. */
function imports(text: string): [string, string][] {
  return [...text.matchAll(/import\s+(?:type\s+)?([\s\S]*?)\s+from\s+"([^"]+)"/g)].map((m) => [m[2]!, m[1]!]);
}

describe("@aps/web's imports", () => {
  const files = sources(SRC);

  it("find the sources", () => {
    expect(files.length).toBeGreaterThan(10);
  });

  it("name no gateway module, no generated gRPC code and no gRPC client", () => {
    const bad = files.flatMap((f) =>
      imports(readFileSync(f, "utf8")).flatMap(([from, names]) => {
        const wrong =
          from.startsWith("@aps/gateway") ||
          from.startsWith("@aps/api") ||
          from.startsWith("@aps/proto") ||
          from.startsWith("@grpc/") ||
          from.includes("/gateway/") ||
          (from.startsWith("@aps/platform") && /\b\w+Client\b/.test(names));
        return wrong ? [`${f.slice(SRC.length)}: ${from} (${names.replace(/\s+/g, " ")})`] : [];
      }),
    );
    expect(bad).toEqual([]);
  });

  it("read records through @aps/client", () => {
    const api = readFileSync(join(SRC, "api.ts"), "utf8");
    expect(imports(api).some(([from]) => from === "@aps/client")).toBe(true);
  });
});
