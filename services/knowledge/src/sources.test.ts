import type { forum } from "@aps/proto";
import { postDocument } from "./sources.js";

describe("postDocument", () => {
  const post = (tags: string[], status = "open") =>
    ({ id: "p_1", kind: "arch", title: "T", body: "B", status, tags }) as unknown as forum.Post;

  it("tags a post with post, its kind, its status and its own tags", () => {
    expect(postDocument(post(["storage", "rfc"])).tags).toEqual(["post", "arch", "open", "storage", "rfc"]);
    expect(postDocument(post(["storage"]), "adopted").tags).toEqual(["post", "arch", "adopted", "storage"]);
  });

  it("leaves out a reserved word a post carries from before it was refused (issue 30 rule 10, docs/adr/0162)", () => {
    expect(postDocument(post(["adopted", "storage", "docs", "free", "doc"])).tags).toEqual([
      "post",
      "arch",
      "open",
      "storage",
    ]);
  });
});
