import { allowedMethods, pathMethods } from "./method-not-allowed.js";

describe("405: the methods a served path answers (docs/design/edge.md#index-405-and-404)", () => {
  const table = pathMethods([
    "GET /v1/posts",
    "POST /v1/posts",
    "GET /v1/posts/{id}",
    "POST /v1/posts/{id}/vote",
    "GET /v1/posts/translations",
    "GET /docs/{*path}",
  ]);

  it("lists every method of the path, GET with HEAD, params matching one segment", () => {
    expect(allowedMethods(table, "/v1/posts")).toEqual(["GET", "HEAD", "POST"]);
    expect(allowedMethods(table, "/v1/posts/p_1/vote")).toEqual(["POST"]);
    expect(allowedMethods(table, "/v1/posts/translations")).toEqual(["GET", "HEAD"]);
    expect(allowedMethods(table, "/v1/posts/")).toEqual(["GET", "HEAD", "POST"]);
  });

  it("knows no unserved path, and leaves catch-alls out", () => {
    expect(allowedMethods(table, "/v1/nope")).toBeUndefined();
    expect(allowedMethods(table, "/v1/posts/p_1/vote/x")).toBeUndefined();
    expect(allowedMethods(table, "/docs/x.md")).toBeUndefined();
  });
});
