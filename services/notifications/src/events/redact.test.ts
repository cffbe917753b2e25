import { redactEventData, redactWebhookBody, REDACTED_TEXT } from "./redact.js";

/** What a hidden post's or comment's events say (docs/design/notifications.md#redaction-of-hidden-content). */
describe("redaction of hidden content", () => {
  it("replaces the author's words, keeps ids, links and others' fields, marks it hidden", () => {
    const created = {
      postId: "p_1",
      authorId: "a_1",
      title: "Buy widgets",
      kind: "free",
      status: "open",
      link: "/v1/posts/p_1",
    };
    expect(redactEventData("post.created", created)).toEqual({ ...created, title: REDACTED_TEXT, hidden: true });
    expect(created.title).toBe("Buy widgets"); // a copy
    const edited = {
      postId: "p_1",
      editorId: "a_1",
      revision: 2,
      title: "Buy more",
      tags: ["spam"],
      link: "/v1/posts/p_1",
    };
    expect(redactEventData("post.edited", edited)).toEqual({ ...edited, title: "[hidden]", tags: [], hidden: true });
    const withdrawn = { postId: "p_1", status: "withdrawn", by: "a_1", reason: "see my site", link: "/v1/posts/p_1" };
    expect(redactEventData("post.status_changed", withdrawn).reason).toBe("[hidden]");
    // a councillor's concern is not the hidden author's text; a comment event carries none
    const concern = { postId: "p_1", concernId: "k_1", by: "a_2", reason: "unsafe", link: "/v1/posts/p_1" };
    expect(redactEventData("council.concern_raised", concern)).toEqual({ ...concern, hidden: true });
    const comment = { postId: "p_1", commentId: "c_1", authorId: "a_3", link: "/v1/posts/p_1" };
    expect(redactEventData("comment.created", comment)).toEqual({ ...comment, hidden: true });
    expect(redactEventData("post.created", redactEventData("post.created", created))).toEqual(
      redactEventData("post.created", created),
    );
  });

  it("rewrites a webhook body's data, keeping its type and timestamp", () => {
    const body = JSON.stringify({
      type: "post.created",
      timestamp: "2026-01-01T00:00:00.000Z",
      data: { postId: "p_1", title: "Buy widgets", link: "/v1/posts/p_1" },
    });
    const out = redactWebhookBody(body);
    expect(out).not.toContain("widgets");
    expect(JSON.parse(out)).toEqual({
      type: "post.created",
      timestamp: "2026-01-01T00:00:00.000Z",
      data: { postId: "p_1", title: "[hidden]", link: "/v1/posts/p_1", hidden: true },
    });
    expect(redactWebhookBody("not json")).toBe("not json");
  });
});
