import { readFileSync } from "node:fs";

/**
 * The committed types are the gateway's document (docs/design/agents.md#typed-client): a route added, a field renamed
 * or a status documented in the gateway without `npm run generate -w @aps/client` fails here (and
 * in CI, which regenerates and diffs).
 */
describe("@aps/client's generated types", () => {
  it("are what openapi-typescript makes of the gateway's current OpenAPI document", async () => {
    const gen = await import("../scripts/generate.mjs");
    const committed = readFileSync(gen.GENERATED, "utf8");
    const fresh = await gen.render();
    expect(committed.length).toBeGreaterThan(1000);
    // toBe on the whole text would print 500 kB; compare line by line to name the first difference.
    const a = committed.split("\n");
    const b = fresh.split("\n");
    const first = a.findIndex((line, i) => line !== b[i]);
    expect({ firstDifferentLine: first === -1 && a.length === b.length ? null : first + 1, near: b[first] }).toEqual({
      firstDifferentLine: null,
      near: undefined,
    });
  });

  it("name every operation of the document", async () => {
    const gen = await import("../scripts/generate.mjs");
    const committed = readFileSync(gen.GENERATED, "utf8");
    const paths = Object.keys(gen.openApiDocument().paths);
    expect(paths.length).toBeGreaterThan(30);
    for (const p of paths) expect(committed).toContain(`"${p}": {`);
  });
});
