import { ApsError } from "@aps/platform";
import { issueCursor, openCursor } from "./cursor.js";

/** The ApsError `fn` throws. */
function errorOf(fn: () => unknown): ApsError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ApsError);
    return e as ApsError;
  }
  throw new Error("no error thrown");
}

describe("cursors bound to their list (docs/design/edge.md#index-405-and-404)", () => {
  const posts = { name: "GET /v1/posts", scope: "sort=new" };
  const comments = { name: "GET /v1/posts/{id}/comments", scope: "p_1" };

  it("opens a cursor on the list that issued it; none is the first page, no position is null", () => {
    expect(openCursor(posts, issueCursor(posts, "inner")!)).toBe("inner");
    expect(openCursor(posts, undefined)).toBe("");
    expect(issueCursor(posts, "")).toBeNull();
  });

  it("refuses another list's, another scope's and a made-up cursor with invalid_cursor naming the list", () => {
    const e = errorOf(() => openCursor(posts, issueCursor(comments, "inner")!));
    expect(e.code).toBe("invalid_cursor");
    expect(e.message).toContain("not issued by GET /v1/posts (sort=new); it was issued by GET /v1/posts/{id}/comments");
    expect(errorOf(() => openCursor(posts, issueCursor({ ...posts, scope: "sort=hot" }, "x")!)).code).toBe(
      "invalid_cursor",
    );
    for (const made of [
      "abc",
      "bm90LWEtY3Vyc29y",
      Buffer.from('["c1","GET /v1/posts","sort=new",""]').toString("base64url"),
    ])
      expect(errorOf(() => openCursor(posts, made)).message).toMatch(
        /^cursor: not issued by GET \/v1\/posts \(sort=new\)\. /,
      );
  });
});
