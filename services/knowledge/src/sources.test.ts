import type { forum } from "@aps/proto";
import { postDocument, withStatus } from "./sources.js";

describe("postDocument", () => {
  const post = (tags: string[], status = "open") =>
    ({ id: "p_1", kind: "arch", title: "T", body: "B", status, tags }) as unknown as forum.Post;

  it("tags a post with post, its kind, its status and its own tags", () => {
    expect(postDocument(post(["storage", "rfc"])).tags).toEqual(["post", "arch", "open", "storage", "rfc"]);
    expect(postDocument(post(["storage"]), "adopted").tags).toEqual(["post", "arch", "adopted", "storage"]);
  });

  it("leaves out a reserved word a post carries from before it was refused (docs/design/edge.md#validation)", () => {
    expect(postDocument(post(["adopted", "storage", "docs", "free", "doc"])).tags).toEqual([
      "post",
      "arch",
      "open",
      "storage",
    ]);
  });
});

describe("withStatus: a post document's status tag only moves forward (docs/design/council.md#statuses-and-the-lifecycle-rule, docs/design/search-and-translation.md#keeping-the-index-current)", () => {
  it("moves the status forward and keeps kind and own tags", () => {
    expect(withStatus(["post", "arch", "open", "storage"], "agenda")).toEqual(["post", "arch", "agenda", "storage"]);
    expect(withStatus(["post", "arch", "agenda"], "adopted")).toEqual(["post", "arch", "adopted"]);
  });
  it("never moves it back, and a free post leaves discussion only as a duplicate", () => {
    expect(withStatus(["post", "arch", "adopted"], "agenda")).toEqual(["post", "arch", "adopted"]);
    expect(withStatus(["post", "free", "discussion"], "agenda")).toEqual(["post", "free", "discussion"]);
    expect(withStatus(["post", "free", "discussion"], "duplicate")).toEqual(["post", "free", "duplicate"]);
  });
  it("answers undefined for tags that are not a post document's", () => {
    expect(withStatus(["docs"], "agenda")).toBeUndefined();
    expect(withStatus(["post", "arch"], "agenda")).toBeUndefined();
    expect(withStatus(["post", "arch", "storage"], "agenda")).toBeUndefined();
  });
});
